/**
 * The supervisor of one spawned agent (`agent-bus supervise ID`, started detached by `spawn`): it
 * waits for a slot on its machine, starts the client with its output in the agent's log, records its
 * exit the moment it comes (with its code or signal and a category), fails a task the agent held and
 * left open, and then exits: nothing of the bus stays behind an agent that has ended. A stop (the
 * store's request, or a signal to the supervisor) is a polite signal to the agent's process group,
 * then a kill after the grace period. An agent spawned with --tmux runs interactive in a tmux window
 * instead (fleet/tmux.ts), watched the same way.
 */
import { closeSync, readFileSync, rmSync } from 'node:fs';
import { processRuns, workerName } from '../adapters/procs.js';
import { awaitEnd, readExit, signalGroup, startClient, type StartedClient } from './client-process.js';
import { exitCategoryOf, exitText, isCrash, restartCooldownMs, type SpawnableClient } from '../core/fleet-ops.js';
import { eachChange } from '../core/store-changes.js';
import type { SpawnRecord, SpawnTmux } from '../model/records.js';
import { setting, type Env } from '../model/settings.js';
import { agentEnvironment, AGENT_OWN_VARIABLES } from './environment.js';
import { findExecutable } from './executable.js';
import { executableOf, LAUNCHES, type LaunchRequest } from './launch.js';
import { closePane, noTmux, openWindow, paneEnd, paneStatus } from './tmux.js';
import type { FleetDesk } from './desk.js';
import { firstMatch, logNote, openLog } from './logs.js';
import { reasonLines } from './task-close.js';

/** How often a supervisor looks at the store when no change is signalled: a slot freed, a stop asked. */
const POLL_MS = 1_000;

export interface SupervisorRun {
  /** The bus as the supervisor reaches it: directly, or through the hub under a runner. */
  desk: FleetDesk;
  env: Env;
  /** The bus folder, where the logs are. */
  busFolder: string;
  spawnId: string;
  /** The most agents its machine runs at once: AGENT_BUS_MAX_SPAWNED unless said (a runner's --max). */
  max?: number;
  /**
   * Whether the supervisor's own signals stop its agent: yes for the process `spawn` starts for one
   * agent; no under a runner, whose agents outlive it and are reconciled when it returns.
   */
  ownSignals?: boolean;
  /** How the supervisor names itself in the record: `<host>/<pid>/<random>` unless said (a runner's own). */
  supervisorName?: string;
  /** Told of each run once its client has started, and once its exit is recorded (a runner sends its log to the hub between). */
  onRun?(spawn: SpawnRecord): void;
  onRunEnded?(spawn: SpawnRecord): Promise<void>;
  /** The program a tmux pane runs the agent's client under: `node` and the CLI's own file (this process's unless said). */
  cli?: { node: string; script: string };
}

/** What an agent that would not start left: its exit record, its log's line, and its task failed. */
async function startFailed(run: SupervisorRun, spawn: SpawnRecord, note: string): Promise<void> {
  logNote(spawn.logPath, run.busFolder, `could not start: ${note}`);
  const after = await run.desk.exited(spawn.spawnId, { exitCode: null, exitSignal: null, exitCategory: 'start-failed', exitNote: note });
  if (after !== null) await run.desk.failOpenTask(after, reasonLines(after));
}

/**
 * Wait for a slot: the spawn once it may start (`handedOver` when `spawn` took the slot in this
 * supervisor's name and starts the client itself), or null when it is not to start (stopped, gone,
 * started by another).
 */
