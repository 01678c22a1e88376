/**
 * What waking needs of the store, with its rules: the hourly rate limit's
 * window, which watchers wait in a repo, and whether a repo's copy of a
 * fan-out is already someone's. The wake paths (wake/) call this, never the store.
 */
import { formatStamp } from '../model/clock.js';
import type { ClientRoute } from '../model/records.js';
import type { InboxPort, RosterPort, SessionsPort, WakePort } from '../store/ports.js';
import { groupOf } from './names.js';

/** The rate limit counts the wakes of the last hour. */
export const WAKE_WINDOW_MICROS = 3_600_000_000;

export class Wakes {
  constructor(private readonly store: WakePort & InboxPort & SessionsPort & RosterPort) {}

  /** Count a wake of `agent` at `micros`, unless it was woken `perHour` times in the hour before (0: no limit). */
  take(agent: string, micros: number, perHour: number): Promise<boolean> {
    return this.store.countWake(agent, formatStamp(micros), formatStamp(micros - WAKE_WINDOW_MICROS), (recent) => perHour <= 0 || recent < perHour);
  }

  /** The watchers waiting for mail of an agent in `repo`. */
  async watchersIn(repo: string): Promise<Array<{ agent: string; pid: number }>> {
    return (await this.store.watchers()).filter((watcher) => groupOf(watcher.agent) === repo);
  }

  claimWatch(session: string, token: string, pid: number, now: string, agent: string): Promise<void> {
    return this.store.setWatcher(session, token, pid, now, agent);
  }

  holdsWatch(session: string, token: string): Promise<boolean> {
    return this.store.isWatcher(session, token);
  }

  releaseWatch(session: string, token: string): Promise<void> {
    return this.store.clearWatcher(session, token);
  }

  /** Whether a reader in `repo` has claimed, read or is showing (leased) its copy of a fan-out. */
  async fanoutTaken(fanoutId: string, repo: string): Promise<boolean> {
    return (await this.store.fanoutCopies(fanoutId, repo)).some((copy) => copy.claimedBy !== null || copy.readAt !== null || copy.leased);
  }

  routes(agent?: string): Promise<ClientRoute[]> {
    return this.store.routes(agent);
  }

  markQueued(threadId: string, now: string): Promise<boolean> {
    return this.store.markQueued(threadId, now);
  }

  /** When an agent was last seen ('' when it is not on the roster). */
  async lastSeen(name: string): Promise<string> {
    return (await this.store.getAgent(name))?.lastSeen ?? '';
  }
}
