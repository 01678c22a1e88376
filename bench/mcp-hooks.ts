/**
 * Hooks the session's own server answers (`client_hook`, Claude Code's and Codex's `mcp_tool` hooks):
 *   hook-tool-answer: the server's own time to answer a pre-tool hook (an allowed Edit), measured inside
 *     the server (the answer's `_meta`), with 1,000 live reservations of others in the repo and 1,000
 *     unread urgent messages to others, p50; the prompt and stop hooks' beside it;
 *   hook-tool-gap: the real Claude Code against a scripted model making 20 tool calls: the median gap
 *     between its model requests with agent-bus's hooks answered by the server, as ratio to the same run
 *     with no hooks, with command hooks beside it (all three in one run).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { openBus } from '../src/runtime.js';
import { registrationsFor } from '../src/core/roster.js';
import { ANSWER_MS_KEY, HOOK_TOOL } from '../src/mcp/hook-tool.js';
import { claude } from '../test/clients/drivers.js';
import { wiredRepoWith } from '../test/clients/harness.js';
import { CLI, median, NotMeasurableHere, quantile, round, type Workspace } from './util.js';

export interface HookToolFigure {
  value: number | null;
  shown: string;
  details: Record<string, unknown>;
}

const RESERVATIONS = 1_000;
const UNREAD = 1_000;

/** The server's own answer time over `calls` calls of one hook (after `warmup`), in ms. */
async function answerTimes(client: Client, input: Record<string, unknown>, warmup: number, calls: number, check: (text: string) => void): Promise<number[]> {
  const times: number[] = [];
  for (let index = 0; index < warmup + calls; index++) {
    const result = await client.callTool({ name: HOOK_TOOL, arguments: input });
    const text = (result.content as Array<{ text: string }>)[0]?.text ?? '';
    if (result.isError) throw new Error(`${HOOK_TOOL} failed: ${text}`);
    check(text);
    const ms = (result._meta as Record<string, unknown> | undefined)?.[ANSWER_MS_KEY];
    if (typeof ms !== 'number') throw new Error('the server reported no answer time');
    if (index >= warmup) times.push(ms);
  }
  return times;
}

export async function hookToolAnswer(ws: Workspace): Promise<HookToolFigure> {
  const location = await ws.bus('hook-tool-answer');
  const root = join(location.home, 'shop');
  mkdirSync(join(root, '.git'), { recursive: true });
  mkdirSync(join(root, 'src', 'app'), { recursive: true });
  const repo = realpathSync(root);
  const bus = openBus(location.env);
  try {
    // Others' reservations in the repo, and urgent mail to others, none of it the measured session's.
    for (let index = 0; index < 25; index++) await bus.roster.register(registrationsFor(`shop/agent-${index}`, repo, true));
    for (let index = 0; index < RESERVATIONS; index++) {
      await bus.reservations.reserve({ holder: `shop/agent-${index % 25}`, repo: 'shop', repoRoot: repo, paths: [`src/mod-${index}/file-${index}.ts`], sessionBound: false, ttlMs: 4 * 3_600_000 });
    }
    for (let index = 0; index < UNREAD; index++) {
      await bus.mail.send({ from: 'shop/agent-0', to: `shop/agent-${1 + (index % 24)}`, body: `urgent ${index}`, urgent: true });
    }
  } finally {
    await bus.close();
  }
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'serve', '--client', 'claude'],
    env: { ...location.env, CLAUDE_CODE_SESSION_ID: 'bench-session' } as Record<string, string>,
    cwd: repo,
    stderr: 'ignore',
  });
  const client = new Client({ name: 'agent-bus-bench', version: '1.0.0' });
  await client.connect(transport);
  try {
    const base = { session_id: 'bench-session', cwd: repo };
    const edit = { ...base, kind: 'pre-tool', hook_event_name: 'PreToolUse', tool_name: 'Edit', tool_input: JSON.stringify({ file_path: join(repo, 'src/app/main.ts'), old_string: 'a', new_string: 'b' }) };
    // The seed is seen: an Edit of a reserved file is refused.
    const refused = await client.callTool({ name: HOOK_TOOL, arguments: { ...edit, tool_input: JSON.stringify({ file_path: join(repo, 'src/mod-7/file-7.ts') }) } });
    if (!JSON.stringify(refused.content).includes('deny')) throw new Error(`an Edit of a reserved file was not refused: ${JSON.stringify(refused.content)}`);
    const allowed = (text: string): void => {
      if (text !== '{}') throw new Error(`the measured Edit was answered ${text}`);
    };
    const preTool = await answerTimes(client, edit, 50, 500, allowed);
    const prompt = await answerTimes(client, { ...base, kind: 'prompt', hook_event_name: 'UserPromptSubmit' }, 20, 200, allowed);
    const stop = await answerTimes(client, { ...base, kind: 'stop', hook_event_name: 'Stop', stop_hook_active: 'false' }, 20, 200, allowed);
    const p50 = median(preTool);
    return {
      value: round(p50, 3),
      shown: `${p50.toFixed(3)} ms p50, ${quantile(preTool, 0.99).toFixed(3)} ms p99 (prompt ${median(prompt).toFixed(3)} ms, stop ${median(stop).toFixed(3)} ms p50)`,
      details: {
        preToolP50Ms: round(p50, 3),
        preToolP99Ms: round(quantile(preTool, 0.99), 3),
        promptP50Ms: round(median(prompt), 3),
        stopP50Ms: round(median(stop), 3),
        reservations: RESERVATIONS,
        unreadToOthers: UNREAD,
        calls: preTool.length,
      },
    };
  } finally {
    await client.close();
  }
}