async function awaitSlot(run: SupervisorRun, me: string, stopSignalled: () => boolean): Promise<{ spawn: SpawnRecord; handedOver: boolean } | null> {
  const max = run.max ?? setting(run.env, 'AGENT_BUS_MAX_SPAWNED');
  await run.desk.waiting?.(run.spawnId, me);
  const feed = run.desk.changes();
  try {
    const outcome = await eachChange({ feed, pollMs: POLL_MS, stopped: () => false }, async () => {
      const spawn = await run.desk.byId(run.spawnId);
      // `spawn` took the slot in this supervisor's name and starts the client itself: this one watches it.
      if (spawn?.state === 'running' && spawn.supervisor === me) return { spawn, handedOver: true };
      if (spawn === null || spawn.state !== 'queued') return { spawn: null };
      if (spawn.stopRequestedAt !== null || stopSignalled()) {
        logNote(spawn.logPath, run.busFolder, 'stopped while it waited for a slot');
        await run.desk.exited(spawn.spawnId, { exitCode: null, exitSignal: null, exitCategory: 'stopped', exitNote: 'stopped before it started' });
        return { spawn: null };
      }
      if (await run.desk.claimSlot(spawn.spawnId, me, max)) return { spawn: (await run.desk.byId(run.spawnId)) ?? spawn, handedOver: false };
      return undefined;
    });
    return outcome?.spawn ? { spawn: outcome.spawn, handedOver: outcome.handedOver ?? false } : null;
  } finally {
    await feed.close().catch(() => undefined);
  }
}

/** Where a spawn's client's exit status is written: beside its log, as private. */
export function exitFileOf(spawn: Pick<SpawnRecord, 'logPath'>): string {
  return spawn.logPath.replace(/\.log$/, '') + '.exit';
}

/**
 * Start a spawn's client, headless, with its output in its log: its process, or why it could not
 * start (its executable not found, or no process at all). Used by the supervisor, and by `spawn`
 * itself when a slot is free, so the client starts without waiting for the supervisor's own start.
 */
export async function startSpawnClient(env: Env, busFolder: string, spawn: SpawnRecord): Promise<StartedClient | { problem: string }> {
  const client = spawn.client as SpawnableClient;
  const launch = LAUNCHES[client];
  const wanted = executableOf(client, env);
  const executable = findExecutable(wanted, env.PATH, spawn.folder);
  if (executable === null) return { problem: `no executable ${JSON.stringify(wanted)} on PATH (${env.PATH ?? ''})` };
  const request = { prompt: spawn.prompt, model: spawn.model, yolo: spawn.yolo, name: spawn.name, resume: spawn.sessionKey };
  const args = launch.headless(request);
  const log = openLog(spawn.logPath, busFolder);
  logNote(spawn.logPath, busFolder, `starting ${spawn.name}: ${executable} ${args.map((arg) => JSON.stringify(arg)).join(' ')} (in ${spawn.folder})`);
  try {
    return await startClient({ executable, args, env: agentEnvironment(env, spawn, launch.env?.(request) ?? {}), folder: spawn.folder, logFd: log, exitFile: exitFileOf(spawn) });
  } catch (error) {
    return { problem: (error as Error).message };
  } finally {
    closeSync(log);
  }
}

/** How long a supervisor waits for `spawn` to say the pid of a client it started in the supervisor's name. */
const HANDOVER_MS = 10_000;
/** How often a client that another process started is looked at, to see that it has ended. */
const END_POLL_MS = 50;

/** The pid of the client `spawn` started for this supervisor, once it is recorded; null if it never is. */
async function handedOverPid(run: SupervisorRun, spawn: SpawnRecord): Promise<number | null> {
  const deadline = Date.now() + HANDOVER_MS;
  let now: SpawnRecord | null = spawn;
  while (now !== null && now.state === 'running' && now.pid === null && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    now = await run.desk.byId(spawn.spawnId);
  }
  return now?.state === 'running' ? now.pid : null;
}

/** How a run of the agent's process ended: its code or signal, an error that kept it from running, a note for the record. */
interface Ended {
  code: number | null;
  signal: NodeJS.Signals | null;
  error: Error | null;
  note: string | null;
}

/** The agent's process, started: headless as the supervisor's child, or in a tmux pane. */
interface Started {
  pid: number | undefined;
  /** Its tmux window, where it runs in one. */
  tmux?: SpawnTmux;
  ended: Promise<Ended>;
  /** Signal its process group. */
  signal(signal: NodeJS.Signals): void;
  /** What is left to do once it has ended and its exit is read: its window closed. */
  after?(): Promise<void>;
}

