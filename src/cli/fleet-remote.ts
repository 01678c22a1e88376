/**
 * The fleet's commands on a machine set to use a hub: `spawn` (with `--on MACHINE`), `stop`, `logs`
 * and `resume` are asked of the hub, and the runner of the agent's machine does them. Each waits for
 * what it asked to show in the hub's records, as the same command does on one machine.
 */
import { exitText, type SpawnView } from '../core/fleet-ops.js';
import type { HubAccess } from '../adapters/hub-access.js';
import { BusError } from '../model/errors.js';
import { setting, type Env } from '../model/settings.js';
import type { FleetSpawnArgs } from '../protocol/hub.js';
import { callHubOp } from '../remote/calls.js';
import type { CommandIo } from './spec.js';

/** How long `spawn --on` waits for the runner to start the agent before it says it is queued. */
const START_WAIT_MS = 10_000;
const POLL_MS = 250;

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Wait until `done` holds for the agent's view, or the time runs out: the view as it then stands. */
async function awaitView(access: HubAccess, name: string, waitMs: number, done: (view: SpawnView) => boolean): Promise<SpawnView> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const view = await callHubOp(access, 'fleet.find', { name });
    if (done(view) || Date.now() >= deadline) return view;
    await pause(POLL_MS);
  }
}

export async function spawnOverHub(access: HubAccess, io: CommandIo, request: FleetSpawnArgs, json: boolean): Promise<number> {
  const asked = await callHubOp(access, 'fleet.spawn', { ...request });
  const spawn = await awaitView(access, asked.spawn_id, START_WAIT_MS, (view) => view.state === 'exited' || (view.state === 'running' && view.pid !== null));
  io.stdout.write(json ? `${JSON.stringify(spawn)}\n` : `${spawn.name}\n`);
  if (spawn.state === 'exited') {
    if (spawn.exit_category === 'start-failed') throw new BusError(`spawn: ${spawn.name} could not start on ${spawn.machine}: ${spawn.exit_note ?? exitText(toExit(spawn))}; its log: agent-bus logs ${spawn.name}`);
    io.stderr.write(`${spawn.name} has already ended on ${spawn.machine}: ${exitText(toExit(spawn))}; its log: agent-bus logs ${spawn.name}\n`);
  } else if (spawn.state === 'queued') {
    io.stderr.write(`queued for the runner on ${spawn.machine}: it starts it when a slot is free there\n`);
  } else if (!json) {
    io.stderr.write(`started ${spawn.client} on ${spawn.machine} (pid ${spawn.pid ?? '?'}) in ${spawn.folder}${spawn.yolo ? ', with --yolo' : ''}; follow it: agent-bus logs ${spawn.name} -f; stop it: agent-bus stop ${spawn.name}\n`);
  }
  return 0;
}

function toExit(view: SpawnView): { exitCode: number | null; exitSignal: string | null; exitCategory: SpawnView['exit_category'] } {
  return { exitCode: view.exit_code, exitSignal: view.exit_signal, exitCategory: view.exit_category };
}

/** Ask the agent's runner to stop it, and wait for its exit record: the grace period, a heartbeat, and a little more. */
export async function stopOverHub(access: HubAccess, env: Env, io: CommandIo, name: string, json: boolean): Promise<number> {
  const asked = await callHubOp(access, 'fleet.stop', { name });
  const waitMs = setting(env, 'AGENT_BUS_STOP_GRACE') + setting(env, 'AGENT_BUS_RUNNER_HEARTBEAT') + 5_000;
  const stopped = await awaitView(access, asked.spawn_id, waitMs, (view) => view.state === 'exited');
  if (stopped.state !== 'exited') throw new BusError(`stop: asked ${stopped.name} to stop, and its exit is not recorded yet: its runner on ${stopped.machine} may be away ('agent-bus agents' shows it)`);
  if (json) io.stdout.write(`${JSON.stringify({ ...stopped, worktree: null })}\n`);
  else io.stdout.write(`stopped ${stopped.name} on ${stopped.machine}: ${exitText(toExit(stopped))}\n`);
  return 0;
}

/** The new lines of a log tail, given the tail seen before: what follows the longest end of `before` that `after` starts with. */
export function newLines(before: string[], after: string[]): string[] {
  for (let overlap = Math.min(before.length, after.length); overlap > 0; overlap--) {
    let same = true;
    for (let index = 0; index < overlap && same; index++) same = before[before.length - overlap + index] === after[index];
    if (same) return after.slice(overlap);
  }
  return after;
}

/** A remote agent's log, as its runner sends it to the hub; with `follow`, each new line until it exits. */
export async function logsOverHub(access: HubAccess, io: CommandIo, name: string, count: number, follow: boolean): Promise<number> {
  let seen = await callHubOp(access, 'fleet.logs', { name, lines: Math.max(count, follow ? 200 : 0) });
  for (const line of seen.lines.slice(-count)) io.stdout.write(`${line}\n`);
  while (follow) {
    const ended = seen.state === 'exited';
    await pause(ended ? 0 : 1_000);
    const now = await callHubOp(access, 'fleet.logs', { name, lines: 200 });
    for (const line of newLines(seen.lines, now.lines)) io.stdout.write(`${line}\n`);
    seen = now;
    // One more look after the exit: its last lines come with its runner's last word.
    if (ended) break;
  }
  return 0;
}

export async function resumeOverHub(access: HubAccess, io: CommandIo, name: string, prompt: string | null, json: boolean): Promise<number> {
  const asked = await callHubOp(access, 'fleet.resume', { name, prompt });
  const spawn = await awaitView(access, asked.spawn_id, START_WAIT_MS, (view) => view.state === 'exited' || (view.state === 'running' && view.pid !== null));
  io.stdout.write(json ? `${JSON.stringify(spawn)}\n` : `${spawn.name}\n`);
  if (spawn.state === 'exited' && spawn.exit_category === 'start-failed') throw new BusError(`resume: ${spawn.name} could not start on ${spawn.machine}: ${spawn.exit_note ?? ''}`);
  if (spawn.state === 'queued') io.stderr.write(`queued for the runner on ${spawn.machine}\n`);
  return 0;
}
