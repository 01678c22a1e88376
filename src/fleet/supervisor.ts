/**
 * The supervisor of one spawned agent (`agent-bus supervise ID`, started detached by `spawn`): it
 * waits for a slot on its machine, starts the client with its output in the agent's log, records its
 * exit the moment it comes (with its code or signal and a category), fails a task the agent held and
 * left open, and then exits: nothing of the bus stays behind an agent that has ended. A stop (the
 * store's request, or a signal to the supervisor) is a polite signal to the agent's process group,
 * then a kill after the grace period.
 */
import { spawn as startProcess, type ChildProcess } from 'node:child_process';
import { closeSync } from 'node:fs';
import { workerName } from '../adapters/procs.js';
import { exitCategoryOf, exitText, isCrash, restartCooldownMs, type SpawnableClient } from '../core/fleet-ops.js';
import { eachChange } from '../core/store-changes.js';
import type { SpawnRecord } from '../model/records.js';
import { setting, type Env } from '../model/settings.js';
import { agentEnvironment } from './environment.js';
import { findExecutable } from './executable.js';
import { executableOf, LAUNCHES } from './launch.js';
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
}

/** What an agent that would not start left: its exit record, its log's line, and its task failed. */
async function startFailed(run: SupervisorRun, spawn: SpawnRecord, note: string): Promise<void> {
  logNote(spawn.logPath, run.busFolder, `could not start: ${note}`);
  const after = await run.desk.exited(spawn.spawnId, { exitCode: null, exitSignal: null, exitCategory: 'start-failed', exitNote: note });
  if (after !== null) await run.desk.failOpenTask(after, reasonLines(after));
}

/** Wait for a slot; the spawn once it may start, or null when it is not to start (stopped, gone, started by another). */
async function awaitSlot(run: SupervisorRun, me: string, stopSignalled: () => boolean): Promise<SpawnRecord | null> {
  const max = run.max ?? setting(run.env, 'AGENT_BUS_MAX_SPAWNED');
  await run.desk.waiting?.(run.spawnId, me);
  const feed = run.desk.changes();
  try {
    const outcome = await eachChange({ feed, pollMs: POLL_MS, stopped: () => false }, async () => {
      const spawn = await run.desk.byId(run.spawnId);
      if (spawn === null || spawn.state !== 'queued') return { spawn: null };
      if (spawn.stopRequestedAt !== null || stopSignalled()) {
        logNote(spawn.logPath, run.busFolder, 'stopped while it waited for a slot');
        await run.desk.exited(spawn.spawnId, { exitCode: null, exitSignal: null, exitCategory: 'stopped', exitNote: 'stopped before it started' });
        return { spawn: null };
      }
      if (await run.desk.claimSlot(spawn.spawnId, me, max)) return { spawn: (await run.desk.byId(run.spawnId)) ?? spawn };
      return undefined;
    });
    return outcome?.spawn ?? null;
  } finally {
    await feed.close().catch(() => undefined);
  }
}

/** Signal the agent's whole process group (its servers and hooks with it), or the process alone where there is no group. */
function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    try {
      child.kill(signal);
    } catch {
      // Gone already.
    }
  }
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

  const spawn = await awaitSlot(run, me, signalled);
  if (spawn === null) return done(0);
  const client = spawn.client as SpawnableClient;
  const launch = LAUNCHES[client];
  const wanted = executableOf(client, run.env);
  const executable = findExecutable(wanted, run.env.PATH, spawn.folder);
  if (executable === null) {
    await startFailed(run, spawn, `no executable ${JSON.stringify(wanted)} on PATH (${run.env.PATH ?? ''})`);
    return done(1);
  }
  const request = { prompt: spawn.prompt, model: spawn.model, yolo: spawn.yolo, name: spawn.name, resume: spawn.sessionKey };
  const args = launch.headless(request);
  const env = agentEnvironment(run.env, spawn, launch.env?.(request) ?? {});
  const log = openLog(spawn.logPath, run.busFolder);
  logNote(spawn.logPath, run.busFolder, `starting ${spawn.name}: ${executable} ${args.map((arg) => JSON.stringify(arg)).join(' ')} (in ${spawn.folder})`);

  const grace = setting(run.env, 'AGENT_BUS_STOP_GRACE');
  let child: ChildProcess;
  try {
    // Its own process group: a stop reaches the servers and hooks it started, and the supervisor's own signals do not.
    child = startProcess(executable, args, { cwd: spawn.folder, env, stdio: ['ignore', log, log], detached: true });
  } catch (error) {
    closeSync(log);
    await startFailed(run, spawn, (error as Error).message);
    return done(1);
  }
  closeSync(log);
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null; error: Error | null }>((resolve) => {
    child.once('error', (error) => resolve({ code: null, signal: null, error }));
    child.once('exit', (code, signal) => resolve({ code, signal, error: null }));
  });
  let stopping = false;
  let killTimer: NodeJS.Timeout | null = null;
  const stopChild = (): void => {
    if (stopping) return;
    stopping = true;
    signalGroup(child, 'SIGTERM');
    killTimer = setTimeout(() => signalGroup(child, 'SIGKILL'), grace);
  };
  onStop(stopChild);
  if (signalled()) stopChild();
  if (child.pid !== undefined) await run.desk.started(spawn, child.pid);

  // A stop asked through the store (from another process, or another machine's hub) reaches this one.
  let exited = false;
  const feed = run.desk.changes();
  const watchingStops = eachChange({ feed, pollMs: POLL_MS, stopped: () => exited || stopping }, async () => {
    const now = await run.desk.byId(spawn.spawnId).catch(() => null);
    if (now?.stopRequestedAt) stopChild();
    return undefined;
  }).catch(() => undefined);

  const outcome = await ended;
  exited = true;
  if (killTimer !== null) clearTimeout(killTimer);
  feed.interrupt();
  await watchingStops;
  await feed.close().catch(() => undefined);
  if (outcome.error !== null) {
    await startFailed(run, spawn, outcome.error.message);
    return done(1);
  }
  // What it started may outlive it (a server, a hook): the group goes with it.
  signalGroup(child, 'SIGTERM');
  // The conversation it ran, for a resume: as its hooks saw it, else as its output named it.
  const pattern = launch.sessionInOutput;
  const session = (await run.desk.hooksSession(spawn).catch(() => null)) ?? (pattern === null ? null : firstMatch(spawn.logPath, pattern));
  if (session !== null) await run.desk.noteSession(spawn.spawnId, session);
  const category = exitCategoryOf({ code: outcome.code, signal: outcome.signal, stopRequested: stopping });
  const after = await run.desk.exited(spawn.spawnId, { exitCode: outcome.code, exitSignal: outcome.signal, exitCategory: category, exitNote: null });
  logNote(spawn.logPath, run.busFolder, `exited: ${outcome.signal ?? `exit ${outcome.code}`} (${category})`);
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
