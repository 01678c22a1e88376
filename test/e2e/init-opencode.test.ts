/** `agent-bus init --clients opencode`: the merged config (comments kept) and the generated plugin, driven with a fake opencode. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parse } from 'jsonc-parser';
import { FOLLOW_UP_PROMPT } from '../../src/clients/opencode/plugin.js';
import { ROOT, json, readAudit, runCli, type TempBus, withTempBus } from '../helpers/bus-env.js';
import { agentEnv } from '../helpers/agents.js';
import { agentBusOnPath } from '../helpers/on-path.js';
import { sleep, waitUntil } from '../helpers/wait.js';
import { pathWithoutAgentBus } from '../helpers/clean-path.js';

/** This process's PATH as the suite started it: the plugin runs `agent-bus` from its process's PATH, which each test sets. */
const ORIGINAL_PATH = pathWithoutAgentBus();
/** PATH with `agent-bus` first as `target` (the built CLI unless said), for the plugin this process loads. */
const pathWith = (bus: TempBus, target?: string): string => agentBusOnPath(join(bus.dir, `on-path-${Math.random().toString(36).slice(2)}`), ORIGINAL_PATH, target).PATH;

const FAKE_BIN = join(ROOT, 'test', 'helpers', 'fake-hook-bin.mjs');
const LOGGING_BIN = join(ROOT, 'test', 'helpers', 'logging-bin.mjs');

type Hooks = {
  'chat.message': (input: { sessionID: string }) => Promise<void>;
  'tool.execute.before': (input: { sessionID: string; tool: string }, output?: { args: Record<string, unknown> }) => Promise<void>;
  'experimental.chat.system.transform': (input: { sessionID: string }, output: { system: string[] }) => Promise<void>;
  event: (input: { event: { type: string; properties?: Record<string, unknown> } }) => Promise<void>;
};

function repo(bus: TempBus, name: string): string {
  const path = join(bus.dir, name);
  mkdirSync(join(path, '.git'), { recursive: true });
  return path;
}

interface Harness {
  hooks: Hooks;
  prompts: Array<{ id: string; text: string }>;
  calls(): Array<{ subcommand: string; args: string[]; name: string; channels?: string; defaultChannels?: string; watchClientPid?: string; cwd: string }>;
}

async function harness(bus: TempBus, script: Record<string, unknown>, timeoutMs?: number, parents: Record<string, string> = {}): Promise<Harness> {
  const path = repo(bus, `oc-${Math.random().toString(36).slice(2)}`);
  assert.equal(runCli(['init', '--clients', 'opencode'], { env: bus.env, cwd: path }).code, 0);
  // The plugin runs `agent-bus` from PATH: here, the stand-in.
  process.env.PATH = pathWith(bus, FAKE_BIN);
  const scriptPath = join(bus.dir, `script-${Math.random().toString(36).slice(2)}.json`);
  const log = `${scriptPath}.log`;
  writeFileSync(scriptPath, JSON.stringify(script));
  writeFileSync(log, '');
  process.env.FAKE_SCRIPT = scriptPath;
  process.env.FAKE_LOG = log;
  if (timeoutMs === undefined) delete process.env.AGENT_BUS_HOOK_TIMEOUT_MS;
  else process.env.AGENT_BUS_HOOK_TIMEOUT_MS = String(timeoutMs);
  const module = (await import(`${join(path, '.opencode', 'plugins', 'agent-bus.js')}?v=${Math.random()}`)) as { default: { server: (input: unknown) => Promise<Hooks> } };
  const prompts: Array<{ id: string; text: string }> = [];
  const client = {
    session: {
      get: async ({ path: where }: { path: { id: string } }) => ({ data: { id: where.id, parentID: parents[where.id] } }),
      prompt: async ({ path: where, body }: { path: { id: string }; body: { parts: Array<{ text: string }> } }) => {
        prompts.push({ id: where.id, text: body.parts[0]?.text ?? '' });
      },
    },
  };
  const hooks = await module.default.server({ client, directory: path });
  const calls = () =>
    readFileSync(log, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { subcommand: string; args: string[]; name: string; channels?: string; defaultChannels?: string; watchClientPid?: string; cwd: string });
  return { hooks, prompts, calls };
}

async function request(hooks: Hooks, sessionID = 's-1'): Promise<string[]> {
  const output = { system: ['base'] };
  await hooks['experimental.chat.system.transform']({ sessionID }, output);
  return output.system;
}

