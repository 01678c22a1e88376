/** The fleet: the agents the bus started, each from its request to its exit record. */
import type { ExitCategory, RunnerRecord, SpawnRecord, SpawnTmux } from '../../model/records.js';
import type { AttemptsOf } from './attempts.js';

/** A spawned agent's exit, as its supervisor records it. */
export interface SpawnExit {
  endedAt: string;
  exitCode: number | null;
  exitSignal: string | null;
  exitCategory: ExitCategory;
  exitNote: string | null;
}

export interface FleetPort {
  /** Keep a new spawn request (queued). */
  addSpawn(record: SpawnRecord): Promise<void>;
  /**
   * Start a queued spawn if its machine runs fewer than `max` agents: marked running with its
   * supervisor, in one transaction, so two supervisors racing for the last slot never both get it.
   * Whether it did (a spawn no longer queued is never started).
   */
  claimSpawnSlot(spawnId: string, supervisor: string, max: number, now: string): Promise<boolean>;
  /** Note the supervisor waiting for a slot for a queued spawn (a claim names it again); nothing once it is not queued. */
  noteSpawnWaiter(spawnId: string, supervisor: string): Promise<void>;
  /** Note the folder a spawn runs in (its worktree, once its runner has made it). */
  noteSpawnFolder(spawnId: string, folder: string): Promise<void>;
  /** Note the process a running spawn runs as, and the tmux window it runs in where it runs in one. */
  noteSpawnPid(spawnId: string, pid: number, tmux?: SpawnTmux): Promise<void>;
  /** Note the client's own id of the spawn's conversation. */
  noteSpawnSession(spawnId: string, sessionKey: string): Promise<void>;
  /** Record a spawn's exit, once: whether this call recorded it (a second exit of one spawn changes nothing). */
  recordSpawnExit(spawnId: string, exit: SpawnExit): Promise<boolean>;
  /** Ask for a spawn to be stopped: whether it was queued or running, and so is asked now. */
  requestSpawnStop(spawnId: string, now: string): Promise<boolean>;
  /** Every spawn, oldest first. */
  spawns(): Promise<SpawnRecord[]>;
  /** One spawn by its id, or null. */
  spawnById(spawnId: string): Promise<SpawnRecord | null>;
  /** The latest spawn of this name, or null. */
  spawnOf(name: string): Promise<SpawnRecord | null>;
  /** Keep a remote agent's log's last lines, as its runner sent them. */
  noteSpawnLog(spawnId: string, tail: string): Promise<void>;
  /** A remote agent's log's last lines, as its runner last sent them, or null. */
  spawnLog(spawnId: string): Promise<string | null>;
  /** A runner offering its machine: kept, or said again (its offer and the time it was heard). */
  offerRunner(runner: RunnerRecord): Promise<void>;
  /** Every runner ever heard, by machine. */
  runners(): Promise<RunnerRecord[]>;
}

export const FLEET_ATTEMPTS = {
  // Run again, the same row is found there and nothing is added.
  addSpawn: 'retryable',
  // Run again, it finds the spawn running and says it was not claimed: run once.
  claimSpawnSlot: 'once',
  noteSpawnWaiter: 'retryable',
  noteSpawnFolder: 'retryable',
  noteSpawnPid: 'retryable',
  noteSpawnSession: 'retryable',
  recordSpawnExit: 'once',
  requestSpawnStop: 'once',
  spawns: 'retryable',
  spawnById: 'retryable',
  spawnOf: 'retryable',
  noteSpawnLog: 'retryable',
  spawnLog: 'retryable',
  offerRunner: 'retryable',
  runners: 'retryable',
} as const satisfies AttemptsOf<FleetPort>;
