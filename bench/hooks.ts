/**
 * The hooks' start-up: each runs as a fresh process at every turn of every agent, with the payload a
 * client writes on stdin. With an empty inbox the goal is the floor's (floorArgs): at most
 * FLOOR_GOAL_MS above a bare Node.js that opens the same database with the same driver, timed in the
 * same rounds. With ten messages, and on PostgreSQL (where there is no floor), the figure is a ratio to
 * a bare `node -e 0` in the same run.
 *
 * What a hook costs above the floor, measured part by part (docs/development.md, "A hook's start-up"):
 * the launcher (dist/bin/cli.cjs, compiled with no cache: it picks the command's bundle, and the hub's
 * bundle where a hub is set), the command's bundle (read, its code cache read and deserialized, its
 * modules' top levels run), and the bus's own work after the floor's (the settings, the identity and
 * its repo, the session's row, the queries of the hook's moment, the answer in the client's dialect).
 */
import { spawnSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { join } from 'node:path';
import { openBus } from '../src/runtime.js';
import { registrationsFor } from '../src/core/roster.js';
import { sqliteDriverName } from '../src/store/sqlite/driver.js';
import { CLI, median, ROOT, round, type BusLocation, type Engine, type Workspace } from './util.js';

function timed(args: string[], env: NodeJS.ProcessEnv, cwd: string, input: string): number {
  const started = performance.now();
  const result = spawnSync(process.execPath, args, { env, cwd, input, stdio: ['pipe', 'pipe', 'pipe'], timeout: 30_000 });
  const elapsed = performance.now() - started;
  if (result.status !== 0) throw new Error(`node ${args.join(' ')} exited ${result.status}: ${result.stderr.toString()}`);
  return elapsed;
}

const FLOOR_SCRIPT = join(ROOT, 'bench', 'sqlite-floor.cjs');

/**
 * The floor beside a hook on this bus (bench/sqlite-floor.cjs): a process that opens the SQLite file
 * through the driver the hooks use here and reads a row, with nothing of agent-bus loaded. Null where
 * the bus is not a SQLite file.
 */
export function floorArgs(location: BusLocation): string[] | null {
  return location.engine === 'sqlite' ? [FLOOR_SCRIPT, sqliteDriverName(location.env.AGENT_BUS_SQLITE_DRIVER ?? ''), location.db] : null;
}

/**
 * The bus held open by this process while a hook is timed, as the session's MCP server holds it through
 * a real session. With no other connection each hook would be the database's last: it would make the
 * write-ahead log and its index anew as it opened, and checkpoint and remove them as it closed.
 */
export async function holdBusOpen(location: BusLocation): Promise<{ close(): Promise<void> }> {
  const bus = openBus(location.env);
  await bus.roster.agents();
  return { close: () => bus.close() };
}

/** The floor's median for a figure's details (nothing where there is none). */
export function floorDetails(floorTimes: number[]): { floorMedianMs?: number } {
  return floorTimes.length === 0 ? {} : { floorMedianMs: round(median(floorTimes)) };
}

/** How far above the floor a hook may start, in ms (median of paired runs): DESIGN.md's "Performance by design". */
export const FLOOR_GOAL_MS = 5;

/**
 * A figure against the floor: the hook's median less the floor's, timed in the same rounds (each round
 * runs both, in turn first), with each median and the median of the rounds' own differences beside it.
 */
export function overFloor(hookTimes: number[], floorTimes: number[], label = 'hook'): HookFigure {
  if (floorTimes.length === 0) throw new Error('a figure against the floor needs the floor timed beside it (a SQLite bus)');
  const hook = median(hookTimes);
  const floor = median(floorTimes);
  const difference = hook - floor;
  const paired = median(hookTimes.map((ms, index) => ms - (floorTimes[index] as number)));
  return {
    value: round(difference, 2),
    shown: `${difference >= 0 ? '+' : ''}${difference.toFixed(1)} ms (${label} ${hook.toFixed(1)} vs floor ${floor.toFixed(1)} ms)`,
    details: { hookMedianMs: round(hook), floorMedianMs: round(floor), differenceMs: round(difference), pairedDifferenceMs: round(paired), goalMs: FLOOR_GOAL_MS, met: difference <= FLOOR_GOAL_MS },
  };
}

/** The floor's median as a ratio to bare node's, for a figure's text ('' where there is none). */
export function floorText(floorTimes: number[], bareTimes: number[]): string {
  return floorTimes.length === 0 ? '' : `; the runtime and SQLite alone ${(median(floorTimes) / median(bareTimes)).toFixed(2)}×`;
}

export interface HookFigure {
  value: number | null;
  shown: string;
  details: Record<string, unknown>;
}

/** Each client's events for the prompt and stop hooks, as its payload names them. */
const EVENTS: Record<string, { prompt: string; stop: string }> = {
  claude: { prompt: 'UserPromptSubmit', stop: 'Stop' },
  gemini: { prompt: 'BeforeAgent', stop: 'AfterAgent' },
  copilot: { prompt: 'UserPromptSubmit', stop: 'Stop' },
};

export type TimedHook = 'hook-user-prompt' | 'hook-stop' | 'hook-pre-tool' | 'hook-session-start';

/** The payload a client writes for `hook` (Claude Code's names for the pre-tool and session-start hooks). */
function hookPayload(hook: TimedHook, client: string, cwd: string): string {
  const events = EVENTS[client] ?? { prompt: 'UserPromptSubmit', stop: 'Stop' };
  const common = { session_id: 'bench-session', cwd };
  if (hook === 'hook-pre-tool') return JSON.stringify({ ...common, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'ls' } });
  if (hook === 'hook-session-start') return JSON.stringify({ ...common, hook_event_name: 'SessionStart', source: 'startup' });
  return JSON.stringify({ ...common, hook_event_name: hook === 'hook-stop' ? events.stop : events.prompt, stop_hook_active: false });
}