test('opencode.json is merged with its comments kept; the plugin is marked and valid', withTempBus((bus) => {
  const path = repo(bus, 'web');
  mkdirSync(join(path, '.opencode'));
  const mine = '{\n  // my model\n  "model": "x/y",\n  "mcp": {\n    /* another server */\n    "other": { "type": "local", "command": ["o"] }\n  },\n}\n';
  writeFileSync(join(path, '.opencode', 'opencode.json'), mine);
  assert.equal(runCli(['init', '--clients', 'opencode'], { env: bus.env, cwd: path }).code, 0);
  const merged = readFileSync(join(path, '.opencode', 'opencode.json'), 'utf8');
  assert.ok(merged.includes('// my model') && merged.includes('/* another server */'), merged);
  const value = parse(merged) as { model: string; mcp: Record<string, { command: string[]; environment?: Record<string, string>; enabled?: boolean }> };
  assert.equal(value.model, 'x/y');
  assert.deepEqual(value.mcp.other?.command, ['o']);
  assert.deepEqual(value.mcp['agent-bus']?.command, ['agent-bus', 'serve', '--client', 'opencode']);
  assert.equal(value.mcp['agent-bus']?.environment, undefined, 'no agent named, no repo path: the server finds them from its folder');
  const pluginPath = join(path, '.opencode', 'plugins', 'agent-bus.js');
  assert.ok(readFileSync(pluginPath, 'utf8').startsWith('// Managed by `agent-bus init`'));
  assert.equal(spawnSync(process.execPath, ['--check', pluginPath]).status, 0);
  assert.doesNotMatch(readFileSync(pluginPath, 'utf8'), /AGENT_BUS_NAME|const NAME/, 'the plugin names no agent');
  assert.match(runCli(['init', '--clients', 'opencode'], { env: bus.env, cwd: path }).stdout, /nothing to do/);
  writeFileSync(pluginPath, '// my own plugin\n');
  assert.match(runCli(['init', '--clients', 'opencode'], { env: bus.env, cwd: path }).stdout, /hand-written agent-bus entry left alone/);
  assert.ok(existsSync(pluginPath) && readFileSync(pluginPath, 'utf8') === '// my own plugin\n');
}));

test('each hook runs at its moment: session start once, the prompt hook once per turn (its text repeated), pre-tool before each tool', withTempBus(async (bus) => {
  const { hooks, calls } = await harness(bus, {
    'hook-session-start': ['[agent-bus] start'],
    'hook-user-prompt': ['[agent-bus] first', '[agent-bus] second'],
    'hook-pre-tool': ['[agent-bus] critical', ''],
    'hook-stop': [''],
  });
  await hooks['chat.message']({ sessionID: 's-1' });
  assert.deepEqual(await request(hooks), ['base', '[agent-bus] start\n[agent-bus] first'], 'the title request');
  assert.deepEqual(await request(hooks), ['base', '[agent-bus] start\n[agent-bus] first'], 'repeated for the rest of the turn');
  await hooks['tool.execute.before']({ sessionID: 's-1', tool: 'bash' });
  assert.deepEqual(await request(hooks), ['base', '[agent-bus] start\n[agent-bus] first\n[agent-bus] critical'], 'critical notices follow the tool call');
  assert.deepEqual(await request(hooks), ['base', '[agent-bus] start\n[agent-bus] first'], 'shown once per tool call');
  await hooks['tool.execute.before']({ sessionID: 's-1', tool: 'bash' });
  assert.deepEqual(await request(hooks), ['base', '[agent-bus] start\n[agent-bus] first']);
  await hooks['chat.message']({ sessionID: 's-1' });
  assert.deepEqual(await request(hooks), ['base', '[agent-bus] second'], 'a new turn: the prompt hook again, session start not');
  await hooks.event({ event: { type: 'session.idle', properties: { sessionID: 's-1' } } });
  const counts = (subcommand: string): number => calls().filter((call) => call.subcommand === subcommand).length;
  assert.deepEqual([counts('hook-session-start'), counts('hook-user-prompt'), counts('hook-pre-tool'), counts('hook-stop')], [1, 2, 2, 1]);
  const first = calls()[0];
  assert.equal(first?.subcommand, 'hook-session-start');
  assert.equal(first?.name, undefined, 'no agent named: the hook finds it from its client and folder');
  assert.deepEqual(first?.args, ['--client', 'opencode']);
  assert.ok(calls().every((call) => call.cwd === calls()[0]?.cwd && call.cwd.includes('/oc-')), 'every hook runs in the session\'s folder');
  assert.ok(calls().every((call) => call.defaultChannels === 'brain,amygdala'), "every hook gets the repo's default subscriptions");
  assert.ok(calls().every((call) => call.channels === undefined), 'and no launch value of its own making');
}));

