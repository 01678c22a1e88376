/**
 * The storage contract. Every method is one whole operation whose transaction
 * runs inside the backend, so a backend whose driver is asynchronous
 * (PostgreSQL) can implement it as readily as the embedded SQLite one.
 * Domain decisions that need data read inside the transaction are passed in
 * as synchronous functions from the core (for example, who a send reaches).
 */
import type { NoticeCandidate, NoticeRecord, Severity } from '../model/notices.js';
import type { AgentRecord, BrainState, ClientRoute, MessageRecord, PruneCounts, Registration, SessionKey, SessionRecord, TokenRecord } from '../model/records.js';
import type { TableModel, TableRow } from './tables.js';
import type { SearchFilter, SearchTerm } from '../model/search.js';
import type { ReceiptRecord, ReceiptWay } from '../model/receipts.js';

export type { AgentRecord, BrainState, ClientRoute, MessageRecord, PruneCounts, Registration, SessionKey, SessionRecord, TokenRecord } from '../model/records.js';

/** Which roster rows a send needs to see to decide its recipients. */
export type RosterQuery = { kind: 'all' } | { kind: 'name'; name: string } | { kind: 'group'; group: string };

export interface PlannedRow {
  messageId: string;
  toAgent: string;
  toGroup: string | null;
}

export interface SendPlan {
  kind: 'direct' | 'group' | 'broadcast';
  fanoutId: string | null;
  threadId: string | null;
  rows: PlannedRow[];
}

export interface SendInput {
  /** Registrations of the speaker, made in the same transaction as the send. */
  register: Registration[];
  from: string;
  addressedTo: string;
  body: string;
  sentAt: string;
  roster: RosterQuery;
  /** Decides the recipients from the roster rows read inside the transaction; may throw to abort. */
  plan(candidates: AgentRecord[]): SendPlan;
}

export interface ReaderIdentity {
  name: string;
  group: string;
  /** The client address the reader shares with sibling sessions, or null. */
  clientAddress: string | null;
  isSession: boolean;
}

/**
 * A reader's inbox, as the store selects it (see QUERIES.md beside this file): the
 * reader's own unread mail; for a session, unread mail at its client address that
 * it did not send, unless it holds its own copy of that fan-out; and unread mail to
 * its bare repo name while no agent holds that name, unless it or its client
 * address holds its own copy. Mail leased past `now` is left out. Oldest first
 * (sent_at, then message_id), at most `limit`.
 */
export interface InboxQuery {
  reader: ReaderIdentity;
  limit: number;
  /** Leave out fan-out copies a repo-mate already claimed (the Stop hook's view). */
  actionableOnly: boolean;
  now: string;
}

/** One copy of a fan-out in the reader's repo, as a take sees it. */
export interface FanoutCopy {
  messageId: string;
  fanoutId: string;
  toAgent: string;
  claimedBy: string | null;
  readAt: string | null;
}

/** What the core decides about the rows a read takes (core/inbox.ts). */
export interface InboxDecision {
  /** The rows as they are after the take: claimed_by set where this take claims. */
  rows: MessageRecord[];
  /** Fan-outs to claim for the reader in its repo: every unclaimed copy there gets claimed_by = the reader. */
  claims: string[];
  /** Ids of rows whose claim a repo-mate's copy contested (audited as `claim`). */
  contested: string[];
  /** Other copies (ids) that reading these rows settles: marked read with them. */
  settle: string[];
}

/**
 * What a take holds, as its reader gives it back: rows leased by `lease`, and the fan-outs it claimed
 * (a claim is given back only for a fan-out among those rows, where the reader still holds it).
 */
export interface HeldTake {
  lease: string;
  messageIds: string[];
  claims: string[];
}

/** Mail a take showed, as its reader confirms it (over the hub, in a request of its own): the take's lease proves it. */
export interface ShownTake {
  reader: ReaderIdentity;
  lease: string;
  messageIds: string[];
  settle: string[];
}

export interface InboxTake {
  query: InboxQuery;
  /**
   * Called once inside the take's transaction with the rows selected and every copy, in
   * the reader's repo, of the fan-outs among them.
   */
  decide(rows: MessageRecord[], copies: FanoutCopy[]): InboxDecision;
}

