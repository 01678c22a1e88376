/**
 * The generated opencode plugin under opencode 2's plugin API (its default definition's `setup`),
 * driven with a stand-in context and a stand-in agent-bus: which hooks it takes, the first prompt
 * waiting for the bus's tools, the follow-up turn queued with a message id of opencode 2's form that a
 * retry reuses, and a subagent's session left alone. The real opencode 2 runs it in opencode2.clients.ts.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { FOLLOW_UP_PROMPT } from '../../src/clients/opencode/plugin.js';
import { ROOT, runCli, type TempBus, withTempBus } from '../helpers/bus-env.js';
import { agentBusOnPath } from '../helpers/on-path.js';
import { pathWithoutAgentBus } from '../helpers/clean-path.js';
import { waitUntil } from '../helpers/wait.js';

const FAKE_BIN = join(ROOT, 'test', 'helpers', 'fake-hook-bin.mjs');
const ORIGINAL_PATH = pathWithoutAgentBus();

type Handler = (event: Record<string, unknown>) => Promise<void> | void;
type Prompted = { sessionID: string; id: string; text: string; delivery: string };

/** An async stream of opencode 2 events the test pushes into. */
function eventStream(): { push(event: Record<string, unknown>): void; iterable: AsyncIterable<Record<string, unknown>> } {
  const queued: Array<Record<string, unknown>> = [];
  let wake: (() => void) | null = null;
  return {
    push(event) {
      queued.push(event);
      wake?.();
    },
    iterable: {
      async *[Symbol.asyncIterator]() {
        for (;;) {
          while (queued.length > 0) yield queued.shift() as Record<string, unknown>;
          await new Promise<void>((resolve) => (wake = resolve));
        }
      },
    },
  };
}

interface V2Harness {
  hooks: Map<string, Handler>;
  prompts: Prompted[];
  attempts: Prompted[];
  events: ReturnType<typeof eventStream>;
  toolLists: () => number;
  calls(): Array<{ subcommand: string; args: string[] }>;
  cleanup: () => void;
}