test('an AGENT_BUS_CHANNELS opencode was launched with reaches every hook beside the repo default, so it wins', withTempBus(async (bus) => {
  process.env.AGENT_BUS_CHANNELS = 'ops';
  try {
    const { hooks, calls } = await harness(bus, { 'hook-session-start': [''], 'hook-user-prompt': [''], 'hook-pre-tool': [''], 'hook-stop': [''] });
    await hooks['chat.message']({ sessionID: 's-1' });
    await request(hooks);
    await hooks['tool.execute.before']({ sessionID: 's-1', tool: 'bash' });
    assert.ok(calls().length >= 3);
    assert.ok(calls().every((call) => call.channels === 'ops' && call.defaultChannels === 'brain,amygdala'), JSON.stringify(calls()));
  } finally {
    delete process.env.AGENT_BUS_CHANNELS;
  }
}));

test('subscriptions edited in the plugin are kept when init regenerates it', withTempBus((bus) => {
  const path = repo(bus, 'edited');
  assert.equal(runCli(['init', '--clients', 'opencode'], { env: bus.env, cwd: path }).code, 0);
  const pluginPath = join(path, '.opencode', 'plugins', 'agent-bus.js');
  writeFileSync(pluginPath, readFileSync(pluginPath, 'utf8').replace('const CHANNELS = "brain,amygdala";', 'const CHANNELS = "deploy,*";'));
  const rerun = runCli(['init', '--clients', 'opencode', '--bin-path', '/opt/agent-bus'], { env: bus.env, cwd: path });
  assert.equal(rerun.code, 0);
  const regenerated = readFileSync(pluginPath, 'utf8');
  assert.match(regenerated, /^const CHANNELS = "deploy,\*";$/m);
  assert.match(regenerated, /^const BIN = "agent-bus";$/m, 'a path of this machine never goes in the committed plugin');
  assert.match(rerun.stdout, /opencode reads no personal file in the repo, so its committed files run `agent-bus` from PATH and \/opt\/agent-bus is written nowhere/);
}));

test('mail waiting when the session goes idle starts one follow-up turn, whose first model request takes it; subagents are left alone', withTempBus(async (bus) => {
  const reason = { decision: 'block', reason: 'Pending messages from peers — handle them before stopping:\n- from human: x' };
  const { hooks, prompts, calls } = await harness(bus, { 'hook-user-prompt': [''], 'hook-stop': [JSON.stringify(reason), '', JSON.stringify(reason)] }, undefined, { child: 's-1' });
  const stops = () => calls().filter((call) => call.subcommand === 'hook-stop');
  await hooks.event({ event: { type: 'session.idle', properties: { sessionID: 's-1' } } });
  await hooks.event({ event: { type: 'session.status', properties: { sessionID: 's-1', status: { type: 'idle' } } } });
  assert.equal(stops().length, 2);
  assert.ok(stops().every((call) => call.args.includes('--peek')), 'at idle the stop hook only looks: the turn that would show the mail may never reach the model');
  assert.deepEqual(prompts, [{ id: 's-1', text: FOLLOW_UP_PROMPT }], 'the follow-up prompt carries no mail');
  await hooks['chat.message']({ sessionID: 's-1' });
  assert.deepEqual(await request(hooks), ['base', reason.reason], "the follow-up turn's first request takes the mail into its system prompt");
  assert.deepEqual(stops().at(-1)?.args, ['--client', 'opencode'], 'by the stop hook itself, not a peek');
  assert.deepEqual(await request(hooks), ['base', reason.reason], 'repeated for the rest of the turn');
  assert.equal(stops().length, 3, 'and taken once');
  await hooks.event({ event: { type: 'session.idle', properties: { sessionID: 'child' } } });
  assert.equal(stops().length, 3, 'a subagent session runs no hook');
  await hooks.event({ event: { type: 'session.updated', properties: { sessionID: 's-1' } } });
  assert.equal(stops().length, 3);
}));

