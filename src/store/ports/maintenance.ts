/** Keeping the store from growing for ever, and telling what state it is in. */
import type { PruneCounts } from '../../model/records.js';
import type { AttemptsOf } from './attempts.js';

/** What `prune` removes, in one transaction. */
export interface PruneInput {
  /** Mail of every thread whose messages are all read and all sent before this (unread mail never goes); spawned agents that ended before it. */
  mailBefore: string;
  /** Notices expired by this, with their receipts, and receipts whose notice is gone already. */
  now: string;
  /** Session rows that ended before this (their resume window has passed). */
  sessionsEndedBefore: string;
  /** Count what would go, remove nothing. */
  dryRun: boolean;
}

export interface StoreIntegrity {
  engine: 'sqlite' | 'postgres';
  schemaVersion: number;
  targetVersion: number;
  problems: string[];
}

export interface MaintenancePort {
  prune(input: PruneInput): Promise<PruneCounts>;
  /**
   * Give the space freed back to the file system where the engine does not on its own (SQLite's
   * incremental vacuum): the store's size before and after, or null where the engine reclaims it
   * by itself (PostgreSQL's autovacuum).
   */
  reclaimSpace(): Promise<{ before: number; after: number } | null>;
  /** Start a run of a maintenance task if its last run started before `notSince` (or it never ran): true for one caller only. */
  startMaintenanceRun(task: string, now: string, notSince: string): Promise<boolean>;
  /** The engine, the schema version the store is at and the one this program writes, and a quick integrity check's findings (none: whole). */
  integrity(): Promise<StoreIntegrity>;
}

export const MAINTENANCE_ATTEMPTS = {
  // Run again, a prune finds what it removed gone and counts nothing.
  prune: 'once',
  reclaimSpace: 'retryable',
  // Run again, it finds the run its first run started and answers false.
  startMaintenanceRun: 'once',
  integrity: 'retryable',
} as const satisfies AttemptsOf<MaintenancePort>;