export interface ReadOutcome {
  /** The rows as they are after the read: read_at, delivered_at and claimed_by updated. */
  messages: MessageRecord[];
  decision: InboxDecision;
}

export interface TakeOutcome extends ReadOutcome {
  /** The lease the take holds on its rows. */
  lease: string;
}

/** An unread message to a name nobody holds, which may still be waiting for a repo's first reader. */
export interface OrphanMail {
  toAgent: string;
  messageId: string;
  fanoutId: string | null;
}

/** The roster and its unread mail, read in one snapshot. */
export interface RosterSnapshot {
  agents: AgentRecord[];
  /** Unread messages per recipient name, whoever holds it. */
  unread: Array<{ toAgent: string; n: number }>;
  /** The unread mail of the recipients `orphansOf` picked. */
  orphans: OrphanMail[];
  /** For each fan-out among the orphans: every recipient it has a copy for. */
  copyHolders: Map<string, string[]>;
  /** Session rows not marked ended: who may still be holding a session address. */
  sessionHolders: SessionRecord[];
}

export interface ForgetOutcome {
  removed: boolean;
  /** Unread mail still addressed to the forgotten name. */
  pending: number;
}

/** The roster: who is on the bus, in which repo, seen when. */
export interface RosterPort {
  register(registrations: Registration[], now: string): Promise<void>;
  touch(names: string[], now: string): Promise<void>;
  getAgent(name: string): Promise<AgentRecord | null>;
  /**
   * Every row that may belong to repo `group`: its group column is `group`, its name is
   * `group`, or it has no group column and its name begins `group/`. A superset: the
   * core decides membership (core/roster.ts).
   */
  agentsOfRepo(group: string): Promise<AgentRecord[]>;
  /**
   * The roster, its unread counts and its session holders in one snapshot. `orphansOf` is
   * called once, with the roster and the names unread mail is addressed to, and names the
   * recipients (not on the roster) whose unread mail and fan-out copy holders to read too.
   */
  roster(orphansOf: (agents: AgentRecord[], recipients: string[]) => string[]): Promise<RosterSnapshot>;
  forget(name: string): Promise<ForgetOutcome>;
  /** Take these names off the roster, in one transaction; the names that were there. */
  removeAgents(names: string[]): Promise<string[]>;
  /** Roster rows registered for a repo path. */
  agentsAt(repoPath: string): Promise<AgentRecord[]>;
  setTopic(name: string, topic: string | null): Promise<void>;
  /**
   * Take a name init replaced off the roster. With `moveTo`, its unread mail is re-addressed
   * there; without, it stays (and is counted) for whoever reads that name next.
   */
  retire(old: string, moveTo: string | null): Promise<{ removed: boolean; moved: number; left: number }>;
}

/** A message with its place in the order of storing. */
export interface PositionedMessage extends MessageRecord {
  position: number;
}

