/** Following what is stored, in the order it was stored (`tail -f`, the audit check, the hub's feed). */
import type { MessageRecord } from '../../model/records.js';
import type { AttemptsOf } from './attempts.js';

/** A message with its place in the order of storing. */
export interface PositionedMessage extends MessageRecord {
  position: number;
}

export interface FollowPort {
  /** The position of the newest message stored: 0 when there is none. */
  lastPosition(): Promise<number>;
  /**
   * Messages in the order they were stored, for a follower (`tail -f`): those past position
   * `after`, and those at the positions in `also`, ordered by position, at most `limit`. Each
   * message stored takes a greater position than the last one taken (SQLite's rowid,
   * PostgreSQL's seq). Where sends commit concurrently (PostgreSQL), a position can become
   * visible after a greater one: a follower asks again for what it saw skipped.
   */
  messagesByPosition(after: number, also: number[], limit: number): Promise<PositionedMessage[]>;
}

export const FOLLOW_ATTEMPTS = {
  lastPosition: 'retryable',
  messagesByPosition: 'retryable',
} as const satisfies AttemptsOf<FollowPort>;
