/**
 * Stopping a spawned agent: the request kept in the store (its supervisor, here or on another
 * machine, hears it at once through the change feed, or within a second). Then a wait for the exit record: the polite signal's grace, and a little more. An agent in a tmux
 * window is stopped the same way; its supervisor closes the window once its exit is read.
 */
import { hostname } from 'node:os';
import type { Bus } from '../core/bus.js';
import { exitText } from '../core/fleet-ops.js';
import { BusError } from '../model/errors.js';
import type { SpawnRecord } from '../model/records.js';
import { setting, type Env } from '../model/settings.js';
import { findExecutable } from './executable.js';
import { failOpenTask } from './task-close.js';
import { closePane } from './tmux.js';

/** How much longer than the grace period a stop waits for the exit record. */
const RECORD_SLACK_MS = 5_000;

/** The pid in a supervisor's `<host>/<pid>/<random>`, when it runs on this machine. */
function localPid(supervisor: string | null): number | null {
  const [host, pid] = (supervisor ?? '').split('/');
  return host === hostname() && /^\d+$/.test(pid ?? '') ? Number(pid) : null;
}

/** Send `name` to `pid` (a negative one: its process group): whether it was there to get it. */
function signal(pid: number, name: NodeJS.Signals | 0): boolean {
  try {
    process.kill(pid, name);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * An agent whose supervisor is gone (killed, or its machine's process ended it): `stop` ends its
 * process group itself, the polite signal and then the kill, and records the exit, whose code no
 * one is left to read.
 */
async function stopOrphan(bus: Bus, env: Env, spawn: SpawnRecord, pid: number, grace: number): Promise<SpawnRecord> {
  let last: NodeJS.Signals = 'SIGTERM';
  if (signal(-pid, 'SIGTERM') || signal(pid, 'SIGTERM')) {
    const deadline = Date.now() + grace;
    while (Date.now() < deadline && signal(pid, 0)) await new Promise((resolve) => setTimeout(resolve, 50));
    if (signal(pid, 0)) {
      last = 'SIGKILL';
      if (!signal(-pid, 'SIGKILL')) signal(pid, 'SIGKILL');
    }
  }
  // Its tmux window, kept for the exit nobody is left to read, closes.
  const tmux = spawn.tmux === null ? null : findExecutable('tmux', env.PATH, spawn.folder);
  if (spawn.tmux !== null && tmux !== null) await closePane(tmux, env as NodeJS.ProcessEnv, spawn.tmux, null);
  const note = 'its supervisor was gone: stop ended it, and its exit code is unknown';
  const after = await bus.fleet.exited(spawn.spawnId, { exitCode: null, exitSignal: last, exitCategory: 'stopped', exitNote: note });
  if (after === null) return (await bus.fleet.byId(spawn.spawnId)) ?? spawn;
  await failOpenTask(bus, after);
  return after;
}

/** Stop the agent `nameOrId` as `actor`: its exit record once it is there. */
/** An agent whose supervisor is gone: ended by `stop` itself where it runs, else (queued, or not yet started) recorded stopped. */
async function stopWithoutSupervisor(bus: Bus, env: Env, spawn: SpawnRecord, grace: number): Promise<SpawnRecord> {
  if (spawn.state === 'running' && spawn.pid !== null) return stopOrphan(bus, env, spawn, spawn.pid, grace);
  // Queued (or not yet started), and the supervisor that was to start it is gone: nothing will, and nothing runs.
  const after = await bus.fleet.exited(spawn.spawnId, { exitCode: null, exitSignal: null, exitCategory: 'stopped', exitNote: 'stopped before it started; its supervisor was gone' });
  if (after === null) return (await bus.fleet.byId(spawn.spawnId)) ?? spawn;
  await failOpenTask(bus, after);
  return after;
}

/**
 * Stop the agent `nameOrId` as `actor`: its exit record once it is there. The request is the store's
 * (its supervisor hears it through the change feed); the supervisor is not signalled, as one still
 * starting up (the client already running, started by `spawn`) has no handler yet and would die of it.
 */
export async function stopAgent(bus: Bus, env: Env, nameOrId: string, actor: string): Promise<SpawnRecord> {
  const spawn = await bus.fleet.find(nameOrId);
  if (spawn.state === 'exited') throw new BusError(`stop: ${spawn.name} has ended already: ${exitText(spawn)}`);
  await bus.fleet.requestStop(spawn, actor);
  const pid = localPid(spawn.supervisor);
  const grace = setting(env, 'AGENT_BUS_STOP_GRACE');
  const supervisorGone = (): boolean => pid !== null && !signal(pid, 0);
  const deadline = Date.now() + grace + RECORD_SLACK_MS;
  for (;;) {
    const now = (await bus.fleet.byId(spawn.spawnId)) ?? spawn;
    if (now.state === 'exited') return now;
    // Gone before the stop, or while it waited for the exit: nobody else will end it or record it.
    if (supervisorGone()) return stopWithoutSupervisor(bus, env, now, grace);
    if (Date.now() >= deadline) throw new BusError(`stop: asked ${spawn.name} to stop, and its exit is not recorded yet: its supervisor on ${spawn.machine} may be gone ('agent-bus agents' shows it)`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