test('a hanging hook never holds a model request, and a stuck one is not spawned again', withTempBus(async (bus) => {
  const slow = await harness(bus, { 'hook-user-prompt': ['[agent-bus] late'], delayMs: { 'hook-user-prompt': 2000 } }, 300);
  const started = Date.now();
  assert.deepEqual(await request(slow.hooks), ['base']);
  assert.ok(Date.now() - started < 1500, 'the request went ahead at the timeout');
  const stuck = await harness(bus, { 'hook-user-prompt': [''], 'hook-stop': [''], delayMs: { 'hook-user-prompt': 4000 } }, 1000);
  const begun = Date.now();
  for (let index = 0; index < 3; index++) {
    await stuck.hooks['chat.message']({ sessionID: 's-1' });
    await request(stuck.hooks);
  }
  await request(stuck.hooks, 's-2');
  assert.ok(Date.now() - begun < 4500);
  assert.equal(stuck.calls().filter((call) => call.subcommand === 'hook-user-prompt').length, 1, 'one stuck hook, never restarted');
}));

test('an idle session with nothing to do is watched; the mail the watcher finds starts a turn', withTempBus(async (bus) => {
  const said = 'agent-bus: new mail\n[agent-bus] 1 new message(s) since last turn:\n- from human: ping';
  const { hooks, prompts, calls } = await harness(bus, { 'hook-stop': [''], 'hook-watch': [''], stderr: { 'hook-watch': said }, exit: { 'hook-watch': 10 }, delayMs: { 'hook-watch': 300 } });
  await hooks.event({ event: { type: 'session.idle', properties: { sessionID: 's-1' } } });
  await waitUntil(() => prompts.length > 0, 'the watcher to start a turn');
  const watchers = calls().filter((call) => call.subcommand === 'hook-watch');
  assert.ok(watchers.length > 0, 'the watcher ran');
  // It waits as long as opencode (here, this process) runs, even if opencode is gone before it looks.
  assert.ok(watchers.every((call) => call.watchClientPid === String(process.pid)), JSON.stringify(watchers));
  assert.ok(calls().filter((call) => call.subcommand !== 'hook-watch').every((call) => call.watchClientPid === undefined), 'the hooks are not told it');
  assert.deepEqual(prompts, [{ id: 's-1', text: said }]);
}));

test('mail the watcher took just as the session turned busy is handed over at its next idle', withTempBus(async (bus) => {
  const said = 'agent-bus: new mail\n- from human: late';
  const { hooks, prompts } = await harness(bus, { 'hook-stop': [''], 'hook-watch': [''], stderr: { 'hook-watch': said }, exit: { 'hook-watch': 10 }, delayMs: { 'hook-watch': 400 } });
  await hooks.event({ event: { type: 'session.idle', properties: { sessionID: 's-1' } } });
  await hooks['chat.message']({ sessionID: 's-1' }); // The user typed before the watcher answered.
  // Nothing says when the plugin has had the watcher's answer: a pause past its 400 ms.
  await sleep(1200);
  assert.deepEqual(prompts, [], 'no turn is started into a busy session');
  await hooks.event({ event: { type: 'session.idle', properties: { sessionID: 's-1' } } });
  assert.deepEqual(prompts, [{ id: 's-1', text: said }]);
}));

test('a watcher that finds nothing (exit 0) starts no turn', withTempBus(async (bus) => {
  const { hooks, prompts, calls } = await harness(bus, { 'hook-stop': [''], 'hook-watch': [''] });
  await hooks.event({ event: { type: 'session.idle', properties: { sessionID: 's-1' } } });
  // Nothing says when the plugin has had the watcher's answer: a pause.
  await sleep(800);
  assert.equal(calls().filter((call) => call.subcommand === 'hook-watch').length, 1);
  assert.deepEqual(prompts, []);
}));