/** Mail: sending, the inbox and its claims, threads. */
export interface MailPort {
  send(input: SendInput): Promise<MessageRecord[]>;
  /** The inbox, unchanged (a peek). */
  peekInbox(query: InboxQuery): Promise<MessageRecord[]>;
  /**
   * Read: select, decide once, then in the same transaction claim what the decision
   * claims and mark the rows and the copies it settles read and delivered at `now`, by `via`.
   */
  readInbox(input: InboxTake & { via: ReceiptWay }): Promise<ReadOutcome>;
  /**
   * Take, for a hook that marks mail delivered only once it has printed it (so a hook
   * that dies first loses nothing): select, decide once, claim, and lease the rows with
   * `lease` (a stamp, compared as text with later queries' `now`, then a token), leaving them unread.
   */
  takeInbox(input: InboxTake & { lease: string }): Promise<TakeOutcome>;
  /**
   * Mark mail a take showed read and delivered at `now` by `via`: each of its rows still unread,
   * still leased by the take and addressed to a name the reader reads (its own, its client
   * address, its bare repo name); and each copy the take settles that is still unread, at the
   * reader's client address, of a fan-out among the rows marked. The rows marked, as they now stand.
   */
  markDelivered(shown: ShownTake, now: string, via: ReceiptWay): Promise<MessageRecord[]>;
  /**
   * Mark these copies delivered at `now` by `via` where they were not delivered yet (shown, not
   * taken: a peek by the model, the dashboard). The ids of the copies this marked.
   */
  recordDelivered(messageIds: string[], now: string, via: ReceiptWay): Promise<string[]>;
  /**
   * The receipts of the send `id` names, every copy of it ordered by recipient: the message with
   * that id (with the other copies of its fan-out, if it has one), or the copies of the fan-out
   * with that id. Empty when it names neither.
   */
  receipts(id: string): Promise<ReceiptRecord[]>;
  /**
   * The sends a copy's id or a fan-out's id beginning with `prefix` names, each by the id `receipts`
   * takes for it (its fan-out's id, else its message id): at most `limit`, in order.
   */
  sendIdsStartingWith(prefix: string, limit: number): Promise<string[]>;
  /**
   * Give back mail a take could not show: its leases (only where they are still the take's),
   * and its claims where the reader still holds them and the copy is unread.
   */
  releaseLeases(reader: ReaderIdentity, taken: HeldTake): Promise<void>;
  pendingCount(reader: ReaderIdentity): Promise<number>;
  thread(threadId: string, limit: number): Promise<MessageRecord[]>;
  /** Thread ids that begin with `prefix`, in order, at most `limit` of them. */
  threadIdsStartingWith(prefix: string, limit: number): Promise<string[]>;
  /** The newest `limit` messages of the bus, oldest first. */
  recentMessages(limit: number): Promise<MessageRecord[]>;
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
  /** The copies of a fan-out in one repo, with whether each is leased. */
  fanoutCopies(fanoutId: string, repo: string): Promise<Array<FanoutCopy & { leased: boolean }>>;
}

/** Sessions of a client, the routes to reach them from outside, and their counters. */
export interface SessionsPort {
  sessionRows(clientAddress?: string): Promise<SessionRecord[]>;
  claimSession<D extends ClaimDecision>(input: ClaimInput<D>): Promise<ClaimOutcome<D>>;
  /**
   * Mark a session ended; `giveUp` decides, from the client's rows read inside
   * the transaction, whether its address is given up (mail to the client address).
   */
  endSession(
    key: SessionKey,
    repo: string,
    now: string,
    giveUp: (rows: SessionRecord[], own: SessionRecord) => boolean,
  ): Promise<{ name: string; move: AddressMove | null } | null>;
  /** Returns the old name and how many unread messages moved with the rename. */
  renameSession(input: RenameInput): Promise<{ from: string; moved: number }>;
  bindSessionKey(key: SessionKey, sessionKey: string): Promise<void>;
  /** Note that a session was heard from at `now` (a hub's sessions live while they are heard from). */
  touchSession(key: SessionKey, now: string): Promise<void>;
  route(threadId: string): Promise<ClientRoute | null>;
  /**
   * Write a route (insert or replace its row). A route given no turn state keeps the one
   * stored; one that says `busy` clears the queued mark (a turn has started).
   */
  saveRoute(route: ClientRoute): Promise<void>;
  routes(agent?: string): Promise<ClientRoute[]>;
  /** Mark an idle session as queued to, once until its next turn starts: false when it is busy or already queued. */
  markQueued(threadId: string, now: string): Promise<boolean>;
  /** Add one to a session's counter and return the new value. */
  tick(session: string, counter: string, now: string): Promise<number>;
}

/** Notices: publish, deliver with receipts, list, acknowledge, clear. */
export interface NoticesPort {
  /** Store a notice, in one transaction with the removal of the expired ones and of those `evict` picks. */
  publishNotice(input: PublishNoticeInput): Promise<{ evicted: NoticeRecord[]; expired: NoticeRecord[] }>;
  /**
   * Decide which notices a hook shows a session and, in the same transaction,
   * give the info notices shown a receipt: two hooks of one session never both show one.
   */
  deliverNotices<S extends NoticeDecision>(input: DeliverNoticesInput<S>): Promise<S>;
  /** Whether any notice is due to the query's session (a read: a hub asks it beside the inbox's). */
  anyNoticeDue(query: DueNoticesQuery): Promise<boolean>;
  notices(filter: NoticeFilter): Promise<NoticeListing[]>;
  channelCounts(now: string): Promise<ChannelCount[]>;
  /** Silence a notice for one session; null when there is no such notice. */
  acknowledgeNotice(noticeId: string, session: string, now: string): Promise<NoticeRecord | null>;
  clearNotices(target: NoticeClearTarget): Promise<NoticeRecord[]>;
}

