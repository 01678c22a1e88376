/**
 * The bus's operations: what every surface (CLI, MCP server, hooks, chat)
 * calls. Each runs one store transaction and, once it has committed,
 * appends its audit rows in a single write.
 */
import { AuditLog } from '../audit/log.js';
import { digestBody, messageRow, sessionRow, type AuditRow, type BodyDigest } from '../audit/record.js';
import { decideClaim, isNumbered, keyOf, routeUnchanged, type Claimant, type ClaimContext } from './sessions.js';
import type { SessionLiveness } from './liveness.js';
import { heldBy, hubSessionLive, hubSessionRow, HUB_SESSION_TOUCH_MICROS, isHubSession } from './hub-sessions.js';
import { planSend, rosterQueryFor, unknownRecipient, NoSuchRecipient } from './addressing.js';
import { formatStamp, nowMicros, nowStamp } from '../model/clock.js';
import { BusError, InvalidInputError, InvalidNameError } from '../model/errors.js';
import { clientAddressOf, composeName, groupOf, nameProblem, parseNameLenient, BROADCAST } from './names.js';
import type { BusSettings } from './settings.js';
import { agentView, messageKind, messageView, type AgentView, type MessageKind, type MessageView } from './views.js';
import type { AddressMove, AgentRecord, ChangeFeed, ClientRoute, MessageRecord, PositionedMessage, ReaderIdentity, Registration, SessionKey, SessionRecord, Store, StoreIntegrity } from '../store/ports.js';
import { BrainRecords } from './brain-ops.js';
import { Wakes } from './wake-ops.js';
import { pendingByName, registrationsFor, repoMembers, waitingRepoNames } from './roster.js';
import { Notices } from './notice-ops.js';
import { decideTake, newLease } from './inbox.js';
import { SendsFollower } from './follow-sends.js';
import { Tokens } from './tokens.js';
import { AuditCheck } from './audit-check.js';
import { Retention } from './retention.js';
import { quoted } from '../model/quote.js';
import { searchMail, type SearchHit, type SearchRequest } from './search.js';
import { findSend, sendStatus, type MessageStatus } from './receipts.js';
import { awaitSend } from './receipt-wait.js';
import type { ReceiptState, ReceiptWay } from '../model/receipts.js';

import { foldThread, mailDay, rosterPage, threadPage, THREAD_ROWS, type MailDay, type RosterPage, type ThreadPage, type ThreadView } from './overview.js';

export const MAX_THREAD_ID_LENGTH = 200;
export const MAX_TOPIC_LENGTH = 200;

export interface SendRequest {
  from: string;
  to: string;
  body: string;
  threadId?: string | null;
  /** Roster rows to write in the send's transaction (the speaker registering itself). */
  register?: Registration[];
  /** Names besides the sender that this send must not reach. */
  skip?: string[];
}

export interface SendResult {
  to: string;
  kind: MessageKind;
  message_ids: string[];
  recipients: string[];
  thread_id: string | null;
  sent_at: string;
  /** A fan-out's own id: `status` takes it (or any of message_ids) for the whole send. */
  fanout_id: string | null;
  message_id?: string;
}

export interface ReadRequest {
  reader: string;
  markRead?: boolean;
  limit?: number;
  actionableOnly?: boolean;
  /**
   * How the mail reaches its reader, recorded as each copy's receipt: a read marks it read and
   * delivered; a peek marks it delivered only. Null: a look nobody is shown (nothing is recorded);
   * a read must say.
   */
  via: ReceiptWay | null;
  /** The mail is being handed to its reader's model or screen: audit a `deliver` row per message. */
  deliver?: boolean;
}

/** A delivery by a hook or the watcher: whose mail, and the way it reaches its model. */
export interface DeliveryRequest {
  reader: string;
  via: ReceiptWay;
  actionableOnly?: boolean;
  limit?: number;
}