/** How often an agent in a tmux pane is looked at: its exit file each time, tmux every fifth. */
const PANE_POLL_MS = 200;

/**
 * Interactive, in a tmux window named after it. Its pane's process (`agent-bus tmux-pane`) starts
 * the client on the pane's terminal, in the pane's process group, and keeps how it ended in a file;
 * tmux keeps the pane when it ends, for what that file cannot say (a kill), and the window closes.
 */
function startInTmux(run: SupervisorRun, spawn: SpawnRecord, executable: string, request: LaunchRequest): Started {
  const tmux = findExecutable('tmux', run.env.PATH, spawn.folder);
  if (tmux === null) throw new Error(noTmux(run.env));
  const args = LAUNCHES[spawn.client as SpawnableClient].interactive(request);
  const env = agentEnvironment(run.env, spawn);
  const exitFile = exitFileOf(spawn);
  rmSync(exitFile, { force: true });
  logNote(spawn.logPath, run.busFolder, `starting ${spawn.name} in tmux: ${executable} ${args.map((arg) => JSON.stringify(arg)).join(' ')} (in ${spawn.folder})`);
  const cli = run.cli ?? { node: process.execPath, script: process.argv[1] as string };
  const command = [cli.node, cli.script, 'tmux-pane', exitFile, '--', executable, ...args];
  const { pid, place } = openWindow({ tmux, env, own: AGENT_OWN_VARIABLES, name: spawn.name, folder: spawn.folder, command, logPath: spawn.logPath });
  logNote(spawn.logPath, run.busFolder, `its tmux window: ${place.window ?? '?'} (pane ${place.pane ?? '?'}, session ${place.session ?? '?'}, server ${place.socket ?? '?'})`);
  let lastSignal: NodeJS.Signals | null = null;
  const ended = new Promise<Ended>((resolve) => {
    let ticks = 0;
    let doneSince: number | null = null;
    const timer = setInterval(() => {
      ticks++;
      const kept = readExitFile(exitFile);
      if (kept === null && doneSince === null) {
        // Its process has ended: gone, or a zombie tmux has not reaped; or tmux says its pane has (its terminal closed).
        if (paneProcessRuns(pid) && (ticks % 5 !== 0 || paneEnd(tmux, env, place) !== 'dead')) return;
        doneSince = Date.now();
      }
      // The pane's process writes the exit as it ends: a moment for it, then what tmux kept.
      if (kept === null && Date.now() - (doneSince ?? 0) < 1_000) return;
      clearInterval(timer);
      if (kept !== null) return resolve(kept);
      const end = paneStatus(tmux, env, place);
      if (end !== null) return resolve({ ...end, error: null, note: null });
      // Killed with its pane's process (the stop's kill), or its window gone: nothing kept how it ended.
      resolve({ code: null, signal: lastSignal === 'SIGKILL' ? 'SIGKILL' : null, error: null, note: lastSignal === 'SIGKILL' ? null : 'its tmux pane ended without saying how: its exit code is unknown' });
    }, PANE_POLL_MS);
  });
  return {
    pid,
    tmux: place,
    ended,
    signal: (signal) => {
      lastSignal = signal;
      signalGroup(pid, signal);
    },
    after: async () => {
      rmSync(exitFile, { force: true });
      await closePane(tmux, env, place, spawn.logPath);
    },
  };
}

/** Whether the pane's process runs: not gone, and not a zombie its parent (tmux) has left unreaped (where /proc says). */
function paneProcessRuns(pid: number): boolean {
  if (!processRuns(pid)) return false;
  try {
    return !(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1] ?? '').startsWith('Z');
  } catch {
    return true;
  }
}

/** The exit the pane's process kept, once it has written it whole; null before. */
function readExitFile(path: string): Ended | null {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return null;
  }
  if (!text.endsWith('\n')) return null;
  try {
    const kept = JSON.parse(text) as { code?: unknown; signal?: unknown; error?: unknown };
    const error = typeof kept.error === 'string' ? new Error(kept.error) : null;
    return { code: typeof kept.code === 'number' ? kept.code : null, signal: typeof kept.signal === 'string' ? (kept.signal as NodeJS.Signals) : null, error, note: null };
  } catch {
    return null;
  }
}

