/** Waking: the rate limit's count, and the watchers waiting for mail. */
import type { AttemptsOf } from './attempts.js';

export interface WakePort {
  /**
   * One transaction: wakes recorded before `since` are dropped (nobody counts them any more),
   * `allow` is called once with how many wakes of `agent` remain, and when it allows, this
   * wake is recorded at `now`. Returns what `allow` said.
   */
  countWake(agent: string, now: string, since: string, allow: (recent: number) => boolean): Promise<boolean>;
  /** Set the session's watcher (replacing any other): the process `pid`, known by `token`, waiting for `agent`'s mail. */
  setWatcher(session: string, token: string, pid: number, now: string, agent: string): Promise<void>;
  /** Every watcher: the agent it waits for, and its process. */
  watchers(): Promise<Array<{ agent: string; pid: number }>>;
  /** Whether `token` is still the session's watcher (a newer one replaces it). */
  isWatcher(session: string, token: string): Promise<boolean>;
  /** Clear the session's watcher, if `token` is still it. */
  clearWatcher(session: string, token: string): Promise<void>;
}

export const WAKE_ATTEMPTS = {
  // Run again, a wake counts twice against the limit.
  countWake: 'once',
  setWatcher: 'retryable',
  watchers: 'retryable',
  isWatcher: 'retryable',
  clearWatcher: 'retryable',
} as const satisfies AttemptsOf<WakePort>;