/** Mail taken and shown but not yet confirmed printed (see Bus.takeForShowing): all a confirmation needs, as JSON. */
export interface PendingDelivery {
  via: ReceiptWay;
  /** The take's lease: only rows it still holds are marked. */
  lease: string;
  message_ids: string[];
  /** Fan-outs the take claimed for the reader (given back with the lease if the mail is not printed). */
  claims: string[];
  /** Copies at the reader's client address its read settles. */
  settle: string[];
  /** Rows whose claim a repo-mate's copy contested (audited as `claim`). */
  contested: string[];
}

export interface ForgetResult {
  name: string;
  removed: boolean;
  pending: number;
}

export function readerIdentity(name: string): ReaderIdentity {
  const parsed = parseNameLenient(name);
  return {
    name,
    repo: parsed?.group ?? groupOf(name),
    clientAddress: clientAddressOf(name),
    isSession: parsed !== null && parsed.handle !== null,
  };
}

function utf8Length(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

export interface ClaimResult {
  name: string;
  warnings: string[];
}

export class Bus {
  readonly settings: BusSettings;
  private liveness: SessionLiveness | undefined;

  /**
   * `liveness` judges whether a session's server still runs (from the process table, in
   * production); it is made on first use, since most operations never ask.
   */
  constructor(
    private readonly store: Store,
    readonly audit: AuditLog,
    settings: BusSettings,
    private readonly makeLiveness: () => SessionLiveness,
  ) {
    this.settings = settings;
  }

  private noticeOps: Notices | undefined;
  /** Run after a send has committed and been audited (waking its recipients); never fails the send. */
  afterSend: ((actor: string, records: MessageRecord[]) => Promise<void> | undefined) | null = null;

  /** Broadcast notices: publish, list, acknowledge, clear, deliver. */
  private tokenOps: Tokens | undefined;

  /** The hub's tokens: made, listed, revoked, and checked at every request. */
  get tokens(): Tokens {
    this.tokenOps ??= new Tokens(this.store, Date.now, this.audit);
    return this.tokenOps;
  }

  get notices(): Notices {
    this.noticeOps ??= new Notices(this.store, this.audit, this.settings.channelMaxNotices);
    return this.noticeOps;
  }

  private retentionOps: Retention | undefined;
  /** Pruning old read mail, expired notices and ended sessions. */
  get retention(): Retention {
    this.retentionOps ??= new Retention(this.store, this.audit, this.settings);
    return this.retentionOps;
  }

  private auditCheckOps: AuditCheck | undefined;
  /** The audit log against the store: gaps a crash left, and their repair. */
  get auditCheck(): AuditCheck {
    this.auditCheckOps ??= new AuditCheck(this.store, this.audit);
    return this.auditCheckOps;
  }

  private wakeOps: Wakes | undefined;
  /** What the wake paths need: the rate limit, watchers, routes. */
  get wakes(): Wakes {
    this.wakeOps ??= new Wakes(this.store);
    return this.wakeOps;
  }

  private brainOps: BrainRecords | undefined;
  /** The brain adapter's records: its state, markers, tool-call counts. */
  get brain(): BrainRecords {
    this.brainOps ??= new BrainRecords(this.store);
    return this.brainOps;
  }

  /** A feed of the store's changes, for a loop that waits for mail. */
  changes(): ChangeFeed {
    return this.store.changes();
  }

  /** Whether the store answers: a cheap read, for a health check. */
  async ping(): Promise<void> {
    await this.store.lastPosition();
  }

  /** A follower of every message stored from now on, by any process on any machine. */
  async followSends(): Promise<SendsFollower> {
    const position = await this.store.lastPosition();
    return new SendsFollower((after, also, limit) => this.store.messagesByPosition(after, also, limit), { position, skipped: new Map() });
  }

  /** The messages stored past `after` or at the positions in `also`, in order (a follower's read). */
  messagesByPosition(after: number, also: number[], limit: number): Promise<PositionedMessage[]> {
    return this.store.messagesByPosition(after, also, limit);
  }

  /** The position of the newest message stored. */
  lastPosition(): Promise<number> {
    return this.store.lastPosition();
  }

  /** The audit row of a send, for a message another process stored (and audited where it ran). */
  sendRow(message: MessageRecord): AuditRow {
    return messageRow('send', message.sentAt, message.fromAgent, message);
  }

  getAgent(name: string): Promise<AgentRecord | null> {
    return this.store.getAgent(name);
  }

  /** Roster rows registered for a repo path (how a hook finds its agent). */
  agentsAt(repoPath: string): Promise<AgentRecord[]> {
    return this.store.agentsAt(repoPath);
  }

  /** Mark names as seen now. */
  async touch(names: string[]): Promise<void> {
    await this.store.touch(names, nowStamp());
  }

  /** Whether a session row's server is still running. */
  isRunning(row: SessionRecord): boolean {
    // A hub's session has no process to look for: it runs while it is heard from.
    if (isHubSession(row)) return hubSessionLive(row, nowMicros(), this.settings.hubSessionIdleMinutes);
    this.liveness ??= this.makeLiveness();
    return this.liveness(row);
  }

  private validateSend(request: SendRequest): { to: string; threadId: string | null } {
    const to = request.to.trim();
    if (to === '') throw new InvalidInputError("to must be non-empty (use '*' to broadcast)");
    if (request.body.trim() === '') throw new InvalidInputError('body must be non-empty');
    const size = utf8Length(request.body);
    if (size > this.settings.maxBodyBytes) {
      throw new InvalidInputError(
        `body is ${size} bytes; the limit is ${this.settings.maxBodyBytes} bytes (AGENT_BUS_MAX_BODY_BYTES). Nothing was sent.`,
      );
    }
    const threadId = request.threadId ?? null;
    if (threadId !== null && (threadId.trim() === '' || threadId.length > MAX_THREAD_ID_LENGTH)) {
      throw new InvalidInputError(`thread id must be 1 to ${MAX_THREAD_ID_LENGTH} characters`);
    }
    return { to, threadId };
  }

  async send(request: SendRequest): Promise<SendResult> {
    const { to, threadId } = this.validateSend(request);
    const micros = nowMicros();
    const sentAt = formatStamp(micros);
    const skip = new Set([request.from, ...(request.skip ?? [])]);
    let records: MessageRecord[];
    try {
      records = await this.store.send({
        register: request.register ?? [],
        from: request.from,
        addressedTo: to,
        body: request.body,
        sentAt,
        roster: rosterQueryFor(to),
        plan: (candidates) =>
          planSend(candidates, { to, skip, threadId, nowMicros: micros, fanoutMaxIdleDays: this.settings.fanoutMaxIdleDays }),
      });
    } catch (error) {
      if (!(error instanceof NoSuchRecipient)) throw error;
      if (to !== BROADCAST && to.includes('/')) {
        const problem = nameProblem(to);
        if (problem !== null) throw new InvalidNameError(`invalid recipient: ${problem}. Nothing was sent.`);
      }
      const { agents } = await this.store.roster(() => []);
      throw unknownRecipient(to, agents);
    }
    if (records.length > 0) {
      const digest = digestBody(request.body);
      this.audit.append(records.map((record) => messageRow('send', sentAt, request.from, record, digest)));
      // Most sends wake nobody: the hook says so without a promise, and the send pays nothing for it.
      const waking = this.afterSend?.(request.from, records);
      if (waking !== undefined) await waking.catch(() => undefined);
    }
    const kind: MessageKind = records[0] ? messageKind(records[0]) : to === BROADCAST ? 'broadcast' : 'group';
    const result: SendResult = {
      to,
      kind,
      message_ids: records.map((record) => record.messageId),
      recipients: records.map((record) => record.toAgent),
      thread_id: records[0]?.threadId ?? threadId,
      sent_at: sentAt,
      fanout_id: records[0]?.fanoutId ?? null,
    };
    if (records.length === 1 && records[0]) result.message_id = records[0].messageId;
    return result;
  }

  async readInbox(request: ReadRequest): Promise<MessageView[]> {
    const limit = request.limit ?? 50;
    if (!Number.isInteger(limit) || limit < 0) throw new InvalidInputError(`limit must be a whole number ≥ 0, got ${limit}`);
    const now = nowStamp();
    const reader = readerIdentity(request.reader);
    const query = { reader, limit, actionableOnly: request.actionableOnly ?? false, now };
    const { via } = request;
    if (!(request.markRead ?? true)) {
      const peeked = await this.store.peekInbox(query);
      return (via === null ? peeked : await this.recordShown(request.reader, peeked, via)).map(messageView);
    }
    if (via === null) throw new Error('a read says how the mail reaches its reader');
    const outcome = await this.store.readInbox({ query, decide: (rows, copies) => decideTake(rows, copies, reader), via });
    const contested = new Set(outcome.decision.contested);
    const rows: AuditRow[] = [];
    for (const message of outcome.messages) {
      const digest: BodyDigest = digestBody(message.body);
      rows.push(messageRow('read', now, request.reader, message, digest, via));
      if (request.deliver) rows.push(messageRow('deliver', now, request.reader, message, digest, via));
      if (contested.has(message.messageId)) rows.push(messageRow('claim', now, request.reader, message, digest));
    }
    this.audit.append(rows);
    return outcome.messages.map(messageView);
  }

  /**
   * Hand a reader's mail to its model: take it (claims decided), let `show`
   * print it, and only then mark it read and delivered and audit `read` and
   * `deliver` rows. Taking leases the mail, so no other reader shows it
   * meanwhile. If `show` throws, the lease is given back at once; if the
   * process dies, the lease runs out. Either way the mail stays unread.
   */
  async deliverInbox(request: DeliveryRequest, show: (messages: MessageView[]) => void | Promise<void>): Promise<MessageView[]> {
    const { views, pending } = await this.takeForShowing(request, show);
    if (pending === null) return views;
    return (await this.confirmDelivery(request.reader, pending)).map(messageView);
  }

  /**
   * The first half of a delivery, for one whose printing happens elsewhere (a remote hook prints
   * what the hub answered): take the mail and let `show` hand it on, leaving it leased and unread.
   * The pending delivery says what `confirmDelivery` marks once the text has been printed; if that
   * never comes, the lease runs out and the next turn shows the mail again.
   */
  async takeForShowing(request: DeliveryRequest, show: (messages: MessageView[]) => void | Promise<void>): Promise<{ views: MessageView[]; pending: PendingDelivery | null }> {
    const reader = readerIdentity(request.reader);
    const micros = nowMicros();
    const outcome = await this.store.leaseInbox({
      query: { reader, limit: request.limit ?? 50, actionableOnly: request.actionableOnly ?? false, now: formatStamp(micros) },
      decide: (rows, copies) => decideTake(rows, copies, reader),
      lease: newLease(micros),
    });
    const views = outcome.messages.map(messageView);
    const pending: PendingDelivery = {
      via: request.via,
      lease: outcome.lease,
      message_ids: outcome.messages.map((message) => message.messageId),
      claims: outcome.decision.claims,
      settle: outcome.decision.settle,
      contested: outcome.decision.contested,
    };
    try {
      await show(views);
    } catch (error) {
      await this.releaseDelivery(request.reader, pending);
      throw error;
    }
    return { views, pending: outcome.messages.length === 0 ? null : pending };
  }

  /** Mail a take showed could not be printed after all: its lease and claims are given back at once, for the next turn. */
  async releaseDelivery(reader: string, pending: PendingDelivery): Promise<void> {
    await this.store.releaseLeases(readerIdentity(reader), { lease: pending.lease, messageIds: pending.message_ids, claims: pending.claims });
  }

  /**
   * The mail a take showed has been printed: mark it read and delivered (only what the take still
   * holds) and audit `read` and `deliver` rows, with `claim` where its claim was contested. The
   * messages marked.
   */
  async confirmDelivery(reader: string, pending: PendingDelivery): Promise<MessageRecord[]> {
    const now = nowStamp();
    const { via } = pending;
    const marked = await this.store.markDelivered({ reader: readerIdentity(reader), lease: pending.lease, messageIds: pending.message_ids, settle: pending.settle }, now, via);
    const contested = new Set(pending.contested);
    const rows: AuditRow[] = [];
    for (const message of marked) {
      const digest = digestBody(message.body);
      rows.push(messageRow('read', now, reader, message, digest, via), messageRow('deliver', now, reader, message, digest, via));
      if (contested.has(message.messageId)) rows.push(messageRow('claim', now, reader, message, digest));
    }
    this.audit.append(rows);
    return marked;
  }

  /**
   * Mail shown to `reader` without being taken (a peek by its model, a thread on its dashboard):
   * its copies to `reader` not delivered before are marked delivered by `via`, each with a
   * `deliver` audit row. The messages come back as they now stand.
   */
  async recordShown(reader: string, messages: MessageRecord[], via: ReceiptWay): Promise<MessageRecord[]> {
    const own = messages.filter((message) => message.deliveredAt === null && (message.toAgent === reader || message.toAgent === clientAddressOf(reader)));
    if (own.length === 0) return messages;
    const now = nowStamp();
    const marked = new Set(await this.store.recordDelivered(own.map((message) => message.messageId), now, via));
    if (marked.size === 0) return messages;
    this.audit.append(own.filter((message) => marked.has(message.messageId)).map((message) => messageRow('deliver', now, reader, message, digestBody(message.body), via)));
    return messages.map((message) => (marked.has(message.messageId) ? { ...message, deliveredAt: now, deliveredVia: via } : message));
  }

  /** The receipts of the send `id` names, as `reader` may see them (null: every send, for the human on this machine). */
  async messageStatus(id: string, reader: string | null): Promise<MessageStatus> {
    return sendStatus(await findSend(this.store, id, reader));
  }

  /**
   * Wait until every copy of the send `id` names has reached `wanted`, or until `timeoutMs` has
   * passed, looking again whenever the store's change feed says it may have moved. The status
   * last seen, and whether it got there.
   */
  async awaitReceipts(id: string, reader: string | null, wanted: ReceiptState, timeoutMs: number, onChange?: (status: MessageStatus) => void): Promise<{ status: MessageStatus; reached: boolean }> {
    const first = await this.messageStatus(id, reader);
    const send = first.fanout_id ?? first.message_id;
    return awaitSend(this.store.changes(), () => this.messageStatus(send, reader), first, wanted, timeoutMs, onChange);
  }

  async pendingCount(reader: string): Promise<number> {
    return this.store.pendingCount(readerIdentity(reader));
  }

  async register(registrations: Registration[]): Promise<void> {
    await this.store.register(registrations, nowStamp());
  }

  /** The roster with pending counts and session liveness, ordered by name; optionally one repo. */
  async agents(group?: string): Promise<AgentView[]> {
    const snapshot = await this.store.roster(waitingRepoNames);
    const pending = pendingByName(snapshot);
    const live = new Set<string>();
    for (const holder of snapshot.sessionHolders) if (this.isRunning(holder)) live.add(holder.name);
    const agents = group === undefined ? snapshot.agents : repoMembers(snapshot.agents, group);
    return agents.map((agent) => agentView(agent, pending.get(agent.name) ?? 0, live.has(agent.name)));
  }

  async forget(name: string): Promise<ForgetResult> {
    if (!name.includes('/')) {
      const mates = repoMembers(await this.store.agentsOfRepo(name), name).filter((agent) => agent.name !== name).map((agent) => agent.name);
      if (mates.length > 0) {
        throw new BusError(
          `${quoted(name)} is a repo with ${mates.length} agent(s): ${mates.join(', ')}. ` +
            `Forget one by its full name, or all of them with \`agent-bus forget --group ${name}\`.`,
        );
      }
    }
    const outcome = await this.store.forget(name);
    return { name, ...outcome };
  }

  async forgetGroup(group: string): Promise<string[]> {
    const names = repoMembers(await this.store.agentsOfRepo(group), group).map((agent) => agent.name);
    return (await this.store.removeAgents(names)).sort();
  }

  async thread(threadId: string, limit = 100): Promise<MessageView[]> {
    return (await this.store.thread(threadId, limit)).map(messageView);
  }

  async threadIdsStartingWith(prefix: string, limit = 10): Promise<string[]> {
    return prefix === '' ? [] : this.store.threadIdsStartingWith(prefix, limit);
  }

  async recentMessages(limit = 10): Promise<MessageView[]> {
    return (await this.store.recentMessages(limit)).map(messageView);
  }

  /** A page of the roster by repo, optionally only names or topics holding `filter`. */
  async rosterPage(offset: number, limit: number, filter = ''): Promise<RosterPage> {
    return rosterPage(await this.agents(), offset, limit, filter);
  }

  /** The threads with the newest mail, newest first, from position `before` (null: the newest). */
  threadPage(before: number | null, limit: number): Promise<ThreadPage> {
    return threadPage(this.store, before, limit);
  }

  /** A thread's sends, oldest first, with each copy's receipt; with `shownTo`, its copies to that reader count as delivered by `via`. */
  async threadView(threadId: string, shownTo?: { reader: string; via: ReceiptWay }): Promise<ThreadView> {
    const messages = await this.store.thread(threadId, THREAD_ROWS);
    return foldThread(shownTo === undefined ? messages : await this.recordShown(shownTo.reader, messages, shownTo.via));
  }

  /** The last day's mail by hour and by sender and address. */
  mailDay(): Promise<MailDay> {
    return mailDay(this.store, nowMicros());
  }

  /** Mail whose body matches a query, newest first, each send once, as `request.reader` may see it. */
  search(request: SearchRequest): Promise<SearchHit[]> {
    return searchMail(this.store, request);
  }

  /** For a process that lives on: index its sends for search in the background as they commit (Store.keepSearchIndexCurrent). */
  keepSearchIndexCurrent(): void {
    this.store.keepSearchIndexCurrent();
  }

  /** Bring the search index up to date now, as a search would first. */
  indexForSearch(): Promise<void> {
    return this.store.indexForSearch();
  }

  /** Every session row of a client address, ended or not. */
  sessionRowsOf(clientAddress: string): Promise<SessionRecord[]> {
    return this.store.sessionRows(clientAddress);
  }

  /** The session rows of a client address whose server is running. */
  async runningSessions(clientAddress: string): Promise<SessionRecord[]> {
    return (await this.store.sessionRows(clientAddress)).filter((row) => this.isRunning(row));
  }

  /**
   * Record how to reach a client's session from outside; false when nothing changed and the
   * route is fresh. Hooks run at every turn: the route is read first, and written only then.
   */
  async recordRoute(route: ClientRoute, staleBefore: string): Promise<boolean> {
    if (routeUnchanged(await this.store.route(route.threadId), route, staleBefore)) return false;
    await this.store.saveRoute(route);
    return true;
  }

  /** Session rows not ended whose process is gone: each holds an address until the next claim gives it back. */
  async staleSessions(): Promise<SessionRecord[]> {
    return (await this.store.sessionRows()).filter((row) => row.endedAt === null && !this.isRunning(row));
  }

  /** Where the store lives, as shown to a user (a file's path, a URL without its password). */
  get location(): string {
    return this.store.location;
  }

  /** The store's engine, schema version and a quick integrity check. */
  integrity(): Promise<StoreIntegrity> {
    return this.store.integrity();
  }

  /** Names held by running sessions (for a client address, or everywhere). */
  async liveSessionNames(clientAddress?: string): Promise<Set<string>> {
    const rows = await this.store.sessionRows(clientAddress);
    return new Set(rows.filter((row) => this.isRunning(row)).map((row) => row.name));
  }

  /**
   * Claim a session address for a starting server. Which processes have
   * ended is read before the write lock (a `ps` can be slow); rows that
   * appear meanwhile count as running.
   */
  async claimSession(claimant: Claimant, row: Omit<SessionRecord, 'name' | 'endedAt'>, context: Omit<ClaimContext, 'ended'>): Promise<ClaimResult> {
    const before = await this.store.sessionRows(claimant.clientAddress);
    const endedBefore = new Set(before.filter((candidate) => candidate.endedAt === null && !this.isRunning(candidate)).map(sessionKeyText));
    const now = formatStamp(context.nowMicros);
    const outcome = await this.store.startSession({
      clientAddress: claimant.clientAddress,
      repo: groupOf(claimant.clientAddress),
      row,
      now,
      decide: (rows, roster) => {
        const plan = decideClaim(rows, repoMembers(roster, groupOf(claimant.clientAddress)), claimant, {
          ...context,
          ended: (candidate) => endedBefore.has(sessionKeyText(candidate)),
        });
        return { ...plan, registrations: registrationsFor(plan.name, row.repoPath, true) };
      },
    });
    const { name, crashedNames, warnings } = outcome.decision;
    const rows: AuditRow[] = [sessionRow(now, name, name, name, 'claim', `${quoted(name)} started`)];
    // A crashed session's end is news; an ended number handing over mail that arrived later is news only if there was some.
    for (const move of outcome.givenUp) if (crashedNames.includes(move.name) || move.moved > 0) rows.push(this.givenUpRow(now, move, claimant.clientAddress));
    this.audit.append(rows);
    return { name, warnings };
  }

  /**
   * The session address a session id holds over the hub, for a token that speaks for a client
   * address: the one it holds already (noted as heard from), else one claimed by the rules a
   * starting server follows. Any hub finds the same row: no sticky sessions. `readAlready`: the
   * client address's rows, read a moment ago by the caller.
   */
  async hubSession(clientAddress: string, repoPath: string, sessionKey: string, resumeHours: number, readAlready: SessionRecord[] | null = null): Promise<{ name: string; key: SessionKey; warnings: string[] }> {
    const micros = nowMicros();
    const held = heldBy(readAlready ?? (await this.store.sessionRows(clientAddress)), sessionKey);
    if (held !== null) {
      // Noted at most once a minute, and at least twice in each idle period.
      const touchEvery = Math.min(HUB_SESSION_TOUCH_MICROS, (this.settings.hubSessionIdleMinutes * 60_000_000) / 2);
      if (held.lastSeen < formatStamp(micros - touchEvery)) await this.store.touchSession(keyOf(held), formatStamp(micros));
      return { name: held.name, key: keyOf(held), warnings: [] };
    }
    const row = hubSessionRow(clientAddress, repoPath, sessionKey, micros);
    const claimed = await this.claimSession({ clientAddress, clientProcess: null, sessionKey, pinned: null }, row, { nowMicros: micros, resumeHours });
    return { ...claimed, key: keyOf(row) };
  }

  private givenUpRow(now: string, move: AddressMove, clientAddress: string): AuditRow {
    return sessionRow(now, move.name, move.name, clientAddress, 'end', `${quoted(move.name)} ended; ${move.moved} unread message(s) moved to ${quoted(clientAddress)} for its other sessions`);
  }

  /**
   * Which rows of a client address are running, read from the process table
   * before the write lock (a `ps` can be slow). Rows that appear after the
   * look count as running.
   */
  private async runningJudge(clientAddress: string): Promise<(row: SessionRecord) => boolean> {
    const before = await this.store.sessionRows(clientAddress);
    const ended = new Set(before.filter((row) => row.endedAt !== null || !this.isRunning(row)).map(sessionKeyText));
    return (row) => row.endedAt === null && !ended.has(sessionKeyText(row));
  }

  /** A session's server is stopping: mark it ended and, for a numbered address nobody else holds, hand its mail to the client address. */
  async endSession(key: SessionKey): Promise<void> {
    const running = await this.runningJudge(key.clientAddress);
    const now = nowStamp();
    const outcome = await this.store.endSession(key, groupOf(key.clientAddress), now, (rows, own) => {
      const others = rows.filter((row) => row.name === own.name && sessionKeyText(row) !== sessionKeyText(key) && running(row));
      return own.name !== key.clientAddress && isNumbered(own.name) && others.length === 0;
    });
    if (!outcome) return;
    if (outcome.move) this.audit.append([this.givenUpRow(now, outcome.move, key.clientAddress)]);
    else if (!isNumbered(outcome.name) && outcome.name !== key.clientAddress) {
      this.audit.append([sessionRow(now, outcome.name, outcome.name, outcome.name, 'end', `${quoted(outcome.name)} ended; its address and mail wait for that label to be taken again`)]);
    }
  }

  /** Rename a session to `<repo>/<client>-<label>`; its unread mail moves with it. Decided inside the write lock. */
  async renameSession(key: SessionKey, label: string): Promise<string> {
    const running = await this.runningJudge(key.clientAddress);
    const target = composeName(groupOf(key.clientAddress), parseNameLenient(key.clientAddress)?.client ?? null, label);
    const now = nowStamp();
    const outcome = await this.store.renameSession({
      key,
      to: target,
      now,
      plan: (rows) => {
        const own = rows.find((row) => sessionKeyText(row) === sessionKeyText(key));
        if (!own || own.endedAt !== null) throw new InvalidInputError('this server holds no session address to rename');
        const registrations = registrationsFor(target, own.repoPath, true);
        if (own.name === target) return { from: own.name, replace: [], moveMail: false, registrations };
        if (rows.some((row) => row !== own && row.name === own.name && running(row))) {
          throw new InvalidInputError(
            `${quoted(own.name)} is shared with other sessions the bus cannot tell apart, so a label would rename all of them; set only a topic instead`,
          );
        }
        if (rows.some((row) => row !== own && row.name === target && running(row))) {
          throw new InvalidInputError(`${quoted(target)} is held by another running session; pick another label`);
        }
        return {
          from: own.name,
          replace: rows.filter((row) => row !== own && row.name === target).map(keyOf),
          moveMail: own.name !== key.clientAddress,
          registrations,
        };
      },
    });
    if (outcome.from !== target) {
      this.audit.append([sessionRow(now, target, outcome.from, target, 'rename', `${quoted(outcome.from)} is now ${quoted(target)}; ${outcome.moved} unread message(s) moved`)]);
    }
    return target;
  }

  async setTopic(name: string, topic: string | null): Promise<string | null> {
    const trimmed = topic === null ? null : Array.from(topic.trim()).slice(0, MAX_TOPIC_LENGTH).join('');
    const value = trimmed === '' ? null : trimmed;
    await this.store.setTopic(name, value);
    return value;
  }

  /** Retire a name `agent-bus init` replaced, keeping its unread mail reachable; audited as `retire`. */
  async retire(old: string, successor: string): Promise<void> {
    if (old === successor) return;
    // A successor in the repo the old name now addresses: the old name's mail waits there for that repo's first reader.
    const outcome = await this.store.retire(old, groupOf(successor) === old ? null : successor);
    if (!outcome.removed && outcome.moved === 0) return;
    const what =
      outcome.moved > 0 || groupOf(successor) !== old
        ? `${outcome.moved} unread message(s) re-addressed`
        : `${outcome.left} unread message(s) left for ${quoted(old)} to be picked up by the first agent in that repo to read`;
    this.audit.append([
      {
        ts: nowStamp(),
        op: 'retire',
        actor: 'agent-bus init',
        message_id: null,
        from: old,
        to: successor,
        thread_id: null,
        body_preview: `${quoted(old)} is now wired as ${quoted(successor)}; ${what}`,
        body_sha256: null,
      },
    ]);
  }

  async bindSessionKey(key: SessionKey, sessionKey: string): Promise<void> {
    await this.store.bindSessionKey(key, sessionKey);
  }

  async close(): Promise<void> {
    this.audit.close();
    await this.store.close();
  }
}

function sessionKeyText(row: SessionKey): string {
  return `${row.serverPid}|${row.serverStarted}|${row.clientAddress}`;
}