async function harness(bus: TempBus, script: Record<string, unknown>, options: { toolsAfter?: number; failPrompts?: number; parents?: Record<string, string>; argv?: string[] } = {}): Promise<V2Harness> {
  const repo = join(bus.dir, `oc2-${Math.random().toString(36).slice(2)}`);
  mkdirSync(join(repo, '.git'), { recursive: true });
  assert.equal(runCli(['init', '--clients', 'opencode'], { env: bus.env, cwd: repo }).code, 0);
  process.env.PATH = agentBusOnPath(join(bus.dir, `on-path-${Math.random().toString(36).slice(2)}`), ORIGINAL_PATH, FAKE_BIN).PATH;
  const scriptPath = join(bus.dir, `script-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(scriptPath, JSON.stringify(script));
  writeFileSync(`${scriptPath}.log`, '');
  process.env.FAKE_SCRIPT = scriptPath;
  process.env.FAKE_LOG = `${scriptPath}.log`;
  process.env.AGENT_BUS_NATIVE_WAKE = '0'; // No watcher: it would outlive the test.
  // The plugin reads opencode's command line as it loads: the process it runs in, as the test says.
  const argv = process.argv;
  if (options.argv) process.argv = [argv[0] as string, argv[1] as string, ...options.argv];
  const module = await (async () => {
    try {
      return (await import(`${join(repo, '.opencode', 'plugins', 'agent-bus.js')}?v=${Math.random()}`)) as { default: { id: string; setup: (ctx: unknown) => Promise<() => void> } };
    } finally {
      process.argv = argv;
    }
  })();
  assert.equal(module.default.id, 'agent-bus');
  const hooks = new Map<string, Handler>();
  const prompts: Prompted[] = [];
  const attempts: Prompted[] = [];
  const events = eventStream();
  let listed = 0;
  let failures = options.failPrompts ?? 0;
  const ctx = {
    location: { directory: repo },
    session: {
      hook: async (name: string, handler: Handler) => void hooks.set(`session.${name}`, handler),
      get: async ({ sessionID }: { sessionID: string }) => ({ id: sessionID, parentID: options.parents?.[sessionID] }),
      prompt: async (input: Prompted) => {
        attempts.push(input);
        if (failures-- > 0) throw new Error('the server is busy');
        prompts.push(input);
        return { id: input.id, sessionID: input.sessionID };
      },
    },
    tool: {
      hook: async (name: string, handler: Handler) => void hooks.set(`tool.${name}`, handler),
      list: async () => (++listed > (options.toolsAfter ?? 0) ? [{ name: 'agent-bus_read_inbox', options: { codemode: false } }] : [{ name: 'edit' }]),
    },
    shell: { hook: async (name: string, handler: Handler) => void hooks.set(`shell.${name}`, handler) },
    event: { subscribe: () => events.iterable },
  };
  const cleanup = await module.default.setup(ctx);
  return {
    hooks,
    prompts,
    attempts,
    events,
    toolLists: () => listed,
    calls: () =>
      readFileSync(`${scriptPath}.log`, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { subcommand: string; args: string[] }),
    cleanup: () => {
      cleanup();
      delete process.env.AGENT_BUS_NATIVE_WAKE;
    },
  };
}

test("opencode 2: the plugin takes the session's prompt and context hooks, the tool hook and the shell's; mail goes into the context's system parts; the first prompt waits for the bus's tools", withTempBus(async (bus) => {
  const h = await harness(bus, { 'hook-user-prompt': ['[agent-bus] 1 new message'], 'hook-pre-tool': ['{"decision":"deny","reason":"[agent-bus] src/a.ts is reserved by shop/claude"}'] }, { toolsAfter: 3 });
  try {
    assert.deepEqual([...h.hooks.keys()].sort(), ['session.context', 'session.prompt', 'shell.create.before', 'tool.execute.before']);
    await h.hooks.get('session.prompt')?.({ sessionID: 's-1', prompt: { text: 'hi' }, delivery: 'steer' });
    assert.ok(h.toolLists() >= 4, 'the prompt waited until the tool list named one of the bus');
    const system: Array<{ type: string; text: string }> = [{ type: 'text', text: 'base' }];
    await h.hooks.get('session.context')?.({ sessionID: 's-1', system, messages: [], tools: {} });
    assert.deepEqual(system.at(-1), { type: 'text', text: '[agent-bus] 1 new message' });
    await assert.rejects(async () => h.hooks.get('tool.execute.before')?.({ tool: 'edit', sessionID: 's-1', id: 'call_1', input: { path: 'src/a.ts' } }), /reserved by shop\/claude/);
    const env: Record<string, string> = {};
    await h.hooks.get('shell.create.before')?.({ command: 'git commit', env });
    assert.equal(env.AGENT_BUS_CLIENT, 'opencode');
  } finally {
    h.cleanup();
  }
}));

test('opencode 2: mail waiting at the end of a turn queues one follow-up prompt, its id of opencode 2 form and the same on a retry; a subagent is left alone', withTempBus(async (bus) => {
  const reason = { decision: 'block', reason: 'Pending messages from peers: handle them before stopping' };
  const h = await harness(bus, { 'hook-stop': [JSON.stringify(reason)] }, { failPrompts: 1, parents: { child: 's-1' } });
  try {
    h.events.push({ type: 'session.execution.started', data: { sessionID: 's-1' } });
    h.events.push({ type: 'session.execution.succeeded', data: { sessionID: 's-1' } });
    await waitUntil(() => h.prompts.length === 1, () => `a follow-up prompt (${JSON.stringify(h.attempts)})`, 10_000);
    const [prompted] = h.prompts as [Prompted];
    assert.deepEqual({ ...prompted, id: '' }, { sessionID: 's-1', id: '', text: FOLLOW_UP_PROMPT, delivery: 'queue' });
    assert.match(prompted.id, /^msg_[0-9a-f]{12}[0-9A-Za-z]{14}$/);
    assert.deepEqual(h.attempts.map((attempt) => attempt.id), [prompted.id, prompted.id], 'the retry reused the id: opencode 2 returns the first message rather than a second');
    assert.ok(h.calls().every((call) => call.subcommand !== 'hook-stop' || call.args.includes('--peek')), 'at the end of the turn the stop hook only looks');
    h.events.push({ type: 'session.execution.succeeded', data: { sessionID: 'child' } });
    h.events.push({ type: 'session.deleted', data: { sessionID: 's-1' } });
    await waitUntil(() => h.calls().some((call) => call.subcommand === 'hook-session-end'), 'the session end, from session.deleted', 10_000);
    assert.equal(h.calls().filter((call) => call.subcommand === 'hook-stop').length, 1, "a subagent's session runs no stop hook");
    assert.equal(h.prompts.length, 1);
  } finally {
    h.cleanup();
  }
}));

test("a one-shot `opencode run` (the plugin in the run's own process, as 1.x runs it) queues no follow-up at its idle and takes no mail there; a `serve --stdio` started by no run does", withTempBus(async (bus) => {
  const reason = { decision: 'block', reason: 'Pending messages from peers: handle them before stopping' };
  for (const [argv, queued] of [[['run', '--format', 'json', 'do the task'], 0], [['serve', '--stdio', '--port', '0'], 1]] as const) {
    const h = await harness(bus, { 'hook-stop': [JSON.stringify(reason)] }, { argv: [...argv] });
    try {
      h.events.push({ type: 'session.execution.started', data: { sessionID: 's-1' } });
      h.events.push({ type: 'session.execution.succeeded', data: { sessionID: 's-1' } });
      // A later event through the same stream: once the plugin has handled it, the idle above is done.
      h.events.push({ type: 'session.deleted', data: { sessionID: 's-1' } });
      await waitUntil(() => h.calls().some((call) => call.subcommand === 'hook-session-end'), 'the session end, after the idle', 10_000);
      assert.equal(h.prompts.length, queued, `${argv.join(' ')}: ${JSON.stringify(h.prompts)}`);
      const stops = h.calls().filter((call) => call.subcommand === 'hook-stop');
      assert.equal(stops.length, queued, `${argv.join(' ')}: the stop hook looked only where a follow-up may come`);
      assert.ok(stops.every((call) => call.args.includes('--peek')), 'nothing was taken at the idle');
    } finally {
      h.cleanup();
    }
  }
}));