/** The brain's channel, its state, and the markers written back. */
export interface BrainPort {
  /** Apply a reconcile's plan to a channel and write the brain state, in one transaction. */
  reconcileChannel(input: ReconcileInput): Promise<ReconcileOutcome>;
  /** Record a fetch that did not reconcile (the source was unavailable): the channel is untouched. */
  recordBrainState(state: BrainState): Promise<void>;
  brainState(channel: string): Promise<BrainState | null>;
  /** Claim a brain marker for writing back: false when it was taken before (by any process). */
  takeMarker(key: string, session: string, now: string): Promise<boolean>;
}

/** Waking: the rate limit's count, and the watchers waiting for mail. */
export interface WakePort {
  /**
   * One transaction: wakes recorded before `since` are dropped (nobody counts them any more),
   * `allow` is called once with how many wakes of `agent` remain, and when it allows, this
   * wake is recorded at `now`. Returns what `allow` said.
   */
  takeWake(agent: string, now: string, since: string, allow: (recent: number) => boolean): Promise<boolean>;
  /** Become the session's watcher (replacing any other), waiting for `agent`'s mail. */
  claimWatch(session: string, token: string, pid: number, now: string, agent: string): Promise<void>;
  /** Every watcher: the agent it waits for, and its process. */
  watchers(): Promise<Array<{ agent: string; pid: number }>>;
  /** Whether `token` is still the session's watcher (a newer one replaces it). */
  holdsWatch(session: string, token: string): Promise<boolean>;
  /** Stop being the session's watcher, if still it. */
  releaseWatch(session: string, token: string): Promise<void>;
}

/**
 * What a waiting process listens to: a hint that the store may have changed. A hint is never
 * the only signal: after each one (and after a reconnect) the waiter reads the store again.
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

/** The hub's tokens: each stored as a hash of its secret, found by its id. */
export interface TokensPort {
  /** Store a new token and register its agent (so mail to it is accepted), in one transaction. */
  createToken(token: TokenRecord, register: Registration[]): Promise<void>;
  /** The token with this id, revoked or expired ones too: the caller decides. */
  tokenById(tokenId: string): Promise<TokenRecord | null>;
  /** Every token, oldest first. */
  listTokens(): Promise<TokenRecord[]>;
  /** Revoke the tokens with this id, or speaking for this agent, not yet revoked; the ids revoked. */
  revokeTokens(idOrAgent: string, now: string): Promise<string[]>;
  /** Note a use: last_used_at = now, only when it was last noted before `unlessSince` (a write at most that often). */
  noteTokenUse(tokenId: string, now: string, unlessSince: string): Promise<void>;
}

/** Moving a whole bus between engines (`agent-bus store copy`), table by table of the shared model (tables.ts). */
export interface CopyPort {
  /** A table's rows in batches, in its order (messages in the order they were written). */
  exportRows(table: TableModel, batch: number): AsyncGenerator<TableRow[]>;
  /** Insert rows as they are, in one transaction per call. */
  importRows(table: TableModel, rows: TableRow[]): Promise<void>;
  countRows(table: TableModel): Promise<number>;
}

/** A backend: every port, over one database. */
/** What `prune` removes, in one transaction. */
export interface PruneInput {
  /** Mail of every thread whose messages are all read and all sent before this (unread mail never goes). */
  mailBefore: string;
  /** Notices expired by this, with their receipts, and receipts whose notice is gone already. */
  now: string;
  /** Session rows that ended before this (their resume window has passed). */
  sessionsEndedBefore: string;
  /** Count what would go, remove nothing. */
  dryRun: boolean;
}


/** Keeping the store from growing for ever. */
export interface MaintenancePort {
  prune(input: PruneInput): Promise<PruneCounts>;
  /**
   * Give the space freed back to the file system where the engine does not on its own (SQLite's
   * incremental vacuum): the store's size before and after, or null where the engine reclaims it
   * by itself (PostgreSQL's autovacuum).
   */
  reclaimSpace(): Promise<{ before: number; after: number } | null>;
  /** Take a maintenance task's turn when it last ran before `notSince` (or never): true for one caller only. */
  claimMaintenance(task: string, now: string, notSince: string): Promise<boolean>;
  /** The engine, the schema version the store is at and the one this program writes, and a quick integrity check's findings (none: whole). */
  integrity(): Promise<StoreIntegrity>;
}