const TOOL_CALLS = 20;
const URGENT = 'BENCH-URGENT-MAIL';

/** One `claude -p` run of TOOL_CALLS Read calls against a scripted model: the gaps between its model requests, in ms. */
async function claudeGaps(hooks: 'mcp' | 'command' | 'none'): Promise<number[]> {
  const s = wiredRepoWith({ hooks: hooks === 'none' ? 'command' : hooks }, 'claude');
  try {
    const settingsPath = join(s.repo, '.claude', 'settings.json');
    const settings = JSON.parse(readFileSync(settingsPath, 'utf8')) as Record<string, unknown>;
    // No hooks at all: the same server and settings, the hooks taken out.
    if (hooks === 'none') delete settings.hooks;
    writeFileSync(settingsPath, JSON.stringify(settings, null, 2));
    const file = join(s.repo, 'README.md');
    writeFileSync(file, 'hello\n');
    const machine = { repo: s.repo, home: s.bus.env.HOME as string, dir: s.bus.dir, env: s.bus.env };
    claude.prepare(machine);
    // Urgent mail the first pre-tool hook shows: the hooks are seen to run (and, with none, not to).
    const bus = openBus(s.bus.env);
    try {
      await bus.mail.send({ from: 'human', to: 'shop/claude', body: URGENT, urgent: true });
    } finally {
      await bus.close();
    }
    const arrivals: number[] = [];
    const model = await claude.startModel(({ index }) => {
      arrivals.push(performance.now());
      // Each edit changes the file (an edit that changes nothing is refused before any hook runs).
      const [from, to] = index % 2 === 1 ? ['hello', 'world'] : ['world', 'hello'];
      return index <= TOOL_CALLS ? { edit: { file, old: from, new: to } } : { text: 'done' };
    });
    let requests: string[] = [];
    try {
      const run = await claude.run(machine, model.url, 'edit the readme', {}, { edits: true });
      if (run.code !== 0) throw new Error(`claude exited ${run.code}: ${run.stderr.slice(-400)}`);
      requests = [...model.requests];
    } finally {
      await model.close();
    }
    if (arrivals.length < TOOL_CALLS + 1) throw new Error(`only ${arrivals.length} model requests`);
    const shown = requests.some((request) => request.includes(URGENT));
    if (shown !== (hooks !== 'none')) throw new Error(`with ${hooks} hooks, the urgent mail was ${shown ? '' : 'not '}shown`);
    // The gaps between the requests that follow a tool call: tool, hooks and the client's own work.
    return arrivals.slice(1, TOOL_CALLS + 1).map((at, index) => at - (arrivals[index] as number));
  } finally {
    s.bus.cleanup();
  }
}

export async function hookToolGap(): Promise<HookToolFigure> {
  if (claude.skip) throw new NotMeasurableHere(claude.skip);
  const gaps = { none: [] as number[], mcp: [] as number[], command: [] as number[] };
  // Interleaved, three rounds each: the machine's noise falls on all three alike.
  for (let round = 0; round < 3; round++) {
    for (const kind of ['none', 'mcp', 'command'] as const) gaps[kind].push(...(await claudeGaps(kind)));
  }
  const none = median(gaps.none);
  const mcp = median(gaps.mcp);
  const command = median(gaps.command);
  return {
    value: round(mcp / none),
    shown: `${(mcp / none).toFixed(2)}× (${mcp.toFixed(1)} ms a tool call with hooks the server answers, ${none.toFixed(1)} ms with none; command hooks ${(command / none).toFixed(2)}×, ${command.toFixed(1)} ms)`,
    details: { mcpMedianMs: round(mcp), noneMedianMs: round(none), commandMedianMs: round(command), commandRatio: round(command / none), toolCalls: gaps.none.length },
  };
}