/** A client started headless (by this supervisor, or by `spawn` in its name), watched to its end; how it ended is read from its exit file. */
function headlessStarted(spawn: SpawnRecord, pid: number, parentHears: Promise<void> | null): Started {
  const ended = (parentHears ?? awaitEnd(pid, END_POLL_MS)).then((): Ended => ({ ...readExit(exitFileOf(spawn)), error: null, note: null }));
  return { pid, ended, signal: (signal) => signalGroup(pid, signal) };
}

export async function supervise(run: SupervisorRun): Promise<number> {
  let spawnId: string | null = run.spawnId;
  let code = 0;
  // Each run of the agent (the first, then a restart after a crash) under this one supervisor.
  while (spawnId !== null) {
    const outcome = await superviseRun({ ...run, spawnId });
    code = outcome.code;
    spawnId = outcome.next;
  }
  return code;
}

async function superviseRun(run: SupervisorRun): Promise<{ code: number; next: string | null }> {
  const me = run.supervisorName ?? workerName();
  let stopSignalled = false;
  let stopChild: (() => void) | null = null;
  const onSignal = (): void => {
    stopSignalled = true;
    stopChild?.();
  };
  const signals = run.ownSignals === false ? [] : (['SIGTERM', 'SIGINT', 'SIGHUP'] as const);
  for (const signal of signals) process.on(signal, onSignal);
  try {
    return await watchOne(run, me, () => stopSignalled, (stop) => (stopChild = stop));
  } finally {
    for (const signal of signals) process.off(signal, onSignal);
  }
}

async function watchOne(run: SupervisorRun, me: string, signalled: () => boolean, onStop: (stop: () => void) => void): Promise<{ code: number; next: string | null }> {
  const done = (code: number): { code: number; next: null } => ({ code, next: null });

  const slot = await awaitSlot(run, me, signalled);
  if (slot === null) return done(0);
  const { spawn } = slot;
  const launch = LAUNCHES[spawn.client as SpawnableClient];
  let started: Started;
  if (slot.handedOver) {
    // `spawn` started it, in this supervisor's name, and recorded its pid.
    const handed = spawn.pid ?? (await handedOverPid(run, spawn));
    if (handed === null) {
      const now = await run.desk.byId(spawn.spawnId);
      if (now?.state === 'exited') return done(0);
      await startFailed(run, spawn, 'spawn took its slot and did not say that it started the client');
      return done(1);
    }
    started = headlessStarted(spawn, handed, null);
  } else if (spawn.tmux) {
    const client = spawn.client as SpawnableClient;
    const wanted = executableOf(client, run.env);
    const executable = findExecutable(wanted, run.env.PATH, spawn.folder);
    if (executable === null) {
      await startFailed(run, spawn, `no executable ${JSON.stringify(wanted)} on PATH (${run.env.PATH ?? ''})`);
      return done(1);
    }
    const request = { prompt: spawn.prompt, model: spawn.model, yolo: spawn.yolo, name: spawn.name, resume: spawn.sessionKey };
    try {
      started = startInTmux(run, spawn, executable, request);
    } catch (error) {
      await startFailed(run, spawn, (error as Error).message);
      return done(1);
    }
  } else {
    const headless = await startSpawnClient(run.env, run.busFolder, spawn);
    if ('problem' in headless) {
      await startFailed(run, spawn, headless.problem);
      return done(1);
    }
    started = headlessStarted(spawn, headless.pid, headless.ended);
  }

  const grace = setting(run.env, 'AGENT_BUS_STOP_GRACE');
  let stopping = false;
  let killTimer: NodeJS.Timeout | null = null;
  const stopChild = (): void => {
    if (stopping) return;
    stopping = true;
    started.signal('SIGTERM');
    killTimer = setTimeout(() => started.signal('SIGKILL'), grace);
  };
  onStop(stopChild);
  if (signalled()) stopChild();
  if (!slot.handedOver && started.pid !== undefined) await run.desk.started(spawn, started.pid, started.tmux);
  run.onRun?.(spawn);

  // A stop asked through the store (from another process, or another machine's hub) reaches this one.
  let exited = false;
  const feed = run.desk.changes();
  const watchingStops = eachChange({ feed, pollMs: POLL_MS, stopped: () => exited || stopping }, async () => {
    const now = await run.desk.byId(spawn.spawnId).catch(() => null);
    if (now?.stopRequestedAt) stopChild();
    return undefined;
  }).catch(() => undefined);

  const outcome = await started.ended;
  exited = true;
  if (killTimer !== null) clearTimeout(killTimer);
  feed.interrupt();
  await watchingStops;
  await feed.close().catch(() => undefined);
  // A tmux window closes, its output in the log.
  await started.after?.();
  if (outcome.error !== null) {
    await startFailed(run, spawn, outcome.error.message);
    return done(1);
  }
  // What it started may outlive it (a server, a hook): the group goes with it.
  started.signal('SIGTERM');
  // The conversation it ran, for a resume: as its hooks saw it, else as its output named it.
  const pattern = launch.sessionInOutput;
  const session = (await run.desk.hooksSession(spawn).catch(() => null)) ?? (pattern === null ? null : firstMatch(spawn.logPath, pattern));
  if (session !== null) await run.desk.noteSession(spawn.spawnId, session);
  const category = exitCategoryOf({ code: outcome.code, signal: outcome.signal, stopRequested: stopping });
  const after = await run.desk.exited(spawn.spawnId, { exitCode: outcome.code, exitSignal: outcome.signal, exitCategory: category, exitNote: outcome.note });
  logNote(spawn.logPath, run.busFolder, `exited: ${outcome.signal ?? (outcome.code === null ? 'no exit code' : `exit ${outcome.code}`)} (${category})`);
  await run.onRunEnded?.(spawn);
  if (after === null) return done(0);
  const next = signalled() ? null : await restartAfterCrash(run, after, signalled);
  if (next !== null) return { code: 0, next: next.spawnId };
  await run.desk.failOpenTask(after, reasonLines(after));
  return done(0);
}

