/**
 * A runner (`agent-bus runner`): a machine offering the hub to run agents, for as long as it is asked
 * to. It offers itself again at every heartbeat, and each answer lists the agents of its machine that
 * have not ended: a queued one it supervises here (the same supervisor `spawn` starts, its desk the
 * hub); a running one that no supervisor of this runner holds (started before the runner was last
 * restarted) it adopts, watching its process until it ends. It sends the hub its agents' logs as they
 * grow. It runs only the clients and repos it was started with; the command line is this machine's.
 */
import { randomBytes } from 'node:crypto';
import { statSync } from 'node:fs';
import type { HubAccess } from '../adapters/hub-access.js';
import { nowStamp } from '../model/clock.js';
import type { RunnerRepo, SpawnRecord } from '../model/records.js';
import type { Env } from '../model/settings.js';
import { setting } from '../model/settings.js';
import { callHubOp } from '../remote/calls.js';
import { HubChangeFeed } from '../remote/changes.js';
import type { FleetDesk } from './desk.js';
import { hubDesk } from './hub-desk.js';
import { processEnded, signalGroup } from './client-process.js';
import { lastLines, logNote } from './logs.js';
import { supervise } from './supervisor.js';
import { addWorktree } from './worktree.js';
import { profileFor } from '../clients/registry/profiles.js';
import type { SpawnableClient } from '../core/fleet-ops.js';
import { reasonLines } from './task-close.js';

/** How many of a log's last lines the hub keeps for `logs` elsewhere. */
const LOG_LINES_SENT = 200;
/** The least time between two looks at the hub's work for this machine. */
const MIN_LOOK_MS = 200;
/** How often an adopted agent's process is looked at. */
const ADOPTED_POLL_MS = 1_000;

export interface RunnerOptions {
  access: HubAccess;
  env: Env;
  busFolder: string;
  machine: string;
  clients: string[];
  repos: RunnerRepo[];
  max: number;
  /** Whether it has been asked to end (a signal): it stops offering, and leaves its agents running. */
  stopped(): boolean;
  /** A line for the person who started it. */
  say(line: string): void;
}

/**
 * An agent of this machine started under an earlier runner: watched by its pid until it ends (a stop
 * asked meanwhile ends its group), then its exit recorded, whose code no one is left to read.
 */
async function adopt(desk: FleetDesk, options: RunnerOptions, spawn: SpawnRecord, stillWanted: () => boolean): Promise<void> {
  const grace = setting(options.env, 'AGENT_BUS_STOP_GRACE');
  let stopAskedAt: number | null = null;
  if (spawn.pid !== null) {
    while (!processEnded(spawn.pid) && stillWanted()) {
      const now = await desk.byId(spawn.spawnId).catch(() => spawn);
      if (now === null || now.state === 'exited') return;
      if (now.stopRequestedAt !== null) {
        if (stopAskedAt === null) {
          stopAskedAt = Date.now();
          signalGroup(spawn.pid, 'SIGTERM');
        } else if (Date.now() - stopAskedAt > grace) signalGroup(spawn.pid, 'SIGKILL');
      }
      await new Promise((resolve) => setTimeout(resolve, ADOPTED_POLL_MS));
    }
    if (!processEnded(spawn.pid)) return; // The runner is ending: the agent runs on, for the next one to adopt.
  }
  const note =
    spawn.pid === null ? 'its runner ended before it started it' : 'it ended while its runner was away or restarting: its exit code is unknown';
  const session = await desk.hooksSession(spawn).catch(() => null);
  if (session !== null) await desk.noteSession(spawn.spawnId, session).catch(() => undefined);
  const after = await desk.exited(spawn.spawnId, {
    exitCode: null,
    exitSignal: null,
    exitCategory: spawn.pid === null ? 'start-failed' : stopAskedAt !== null ? 'stopped' : 'failed',
    exitNote: note,
  });
  logNote(spawn.logPath, options.busFolder, `exited: ${note}`);
  if (after !== null) await desk.failOpenTask(after, reasonLines(after));
}

/**
 * The worktree of an agent asked to have one, made here before it starts (its folder is then the
 * worktree, at the hub too): whether it may start. A repo with no commit is its start failed.
 */
async function ownWorktree(desk: FleetDesk, options: RunnerOptions, spawn: SpawnRecord): Promise<boolean> {
  if (!spawn.worktree || !options.repos.some((repo) => repo.folder === spawn.folder)) return true;
  let folder: string;
  try {
    folder = addWorktree(options.busFolder, spawn.folder, spawn.repo, spawn.label, profileFor(spawn.client as SpawnableClient).configFiles);
  } catch (error) {
    const note = (error as Error).message.replace(/^spawn: /, '');
    logNote(spawn.logPath, options.busFolder, `could not start: ${note}`);
    const after = await desk.exited(spawn.spawnId, { exitCode: null, exitSignal: null, exitCategory: 'start-failed', exitNote: note });
    if (after !== null) await desk.failOpenTask(after, []);
    return false;
  }
  await callHubOp(options.access, 'runner.folder', { spawn_id: spawn.spawnId, folder });
  return true;
}