test('a real hook the plugin stopped waiting for finds its output closed: the mail it took is given back, its receipt still sent', withTempBus(async (bus) => {
  const path = repo(bus, 'late');
  // The real agent-bus, through a wrapper that notes when each hook has ended.
  assert.equal(runCli(['init', '--clients', 'opencode'], { env: bus.env, cwd: path }).code, 0);
  const agent = agentEnv(bus, 'late/opencode', path);
  assert.equal(runCli(['send', 'not shown in time', '--to', 'late/opencode'], { env: bus.env }).code, 0);
  const log = join(bus.dir, 'hooks.log');
  writeFileSync(log, '');
  const saved = { ...process.env };
  // The plugin runs hooks with its own process's environment: this bus, and a time no hook can start in.
  Object.assign(process.env, bus.env, { AGENT_BUS_HOOK_TIMEOUT_MS: '1', LOGGING_BIN_LOG: log, PATH: pathWith(bus, LOGGING_BIN) });
  try {
    const module = (await import(`${join(path, '.opencode', 'plugins', 'agent-bus.js')}?v=${Math.random()}`)) as { default: { server: (input: unknown) => Promise<Hooks> } };
    const client = { session: { get: async () => ({ data: {} }), prompt: async () => undefined } };
    const hooks = await module.default.server({ client, directory: path });
    await hooks['chat.message']({ sessionID: 's-1' });
    assert.deepEqual(await request(hooks), ['base'], 'the request went ahead without the hook');
    // The hook ran on after the plugin gave up: it took the mail, could not print it, gave it back.
    await waitUntil(() => readFileSync(log, 'utf8').includes('"hook-user-prompt"'), 'the hook to end', 20_000, 50);
    assert.match(readFileSync(log, 'utf8'), /"args":\["hook-user-prompt","--client","opencode"\],"code":0/, 'the hook ran to its end, exit 0');
  } finally {
    for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
    Object.assign(process.env, saved);
  }
  const [receipt] = bus.rows<{ read_at: string | null; delivered_at: string | null; lease_until: string | null }>("SELECT read_at, delivered_at, lease_until FROM messages WHERE body = 'not shown in time'");
  assert.deepEqual(receipt, { read_at: null, delivered_at: null, lease_until: null }, 'not delivered, and free for the next turn');
  const shown = runCli(['hook-user-prompt', '--client', 'opencode'], { env: agent, input: '{}' });
  assert.match(shown.stdout, /not shown in time/);
}));

test("the plugin hands the pre-tool hook the tool call: an edit of a file another agent holds is refused by throwing the reason, and goes ahead once released", withTempBus(async (bus) => {
  const path = repo(bus, 'guarded');
  mkdirSync(join(path, 'src'));
  assert.equal(runCli(['init', '--clients', 'opencode'], { env: bus.env, cwd: path }).code, 0);
  const held = runCli(['reserve', 'src/auth.ts', '--reason', 'rewriting login', '--name', 'guarded/claude'], { env: bus.env, cwd: path });
  assert.equal(held.code, 0, held.stderr);
  // The plugin's hooks run with opencode's environment: this test's bus.
  const saved = { ...process.env };
  Object.assign(process.env, bus.env, { PATH: pathWith(bus) });
  delete process.env.AGENT_BUS_HOOK_TIMEOUT_MS;
  try {
    const module = (await import(`${join(path, '.opencode', 'plugins', 'agent-bus.js')}?v=${Math.random()}`)) as { default: { server: (input: unknown) => Promise<Hooks> } };
    const hooks = await module.default.server({ client: { session: {} }, directory: path });
    await assert.rejects(
      hooks['tool.execute.before']({ sessionID: 's-1', tool: 'edit' }, { args: { filePath: join(path, 'src', 'auth.ts'), oldString: 'a', newString: 'b' } }),
      /^Error: \[agent-bus\] src\/auth\.ts is reserved by guarded\/claude for another \d+ (?:s|min|h) \(rewriting login\): this edit was refused/,
    );
    const patch = ['*** Begin Patch', '*** Update File: src/auth.ts', '@@', '-a', '+b', '*** End Patch'].join('\n');
    await assert.rejects(hooks['tool.execute.before']({ sessionID: 's-1', tool: 'apply_patch' }, { args: { patchText: patch } }), /reserved by guarded\/claude/);
    await hooks['tool.execute.before']({ sessionID: 's-1', tool: 'write' }, { args: { filePath: 'src/free.ts', content: 'x' } });
    await hooks['tool.execute.before']({ sessionID: 's-1', tool: 'read' }, { args: { filePath: 'src/auth.ts' } });
    assert.equal(readAudit(bus.audit).filter((row) => row.op === 'deny').length, 2, 'each refusal audited');
    assert.equal(runCli(['release', '--all', '--name', 'guarded/claude'], { env: bus.env, cwd: path }).code, 0);
    await hooks['tool.execute.before']({ sessionID: 's-1', tool: 'edit' }, { args: { filePath: join(path, 'src', 'auth.ts'), oldString: 'a', newString: 'b' } });
  } finally {
    for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
    Object.assign(process.env, saved);
  }
}));