export interface StoreIntegrity {
  engine: 'sqlite' | 'postgres';
  schemaVersion: number;
  targetVersion: number;
  problems: string[];
}

/** A message's place in the order of storing and the little a list of threads shows of it. */
export interface MessageGlance {
  position: number;
  threadId: string;
  fromAgent: string;
  toAgent: string;
  addressedTo: string | null;
  sentAt: string;
  /** The body's first code points (GLANCE_CHARS at most). */
  preview: string;
}

/** How much a glance shows of a body. */
export const GLANCE_CHARS = 160;
/** The sender-and-address pairs a window keeps: the busiest. */
export const MAIL_PAIRS = 300;

/** A thread's counts: its sends (a fan-out is one), the copies stored, those unread. */
export interface ThreadCount {
  threadId: string;
  sends: number;
  copies: number;
  unread: number;
  firstSentAt: string;
  lastSentAt: string;
  /** The position of its newest message. */
  lastPosition: number;
}

/** The sends of a window of time: by hour (`YYYY-MM-DDTHH`), and by sender and address (a fan-out once, to what it was addressed to). */
export interface MailWindow {
  hours: Array<{ hour: string; sends: number }>;
  pairs: Array<{ from: string; to: string; sends: number }>;
}

/** What the dashboard reads beside the other ports: each answers from an index, whatever the size of the bus. */
export interface OverviewPort {
  /** The messages stored before position `before` (null: from the newest), newest first, at most `limit`. */
  glancesBefore(before: number | null, limit: number): Promise<MessageGlance[]>;
  /** The counts of each thread named (those with no message are left out). */
  threadCounts(threadIds: string[]): Promise<ThreadCount[]>;
  /**
   * The sends at or after `since`. Positions follow sending time, so the window is found by
   * reading back from the newest message to the first older than `since`: its cost follows the
   * window, not the bus.
   */
  mailSince(since: string): Promise<MailWindow>;
}

/** Full-text search over mail bodies. */
export interface SearchPort {
  /**
   * The copies whose body holds every term (words and prefixes as whole words, phrases in order;
   * case-insensitive; letters and digits make words), that `filter` lets through, newest first, at
   * most `limit`. The index is brought up to date with what was stored since the last search first.
   */
  searchMessages(terms: SearchTerm[], filter: SearchFilter, limit: number): Promise<PositionedMessage[]>;
  /** Index the mail stored since the index was last brought up to date (a send pays nothing for search). */
  indexForSearch(): Promise<void>;
  /**
   * From now on, index this store's sends in the background once they commit, so that a search
   * after a burst has little left to index: for a process that lives on (the hub, an MCP server,
   * the dashboard, the chat). The sends themselves still wait for nothing of it. An engine whose
   * catching up at search time is cheap may do nothing.
   */
  keepSearchIndexCurrent(): void;
}

export interface Store extends RosterPort, MailPort, SessionsPort, NoticesPort, BrainPort, WakePort, TokensPort, ChangesPort, CopyPort, MaintenancePort, OverviewPort, SearchPort {
  /** Where the data lives, as shown to the user (a file path, or a URL without its password). */
  readonly location: string;
  close(): Promise<void>;
}

export interface PublishNoticeInput {
  notice: NoticeRecord;
  /** Notices that expired at or before this are removed first, receipts and all (and returned). */
  expireBefore: string;
  /** Called once with the channel's notices after the insert (the new one included): the ones to remove. Throws to refuse the publish. */
  evict(live: NoticeRecord[]): NoticeRecord[];
}

/** The notices due for one session at one hook. */
export interface DueNoticesQuery {
  session: string;
  severities: Severity[];
  /** The session's channels; ignored when `all`. Global notices are always due. */
  channels: string[];
  all: boolean;
  now: string;
  /** Before a tool call: notices due besides the critical ones (the brain entries a refresh just restored). */
  alsoIds?: string[];
}

/** What a delivery decides that the store must write: the info notices shown, which get a receipt. */
export interface NoticeDecision {
  receipts: string[];
}