/**
 * A hook with an empty inbox against the floor: at most FLOOR_GOAL_MS above a bare Node.js that opens
 * the same database with the same driver (the one this Node.js uses: the addon on 20, node:sqlite on 22.13+).
 */
export async function hookOverFloor(ws: Workspace, hook: TimedHook): Promise<HookFigure> {
  return hookStartup(ws, hook, 0, 'sqlite', 'claude', 'floor');
}

export async function hookStartup(ws: Workspace, hook: TimedHook, messages: number, engine: Engine = 'sqlite', client = 'claude', against: 'node' | 'floor' = 'node'): Promise<HookFigure> {
  const RUNS = 30;
  const WARMUP = 3;
  const location = await ws.bus(`${hook}-${messages}-${engine}-${client}`, engine);
  const name = `bench-repo/${client}`;
  const env = { ...location.env, AGENT_BUS_NAME: name, AGENT_BUS_REPO: location.home };
  const bus = openBus(location.env);
  await bus.roster.register(registrationsFor(name, location.home, true));
  await bus.roster.register(registrationsFor('human', location.home, true));
  const refill = async (): Promise<void> => {
    await Promise.all(Array.from({ length: messages }, (_, index) => bus.mail.send({ from: 'human', to: name, body: `please look at item ${index}` })));
  };
  const payload = hookPayload(hook, client, location.home);
  const hookArgs = [CLI, hook, '--client', client];
  const bare = ['-e', '0'];
  const floor = floorArgs(location);
  const hookTimes: number[] = [];
  const bareTimes: number[] = [];
  const floorTimes: number[] = [];
  try {
    for (let run = 0; run < WARMUP + RUNS; run++) {
      await refill();
      // Each goes first, second and third in turn.
      const kinds = floor === null ? (['hook', 'node'] as const) : (['hook', 'node', 'floor'] as const);
      for (let step = 0; step < kinds.length; step++) {
        const which = kinds[(step + run) % kinds.length];
        const ms = which === 'hook' ? timed(hookArgs, env, location.home, payload) : which === 'node' ? timed(bare, env, location.home, '') : timed(floor ?? [], env, location.home, '');
        if (run < WARMUP) continue;
        (which === 'hook' ? hookTimes : which === 'node' ? bareTimes : floorTimes).push(ms);
      }
    }
    if (messages > 0 && (await bus.inbox.pending(name)) !== 0) throw new Error('the hook left mail unread');
  } finally {
    await bus.close();
  }
  const ratio = median(hookTimes) / median(bareTimes);
  if (against === 'floor') {
    const figure = overFloor(hookTimes, floorTimes);
    return { ...figure, details: { client, hook, driver: sqliteDriverName(location.env.AGENT_BUS_SQLITE_DRIVER ?? ''), runs: RUNS, messages, ...figure.details, nodeMedianMs: round(median(bareTimes)) } };
  }
  return {
    value: round(ratio, 3),
    shown: `${ratio.toFixed(2)}× (${median(hookTimes).toFixed(1)} vs ${median(bareTimes).toFixed(1)} ms${floorText(floorTimes, bareTimes)})`,
    details: {
      client,
      runs: RUNS,
      messages,
      hookMedianMs: round(median(hookTimes)),
      nodeMedianMs: round(median(bareTimes)),
      extraMs: round(median(hookTimes) - median(bareTimes)),
      ...floorDetails(floorTimes),
    },
  };
}