test("the plugin reports presence from opencode's events: a turn working, a permission asked waiting and answered working, idle at session.idle, ended at session.deleted", withTempBus(async (bus) => {
  const path = repo(bus, 'present');
  assert.equal(runCli(['init', '--clients', 'opencode'], { env: bus.env, cwd: path }).code, 0);
  const state = (): string | undefined => json<Array<{ name: string; state: string }>>(runCli(['agents', '--json'], { env: bus.env })).find((row) => row.name === 'present/opencode')?.state;
  const saved = { ...process.env };
  // No watcher at idle: it would outlive the test.
  Object.assign(process.env, bus.env, { AGENT_BUS_NATIVE_WAKE: '0', PATH: pathWith(bus) });
  delete process.env.AGENT_BUS_HOOK_TIMEOUT_MS;
  try {
    const module = (await import(`${join(path, '.opencode', 'plugins', 'agent-bus.js')}?v=${Math.random()}`)) as { default: { server: (input: unknown) => Promise<Hooks> } };
    const client = { session: { get: async () => ({ data: {} }), prompt: async () => undefined } };
    const hooks = await module.default.server({ client, directory: path });
    await hooks['chat.message']({ sessionID: 's-1' });
    await request(hooks);
    assert.equal(state(), 'working');
    // opencode's permission events, as its bus publishes them.
    await hooks.event({ event: { type: 'permission.asked', properties: { id: 'per_1', sessionID: 's-1', permission: 'bash', patterns: ['make'] } } });
    assert.equal(state(), 'waiting');
    await hooks.event({ event: { type: 'permission.replied', properties: { sessionID: 's-1', requestID: 'per_1', reply: 'once' } } });
    assert.equal(state(), 'working');
    await hooks.event({ event: { type: 'session.idle', properties: { sessionID: 's-1' } } });
    assert.equal(state(), 'idle', 'nothing to act on: it stops');
    await hooks.event({ event: { type: 'session.deleted', properties: { info: { id: 's-1', title: 'x' } } } });
    assert.equal(state(), 'ended');
    await hooks.event({ event: { type: 'constructor', properties: { sessionID: 's-1' } } });
    assert.equal(state(), 'ended', 'an event the plugin does not know changes nothing');
  } finally {
    for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
    Object.assign(process.env, saved);
  }
}));

test("the shell tool's commands are known as opencode's by the client, not a name: the commit guard finds the agent from it", withTempBus(async (bus) => {
  const path = join(bus.dir, 'committing');
  mkdirSync(join(path, 'src'), { recursive: true });
  assert.equal(spawnSync('git', ['init', '-q', path]).status, 0);
  assert.equal(runCli(['init', '--clients', 'opencode'], { env: bus.env, cwd: path }).code, 0);
  const module = (await import(`${join(path, '.opencode', 'plugins', 'agent-bus.js')}?v=${Math.random()}`)) as { default: { server: (input: unknown) => Promise<Hooks & { 'shell.env': (input: unknown, output: { env: Record<string, string> }) => Promise<void> }> } };
  const hooks = await module.default.server({ client: { session: {} }, directory: path });
  const output = { env: {} as Record<string, string> };
  await hooks['shell.env']({}, output);
  assert.deepEqual(output.env, { AGENT_BUS_CLIENT: 'opencode' });
  // opencode's own reservation, and a commit of that file from its shell tool: let through; from a person's shell: refused.
  assert.equal(runCli(['reserve', 'src/app.ts', '--name', 'committing/opencode'], { env: bus.env, cwd: path }).code, 0);
  writeFileSync(join(path, 'src', 'app.ts'), 'x');
  assert.equal(spawnSync('git', ['add', 'src/app.ts'], { cwd: path }).status, 0);
  const check = (env: NodeJS.ProcessEnv) => runCli(['guard', 'check'], { env: { ...bus.env, ...env }, cwd: path });
  const fromOpencode = check(output.env);
  assert.equal(fromOpencode.code, 0, fromOpencode.stderr);
  const fromPerson = check({});
  assert.equal(fromPerson.code, 1);
  assert.match(fromPerson.stderr, /src\/app\.ts is reserved by committing\/opencode/);
}));
