/**
 * Following the messages a bus stores, whichever process or machine sent them (`tail -f`).
 * The follower keeps a position in the store's order of storing and moves it forward. On
 * PostgreSQL, sends commit concurrently: a position can become visible after a greater one,
 * and one whose transaction rolled back never does. So the positions a batch jumped over are
 * asked for again for a while, and every message is handed on once.
 */
import type { MessageRecord } from '../model/records.js';
import type { PositionedMessage } from '../store/ports.js';

/** How long a skipped position is asked for again: far longer than any send's transaction. */
export const SKIPPED_WAIT_MS = 30_000;
/** At most this many skipped positions are remembered (a rolled-back batch leaves a long run). */
export const MAX_SKIPPED = 1_000;
const BATCH = 500;

export interface FollowState {
  /** The greatest position handed on. */
  position: number;
  /** Positions below it not seen yet, each with when it was first seen skipped (epoch ms). */
  skipped: ReadonlyMap<number, number>;
}

/** A batch read after `state`, applied: the messages new to the follower, and the state after them. */
export function advance<T extends { position: number }>(state: FollowState, rows: readonly T[], nowMs: number): { state: FollowState; fresh: T[] } {
  const skipped = new Map(state.skipped);
  let position = state.position;
  const fresh: T[] = [];
  for (const row of [...rows].sort((a, b) => a.position - b.position)) {
    if (row.position <= position) {
      // Below the position: new only if it was one of the skipped (else it was handed on already).
      if (skipped.delete(row.position)) fresh.push(row);
      continue;
    }
    for (let missing = position + 1; missing < row.position && skipped.size < MAX_SKIPPED; missing++) skipped.set(missing, nowMs);
    position = row.position;
    fresh.push(row);
  }
  for (const [missing, since] of skipped) if (nowMs - since > SKIPPED_WAIT_MS) skipped.delete(missing);
  return { state: { position, skipped }, fresh };
}

export type ReadByPosition = (after: number, also: number[], limit: number) => Promise<PositionedMessage[]>;

export class SendsFollower {
  constructor(
    private readonly read: ReadByPosition,
    private state: FollowState,
    private readonly now: () => number = Date.now,
  ) {}

  /** Every message stored since the last call (or since the follower began), in the order stored. */
  async next(): Promise<MessageRecord[]> {
    const handed: MessageRecord[] = [];
    for (;;) {
      const rows = await this.read(this.state.position, [...this.state.skipped.keys()], BATCH);
      const { state, fresh } = advance(this.state, rows, this.now());
      this.state = state;
      for (const { position: _position, ...message } of fresh) handed.push(message);
      if (rows.length < BATCH) return handed;
    }
  }
}