/**
 * One delivery, one transaction: the due notices are counted by severity, `readLimit` says from
 * the counts how many to read (in the order severity, priority descending, age, id), `decide` is
 * called once with them, and the receipts it names are written before the transaction ends.
 */
export interface DeliverNoticesInput<S extends NoticeDecision = NoticeDecision> {
  query: DueNoticesQuery;
  readLimit(totalDue: Record<Severity, number>): number;
  decide(due: NoticeCandidate[], totalDue: Record<Severity, number>): S;
}

export interface NoticeFilter {
  now: string;
  channel?: string | null;
  includeExpired?: boolean;
}

export interface NoticeListing extends NoticeRecord {
  /** Sessions that were shown this notice once (info) or acknowledged it. */
  deliveredTo: number;
  acknowledgedBy: number;
}

export interface ChannelCount {
  channel: string | null;
  total: number;
  critical: number;
  alert: number;
  info: number;
  /** When the last of its live notices runs out. */
  lastExpiry: string;
}

export type NoticeClearTarget = { kind: 'id'; noticeId: string } | { kind: 'channel'; channel: string | null } | { kind: 'all' };

export interface ClaimDecision {
  /** The address this session takes: a session address, or the client address it must share. */
  name: string;
  /** Rows ended longer ago than the resume window: deleted. */
  expire: SessionKey[];
  /** Rows whose process is gone but which never said so: marked ended now. */
  endCrashed: SessionKey[];
  /** Numbered addresses nobody holds any more: their unread mail moves to the client address. */
  giveUp: string[];
  /** An ended row whose address this session takes back: replaced by the new row. */
  replace: SessionKey[];
  /** The roster rows the session's name needs, written in the same transaction. */
  registrations: Registration[];
}

export interface ClaimInput<D extends ClaimDecision> {
  clientAddress: string;
  /** The client address's repo: its roster rows are read for the decision, and given-up mail stays within it. */
  repo: string;
  /** The new row, without the name the decision gives it. */
  row: Omit<SessionRecord, 'name' | 'endedAt'>;
  now: string;
  /**
   * Called once inside the claim's transaction with the client address's session rows and
   * the rows that may belong to its repo (as agentsOfRepo reads them).
   */
  decide(rows: SessionRecord[], roster: AgentRecord[]): D;
}

export interface AddressMove {
  name: string;
  /** Unread messages that moved to the client address. */
  moved: number;
}

export interface ClaimOutcome<D extends ClaimDecision> {
  decision: D;
  /**
   * Each address given up: its unread mail moved to the client address, except fan-out
   * copies the client address holds a copy of already; the mail it sent that nobody has
   * read now comes from the client address; its roster row removed.
   */
  givenUp: AddressMove[];
}

export interface RenamePlan {
  from: string;
  /** Ended rows holding the new name (a label left behind): deleted, their mail taken over. */
  takeOver: SessionKey[];
  /**
   * False when renaming away from the shared client address: its mail stays for the others.
   * True: unread mail to the old name moves to the new one, mail the old name sent that nobody
   * read now comes from the new one, and the old name leaves the roster.
   */
  moveMail: boolean;
  /** The roster rows the new name needs (it keeps its own topic, else takes the old name's). */
  registrations: Registration[];
}

export interface RenameInput {
  key: SessionKey;
  to: string;
  now: string;
  /** Decides the rename, once, from the client's session rows read inside the transaction; throws to refuse it. */
  plan(rows: SessionRecord[]): RenamePlan;
}

/** What a reconcile changes in a channel (core/notices.ts planReconcile decides it). */
export interface ReconcilePlan {
  /** Notices that stay, id and receipts with them. */
  kept: NoticeRecord[];
  /** Kept notices whose priority changes (priority is not part of the content). */
  reprioritize: Array<{ noticeId: string; priority: number }>;
  /** New notices to insert. */
  added: NoticeRecord[];
  /** Notices to remove, receipts and all. */
  removed: NoticeRecord[];
}

export interface ReconcileInput {
  channel: string;
  /** Called once inside the transaction with the channel's notices. */
  plan(current: NoticeRecord[]): ReconcilePlan;
  /** The brain's state, written in the same transaction. */
  state: BrainState;
}

export interface ReconcileOutcome {
  kept: NoticeRecord[];
  added: NoticeRecord[];
  removed: NoticeRecord[];
}
