/** The change feed: what a waiting process listens to. */
import type { AttemptsOf } from './attempts.js';

/**
 * A hint that the store may have changed. A hint is never the only signal: after each one (and
 * after a reconnect) the waiter reads the store again.
 */
export interface ChangeFeed {
  /** A number that moves on whenever another process may have committed since it was last read. */
  version(): Promise<number>;
  /** Wait up to `ms` for a hint; true when one came, false when the time ran out. */
  wait(ms: number): Promise<boolean>;
  /** End the current wait now. */
  interrupt(): void;
  close(): Promise<void>;
}

export interface ChangesPort {
  /** A feed of this store's changes, for one waiting loop. */
  changes(): ChangeFeed;
}

export const CHANGES_ATTEMPTS = {
  changes: 'retryable',
} as const satisfies AttemptsOf<ChangesPort>;
