/** Waking: the rate limit's count, and the watchers waiting for mail. */
import type { AttemptsOf } from './attempts.js';

/**
 * How a watcher wakes its session: `watch`, its own process (hook-watch) that starts a turn when it
 * exits; `socket`, the session's MCP server posting into the client's inbox socket; `refused`, a
 * socket that did not start a turn, given up (its row stays, with why, while its server runs).
 */
export type WatcherWay = 'watch' | 'socket' | 'refused';

/** One watcher, as read back. */
export interface WatcherRow {
  session: string;
  agent: string;
  pid: number;
  way: WatcherWay;
  /** Why a socket was given up; null otherwise. */
  note: string | null;
  startedAt: string;
}

export interface WakePort {
  /**
   * One transaction: wakes recorded before `since` are dropped (nobody counts them any more),
   * `allow` is called once with how many wakes of `agent` remain, and when it allows, this
   * wake is recorded at `now`. Returns what `allow` said.
   */
  countWake(agent: string, now: string, since: string, allow: (recent: number) => boolean): Promise<boolean>;
  /** Set the session's watcher (replacing any other): the process `pid`, known by `token`, waiting for `agent`'s mail, waking it `way`. */
  setWatcher(session: string, token: string, pid: number, now: string, agent: string, way: WatcherWay): Promise<void>;
  /** Every watcher that waits for an agent. */
  watchers(): Promise<WatcherRow[]>;
  /** The session's watcher, or null. */
  watcherOf(session: string): Promise<WatcherRow | null>;
  /** Say how the session's watcher wakes it now, and why, if `token` is still it. */
  noteWatcher(session: string, token: string, way: WatcherWay, note: string | null): Promise<void>;
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
  watcherOf: 'retryable',
  noteWatcher: 'retryable',
  isWatcher: 'retryable',
  clearWatcher: 'retryable',
} as const satisfies AttemptsOf<WakePort>;
