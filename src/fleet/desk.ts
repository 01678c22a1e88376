/**
 * What a supervisor asks of the bus while it watches an agent: the record, a slot, the start, the
 * exit, the session, the task left open, a restart, a word to the spawner. On the agent's own
 * machine the desk is the bus itself; under a runner it is the hub, asked over the network, so one
 * supervisor watches an agent the same way wherever its store is.
 */
import { hostname } from 'node:os';
import type { Bus } from '../core/bus.js';
import type { SpawnExit } from '../core/fleet-ops.js';
import { BUS_NAME } from '../core/names.js';
import type { ChangeFeed } from '../core/store-changes.js';
import type { SpawnRecord, SpawnTmux } from '../model/records.js';
import { logPathFor } from './logs.js';
import { failOpenTask } from './task-close.js';

export interface FleetDesk {
  byId(spawnId: string): Promise<SpawnRecord | null>;
  /** Name the supervisor that waits for a slot, where the desk keeps it (a runner's own agents it takes up again itself). */
  waiting?(spawnId: string, supervisor: string): Promise<void>;
  /** Take a slot on the spawn's machine, under `max` running: whether it may start now. */
  claimSlot(spawnId: string, supervisor: string, max: number): Promise<boolean>;
  /** The process it started as, and the tmux window it runs in where it runs in one. */
  started(spawn: SpawnRecord, pid: number, tmux?: SpawnTmux): Promise<void>;
  /** Record the exit once: the record as it then stands, or null when another recorded it first. */
  exited(spawnId: string, exit: Omit<SpawnExit, 'endedAt'>): Promise<SpawnRecord | null>;
  /** The session its hooks saw, or null. */
  hooksSession(spawn: SpawnRecord): Promise<string | null>;
  noteSession(spawnId: string, sessionKey: string): Promise<void>;
  /** Fail the task it held and left open, its reason the exit and these last lines of its log. */
  failOpenTask(spawn: SpawnRecord, lastLines: string[]): Promise<void>;
  /** Queue the next run of a crashed agent on its own session. */
  restart(after: SpawnRecord, prompt: string): Promise<SpawnRecord>;
  /** Tell whoever spawned it, urgently, by mail from the bus. */
  tellSpawner(spawn: SpawnRecord, body: string): Promise<void>;
  changes(): ChangeFeed;
}

/** The desk of a supervisor on the bus's own machine: the bus, and the logs in its folder. */
export function localDesk(bus: Bus, busFolder: string): FleetDesk {
  return {
    byId: (spawnId) => bus.fleet.byId(spawnId),
    waiting: (spawnId, supervisor) => bus.fleet.waiting(spawnId, supervisor),
    claimSlot: (spawnId, supervisor, max) => bus.fleet.claimSlot(spawnId, supervisor, max),
    started: (spawn, pid, tmux) => bus.fleet.started(spawn, pid, tmux),
    exited: (spawnId, exit) => bus.fleet.exited(spawnId, exit),
    hooksSession: (spawn) => bus.fleet.hooksSession(spawn),
    noteSession: (spawnId, sessionKey) => bus.fleet.noteSession(spawnId, sessionKey),
    failOpenTask: (spawn, lines) => failOpenTask(bus, spawn, lines),
    restart: (after, prompt) => bus.fleet.resume(after, { prompt, spawnedBy: after.spawnedBy, machine: hostname(), logPathFor: (name, spawnId) => logPathFor(busFolder, name, spawnId), restart: true }),
    tellSpawner: async (spawn, body) => {
      await bus.mail.send({ from: BUS_NAME, to: spawn.spawnedBy, urgent: true, body });
    },
    changes: () => bus.changes(),
  };
}
