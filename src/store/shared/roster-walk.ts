/**
 * The roster walk, the same on both engines: the roster and its unread counts, then the unread mail of
 * the names `orphansOf` picks and the holders of each fan-out among it, then the sessions that may hold
 * an address. Written once as a generator of reads, which SQLite answers synchronously inside its
 * transaction and PostgreSQL asynchronously inside its own: the walk never sees which.
 */
import type { AgentRecord, SessionRecord } from '../../model/records.js';
import type { OrphanMail, RosterSnapshot } from '../ports/roster.js';

/** The reads the walk asks of its engine, all of them in one snapshot. */
export interface RosterReads {
  /** Every roster row, by name. */
  agents(): AgentRecord[];
  /** Unread messages per recipient name, by name. */
  unreadCounts(): Array<{ toAgent: string; n: number }>;
  /** The unread mail to one name, by message id. */
  unreadTo(name: string): OrphanMail[];
  /** Every recipient a fan-out has a copy for. */
  copyHolders(fanoutId: string): string[];
  /** Session rows not marked ended. */
  sessionHolders(): SessionRecord[];
}

/** The same reads, answered asynchronously. */
export type AsyncRosterReads = { [Read in keyof RosterReads]: (...args: Parameters<RosterReads[Read]>) => Promise<ReturnType<RosterReads[Read]>> };

type Ask = { [Read in keyof RosterReads]: { read: Read; args: Parameters<RosterReads[Read]> } }[keyof RosterReads];

function* ask<Read extends keyof RosterReads>(read: Read, ...args: Parameters<RosterReads[Read]>): Generator<Ask, ReturnType<RosterReads[Read]>, unknown> {
  return (yield { read, args } as Ask) as ReturnType<RosterReads[Read]>;
}

function* walk(orphansOf: (agents: AgentRecord[], recipients: string[]) => string[]): Generator<Ask, RosterSnapshot, unknown> {
  const agents = yield* ask('agents');
  const unread = yield* ask('unreadCounts');
  const orphans: OrphanMail[] = [];
  const copyHolders = new Map<string, string[]>();
  for (const name of orphansOf(agents, unread.map((row) => row.toAgent))) {
    const rows = yield* ask('unreadTo', name);
    orphans.push(...rows);
    for (const { fanoutId } of rows) {
      if (fanoutId === null || copyHolders.has(fanoutId)) continue;
      copyHolders.set(fanoutId, yield* ask('copyHolders', fanoutId));
    }
  }
  const sessionHolders = yield* ask('sessionHolders');
  return { agents, unread, orphans, copyHolders, sessionHolders };
}

function answer(reads: RosterReads | AsyncRosterReads, step: Ask): unknown {
  return (reads[step.read] as (...args: unknown[]) => unknown)(...step.args);
}

/** The walk over reads answered at once (call it inside the snapshot's transaction). */
export function walkRoster(orphansOf: (agents: AgentRecord[], recipients: string[]) => string[], reads: RosterReads): RosterSnapshot {
  const steps = walk(orphansOf);
  let step = steps.next();
  while (!step.done) step = steps.next(answer(reads, step.value));
  return step.value;
}

/** The walk over reads answered asynchronously (each awaited in turn, inside the snapshot's transaction). */
export async function walkRosterAsync(orphansOf: (agents: AgentRecord[], recipients: string[]) => string[], reads: AsyncRosterReads): Promise<RosterSnapshot> {
  const steps = walk(orphansOf);
  let step = steps.next();
  while (!step.done) step = steps.next(await answer(reads, step.value));
  return step.value;
}
