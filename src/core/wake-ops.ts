/**
 * What waking needs of the store, with its rules: the hourly rate limit's window, the watchers
 * waiting for mail and which of them waits in a repo, and whether a repo's copy of a fan-out is
 * already someone's. The wake paths (wake/, the watcher) call this, never the store; the audit rows
 * of a wake are written here.
 */
import { textRow, type AuditRow } from '../audit/record.js';
import { formatStamp, stampOf, type Clock } from '../model/clock.js';
import type { ClientRoute, MessageRecord } from '../model/records.js';
import type { InboxPort, RosterPort, SessionsPort, WakePort } from '../store/ports.js';
import type { WatcherRow, WatcherWay } from '../store/ports/wake.js';
import type { AuditSink } from './audit-sink.js';
import { repoOf } from './names.js';
import type { MessageView } from './views.js';
import type { ChangeFeed } from './store-changes.js';

/** Where a session's mail stands at one look, for waking it through its client's socket: what waits, and where its turn stands. */
export interface NudgeLook {
  /** The name the session reads as (over a hub, the one its token and conversation id give). */
  reader: string;
  pending: number;
  presence: { state: string; since: string } | null;
  /** The oldest waiting messages (a few), read only while the session is idle with mail. */
  waiting: MessageView[];
}

/**
 * What waking through a socket asks of the bus: this machine's (`busNudgeDesk`), or a hub's, for a
 * relay on the agent's machine (remote/nudge-desk.ts), where each is one call and the token says
 * whose session it is. The posting itself is always done here, a child of the client.
 */
export interface NudgeDesk {
  /** How often the watcher row is said again while the socket waits (null: never; a hub takes a row not said for a while as gone). */
  readonly heartbeatMs: number | null;
  /**
   * The longest one wait on its change feed lasts when nothing moves (null: AGENT_BUS_WATCH_POLL_SECONDS,
   * the fallback where file-system events run out). A hub answers a wait as soon as its feed moves, so
   * a relay asks less often.
   */
  readonly waitMs: number | null;
  changes(): ChangeFeed;
  nowMicros(): number;
  look(reader: string): Promise<NudgeLook>;
  /** Mail several idle sessions share wakes one: the first to claim it. */
  claimShared(messageId: string): Promise<boolean>;
  /** Count this wake against the hourly limit (`perHour`, 0: none); false when it is past it. */
  allow(reader: string, micros: number, perHour: number): Promise<boolean>;
  /** A nudge posted, refused by the socket, or held back by the rate limit: audited as a `wake`. */
  note(reader: string, message: MessageView, status: 'posted' | 'refused' | 'rate-limited', micros: number): Promise<void>;
  /** Be the session's watcher (its `socket` row), waiting for `reader`'s mail; called again as a heartbeat. */
  watch(reader: string): Promise<void>;
  /** Give the socket up, saying why: the session's hook-watch wakes it from its next turn on. */
  giveUp(reason: string): Promise<void>;
  /** Let the watcher row go. */
  stop(): Promise<void>;
}

/** The rate limit counts the wakes of the last hour. */
export const WAKE_WINDOW_MICROS = 3_600_000_000;

/** What woke an agent: a wake.json command, its own watcher, a turn the sender queued, or its MCP server posting into its client's inbox socket. */
export type WakeDriver = 'command' | 'watch' | 'push' | 'socket';

/** The audit row of a wake: which message, whom, how, and what came of it. */
export function wakeRow(ts: string, actor: string, message: MessageRecord, to: string, driver: WakeDriver, status: string): AuditRow {
  const text = { id: message.messageId, from: message.fromAgent, to, threadId: message.threadId, body: message.body };
  return textRow('wake', ts, actor, text, { wake_driver: driver, wake_status: status });
}

export class Wakes {
  constructor(
    private readonly store: WakePort & Pick<InboxPort, 'fanoutCopies'> & Pick<SessionsPort, 'routes' | 'markQueued' | 'tick'> & Pick<RosterPort, 'getAgent'>,
    private readonly audit: AuditSink,
    private readonly clock: Clock,
  ) {}

  /** Count a wake of `agent` at `micros`, unless it was woken `perHour` times in the hour before (0: no limit). */
  count(agent: string, micros: number, perHour: number): Promise<boolean> {
    return this.store.countWake(agent, formatStamp(micros), formatStamp(micros - WAKE_WINDOW_MICROS), (recent) => perHour <= 0 || recent < perHour);
  }

  /** A watcher woke its agent for `message` (asked at `micros`), or was held back by the rate limit: audited as `wake`. */
  noteWatched(reader: string, message: MessageRecord, status: 'woke' | 'rate-limited', micros: number): void {
    this.audit.append([wakeRow(formatStamp(micros), reader, message, reader, 'watch', status)]);
  }

  /**
   * Whether this server may nudge its session for mail that several sessions share (sent to their client
   * address or their repo): the first idle session's server to ask takes it, so one session gets the turn
   * that reads it, and the others no empty one.
   */
  async claimSharedNudge(messageId: string): Promise<boolean> {
    return (await this.store.tick(`nudge:${messageId}`, 'socket', stampOf(this.clock))) === 1;
  }

  /** An MCP server posted a nudge into its session's inbox socket for `message` (or was held back, or refused): audited as `wake`. */
  notePosted(reader: string, message: MessageRecord, status: string, micros: number): void {
    this.audit.append([wakeRow(formatStamp(micros), reader, message, reader, 'socket', status)]);
  }

  /** The watchers waiting for mail of an agent in `repo` (a socket given up waits for nothing). */
  async watchersIn(repo: string): Promise<WatcherRow[]> {
    return (await this.store.watchers()).filter((watcher) => watcher.way !== 'refused' && repoOf(watcher.agent) === repo);
  }

  /** Every session's watcher, and how it wakes its session: what doctor and agents show. */
  watchers(): Promise<WatcherRow[]> {
    return this.store.watchers();
  }

  /** The session's watcher, or null. */
  watcherOf(session: string): Promise<WatcherRow | null> {
    return this.store.watcherOf(session);
  }

  /** Become the session's watcher (replacing any other), waiting for `agent`'s mail, waking it `way`. */
  startWatching(session: string, token: string, pid: number, agent: string, way: WatcherWay = 'watch'): Promise<void> {
    return this.store.setWatcher(session, token, pid, stampOf(this.clock), agent, way);
  }

  /** A socket watcher gives its socket up (`note` says why): a hook-watch process wakes the session from its next turn on. */
  giveUpSocket(session: string, token: string, note: string): Promise<void> {
    return this.store.noteWatcher(session, token, 'refused', note);
  }

  /** Whether `token` is still the session's watcher (a newer one replaces it). */
  isWatching(session: string, token: string): Promise<boolean> {
    return this.store.isWatcher(session, token);
  }

  /** Stop being the session's watcher, if still it. */
  stopWatching(session: string, token: string): Promise<void> {
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