/** Run until stopped: offer the machine, take its work, send its logs. */
export async function runRunner(options: RunnerOptions): Promise<void> {
  const { access, env } = options;
  const desk = hubDesk(access);
  const heartbeat = setting(env, 'AGENT_BUS_RUNNER_HEARTBEAT');
  const startedAt = nowStamp();
  const me = `runner:${options.machine}/${process.pid}/${randomBytes(4).toString('hex')}`;
  /** Each supervisor of this runner has a name of its own, so none takes another's agent for one handed to it. */
  let supervisors = 0;
  const watching = new Map<string, Promise<void>>();
  /** Each watched agent's log: its path and the size last sent. */
  const logs = new Map<string, { path: string; sent: number }>();
  const feed = new HubChangeFeed(access);
  let reachable = true;

  const sendLog = async (spawnId: string): Promise<void> => {
    const log = logs.get(spawnId);
    if (log === undefined) return;
    let size: number;
    try {
      size = statSync(log.path).size;
    } catch {
      return;
    }
    if (size === log.sent) return;
    const tail = lastLines(log.path, LOG_LINES_SENT).join('\n');
    await callHubOp(access, 'runner.log', { spawn_id: spawnId, tail: tail.slice(-64 * 1024) });
    log.sent = size;
  };

  /** A run's log, sent as it grows from its start, and once more at its end. */
  const logStarts = (spawn: SpawnRecord): void => void logs.set(spawn.spawnId, { path: spawn.logPath, sent: -1 });
  const logEnds = async (spawn: SpawnRecord): Promise<void> => {
    await sendLog(spawn.spawnId).catch(() => undefined);
    logs.delete(spawn.spawnId);
  };

  const watch = (spawn: SpawnRecord, work: Promise<void>): void => {
    const done = work
      .catch((error: unknown) => options.say(`${spawn.name}: ${(error as Error).message}`))
      .finally(() => watching.delete(spawn.spawnId));
    watching.set(spawn.spawnId, done);
  };

  let offeredAt = Number.NEGATIVE_INFINITY;
  while (!options.stopped()) {
    const began = Date.now();
    let work: SpawnRecord[] | null = null;
    try {
      // An offer (a write, which moves the bus) once a heartbeat; between them, when the bus moves, a look (a read).
      if (began - offeredAt >= heartbeat) {
        offeredAt = began;
        work = (
          await callHubOp(access, 'runner.offer', {
            machine: options.machine,
            clients: options.clients,
            repos: options.repos,
            max: options.max,
            bus_folder: options.busFolder,
            heartbeat_ms: heartbeat,
            started_at: startedAt,
          })
        ).work;
      } else {
        work = (await callHubOp(access, 'runner.work', { machine: options.machine })).work;
      }
      if (!reachable) options.say(`the hub is back: offering ${options.machine} again`);
      reachable = true;
    } catch (error) {
      if (reachable) options.say(`the hub did not answer (${(error as Error).message}): its agents run on; offering again every ${heartbeat / 1000}s`);
      reachable = false;
    }
    for (const spawn of work ?? []) {
      if (watching.has(spawn.spawnId)) continue;
      if (spawn.state === 'queued') {
        options.say(`starting ${spawn.name} (${spawn.client} in ${spawn.folder})`);
        // A restart after a crash is the next run, and this supervisor watches it too: its id is new.
        watch(
          spawn,
          (async () => {
            if (!(await ownWorktree(desk, options, spawn))) return;
            // Each run it starts (a restart is a run of its own, with a log of its own) has its log sent.
            await supervise({ desk, env, busFolder: options.busFolder, spawnId: spawn.spawnId, max: options.max, ownSignals: false, supervisorName: `${me}-${++supervisors}`, onRun: logStarts, onRunEnded: logEnds });
          })(),
        );
      } else if (spawn.state === 'running' && spawn.supervisor?.startsWith('runner:') && !spawn.supervisor.startsWith(`runner:${options.machine}/${process.pid}/`)) {
        // Only an earlier runner's: an agent a supervisor of this machine's own bus watches is that supervisor's.
        options.say(`adopting ${spawn.name} (pid ${spawn.pid ?? '?'}), started before this runner`);
        logStarts(spawn);
        watch(spawn, adopt(desk, options, spawn, () => !options.stopped()).finally(() => logEnds(spawn)));
      }
    }
    if (reachable) for (const spawnId of logs.keys()) await sendLog(spawnId).catch(() => undefined);
    if (options.stopped()) break;
    // The bus moving (a spawn asked for, a stop) wakes the runner before its next heartbeat; a busy bus
    // wakes it at most every MIN_LOOK_MS, and an unreachable hub is asked again at the heartbeat.
    const untilOffer = Math.max(0, offeredAt + heartbeat - Date.now());
    if (reachable) await feed.wait(untilOffer).catch(() => undefined);
    const pause = reachable ? MIN_LOOK_MS - (Date.now() - began) : offeredAt + heartbeat - Date.now();
    if (pause > 0 && !options.stopped()) await new Promise((resolve) => setTimeout(resolve, pause));
  }
  await feed.close().catch(() => undefined);
}