/**
 * What a restart policy makes of an exit: a crash within the limit waits its cooldown and is started
 * again on its own session (the next run, for this supervisor to watch); at the limit its spawner is
 * told, once, and nothing starts. Anything else (a finish, a stop) ends here.
 */
async function restartAfterCrash(run: SupervisorRun, after: SpawnRecord, signalled: () => boolean): Promise<SpawnRecord | null> {
  if (after.restartPolicy !== 'on-failure' || !isCrash(after.exitCategory) || after.stopRequestedAt !== null) return null;
  if (after.restarts >= after.maxRestarts) {
    logNote(after.logPath, run.busFolder, `not restarted: it crashed ${after.restarts + 1} times, and --max-restarts is ${after.maxRestarts}`);
    await run.desk
      .tellSpawner(
        after,
        `[agent-bus] ${after.name} crashed (${exitText(after)}) after ${after.restarts} restart${after.restarts === 1 ? '' : 's'}, the most --max-restarts allows: it is not started again. Its output: agent-bus logs ${after.name}`,
      )
      .catch((error: unknown) => logNote(after.logPath, run.busFolder, `could not tell ${after.spawnedBy}: ${(error as Error).message}`));
    return null;
  }
  const cooldown = restartCooldownMs(after.restarts);
  logNote(after.logPath, run.busFolder, `restarting in ${(cooldown / 1000).toFixed(0)}s (restart ${after.restarts + 1} of ${after.maxRestarts})`);
  await new Promise((resolve) => setTimeout(resolve, cooldown));
  // A stop asked for meanwhile (of the run that crashed) holds the restart.
  const now = await run.desk.byId(after.spawnId);
  if (now?.stopRequestedAt || signalled()) return null;
  const prompt = after.sessionKey === null ? after.prompt : `You were started again after your process ended (${exitText(after)}). Go on with your work from where you left it.`;
  return run.desk.restart(after, prompt);
}
