/**
 * Mail: sending (who a send reaches is decided inside its transaction), the rule a session's send
 * follows and the notes it gets back, threads, the newest mail, search, and following every send
 * the bus stores. A send's audit rows are appended once it has committed; what a send sets off
 * (waking its recipients) runs after that and never fails it.
 */
import { digestBody, messageRow, type AuditRow } from '../audit/record.js';
import { formatStamp, type Clock } from '../model/clock.js';
import { InvalidInputError, InvalidNameError, NotFoundError, TooLargeError } from '../model/errors.js';
import { idLookup } from '../model/short-id.js';
import { longEnoughToLookUp, pickNamed, type IdCandidate } from './id-resolve.js';
import type { MessageRecord, Registration } from '../model/records.js';
import { quoted } from '../model/quote.js';
import type { FollowPort, MailPort, PositionedMessage, ReceiptsPort, RosterPort, SearchPort } from '../store/ports.js';
import type { AuditSink } from './audit-sink.js';
import { nobodyReachedNote, NoSuchRecipient, planSend, rosterQueryFor, unknownRecipient } from './addressing.js';
import { SendsFollower } from './follow-sends.js';
import { mailEvents } from './outbound.js';
import { agentRepo, registrationsFor } from './roster.js';
import { BROADCAST, clientAddressOf, HUMAN, isSessionName, nameProblem } from './names.js';
import { searchMail, type SearchHit, type SearchRequest } from './search.js';
import type { BusSettings } from './settings.js';
import { messageKind, messageView, type MessageKind, type MessageView } from './views.js';

export const MAX_THREAD_ID_LENGTH = 200;

export interface SendRequest {
  from: string;
  to: string;
  body: string;
  threadId?: string | null;
  /** Roster rows to write in the send's transaction (the speaker registering itself). */
  register?: Registration[];
  /** Names besides the sender that this send must not reach. */
  skip?: string[];
  /** Shown at each recipient's next tool call, not only at its turn's end. */
  urgent?: boolean;
  /** The task whose result this mail is, and its state. */
  taskResult?: { id: string; state: string };
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

/** A send as a session's server reports it: with a note when nobody running will read it soon. */
export type NotedSend = SendResult & { note?: string };

/** A send from a session's server: the session's name, and whether it holds a session address of its own. */
export interface SessionSend {
  from: string;
  holdsSession: boolean;
  to: string;
  urgent?: boolean;
  body: string;
  threadId: string | null;
}

/**
 * What a committed send sets off (waking its recipients), given the sender and the rows stored: the
 * audit rows of what it did. Undefined when it does nothing, so most sends pay nothing for it.
 */
export type AfterSend = (actor: string, records: MessageRecord[]) => Promise<AuditRow[]> | undefined;

export class Mail {
  constructor(
    private readonly store: MailPort & SearchPort & FollowPort & Pick<RosterPort, 'roster' | 'getAgent' | 'agentsOfRepo'> & Pick<ReceiptsPort, 'sendIdsNamed' | 'receipts'>,
    private readonly audit: AuditSink,
    private readonly clock: Clock,
    private readonly settings: Pick<BusSettings, 'maxBodyBytes' | 'fanoutMaxIdleDays' | 'personHome'>,
    private readonly afterSend: AfterSend | null,
    /** Names held by running sessions (of a client address, or everywhere): the session send rule asks. */
    private readonly liveNames: (clientAddress?: string) => Promise<Set<string>>,
  ) {}

  private validate(request: SendRequest): { to: string; threadId: string | null } {
    const to = request.to.trim();
    if (to === '') throw new InvalidInputError("to must be non-empty (use '*' to broadcast)");
    if (request.body.trim() === '') throw new InvalidInputError('body must be non-empty');
    const size = Buffer.byteLength(request.body, 'utf8');
    if (size > this.settings.maxBodyBytes) {
      throw new TooLargeError(
        `body is ${size} bytes; the limit is ${this.settings.maxBodyBytes} bytes (AGENT_BUS_MAX_BODY_BYTES). Nothing was sent.`,
      );
    }
    const threadId = request.threadId ?? null;
    if (threadId !== null && (threadId.trim() === '' || threadId.length > MAX_THREAD_ID_LENGTH)) {
      throw new InvalidInputError(`thread id must be 1 to ${MAX_THREAD_ID_LENGTH} characters`);
    }
    return { to, threadId };
  }

  /**
   * The person is always reachable, on a fresh bus too: mail to `human` files them on the roster (at
   * their home folder, as a person has no repo) in the send's own transaction, unless they are there.
   */
  private personRegistration(to: string): Registration[] {
    return to === HUMAN ? registrationsFor(HUMAN, this.settings.personHome, false) : [];
  }

  /**
   * That `to` names someone a send would reach (a name on the roster, a repo with members, or `*`),
   * else the send's own error, with suggestions; `nothingDone` says what was therefore not done.
   */
  async checkAddress(to: string, nothingDone: string): Promise<void> {
    if (to === '') throw new InvalidInputError("to must be non-empty (use '*' for everyone)");
    if (to === BROADCAST || to === HUMAN) return;
    if (to.includes('/')) {
      if ((await this.store.getAgent(to)) !== null) return;
      const problem = nameProblem(to);
      if (problem !== null) throw new InvalidNameError(`invalid recipient: ${problem}. ${nothingDone}.`);
    } else if ((await this.store.agentsOfRepo(to)).some((agent) => agentRepo(agent) === to)) {
      return;
    }
    const { agents } = await this.store.roster(() => []);
    throw unknownRecipient(to, agents, nothingDone);
  }

  async send(request: SendRequest): Promise<SendResult> {
    const { to, threadId } = this.validate(request);
    const micros = this.clock.nowMicros();
    const sentAt = formatStamp(micros);
    const skip = new Set([request.from, ...(request.skip ?? [])]);
    let records: MessageRecord[];
    try {
      records = await this.store.send({
        register: [...(request.register ?? []), ...this.personRegistration(to)],
        from: request.from,
        addressedTo: to,
        body: request.body,
        sentAt,
        priority: request.urgent ? 'urgent' : null,
        taskResult: request.taskResult ?? null,
        roster: rosterQueryFor(to),
        plan: (candidates) =>
          planSend(candidates, { to, skip, threadId, nowMicros: micros, fanoutMaxIdleDays: this.settings.fanoutMaxIdleDays }),
        outbound: (stored, outlets) => mailEvents(stored, outlets, sentAt),
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
      const woken = this.afterSend?.(request.from, records);
      if (woken !== undefined) {
        const rows = await woken.catch(() => []);
        if (rows.length > 0) this.audit.append(rows);
      }
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

  /**
   * A send from a session's server. A session alone at its client address skips that address (the
   * mail would come back to it); with sibling sessions running, they take it there. The result
   * carries a note when nobody running will read the mail soon.
   */
  async sendFromSession(request: SessionSend): Promise<NotedSend> {
    const me = request.from;
    const shared = clientAddressOf(me);
    const live = request.holdsSession && shared !== null ? await this.liveNames(shared) : null;
    const siblingsRunning = live !== null && [...live].some((name) => name !== me);
    const skip = request.holdsSession && shared !== null && !siblingsRunning ? [shared] : [];
    const threadId = request.threadId !== null && request.threadId !== undefined ? await this.resolveThread(request.threadId) : null;
    const result = await this.send({ from: me, to: request.to, body: request.body, threadId, skip, urgent: request.urgent ?? false });
    if (result.recipients.length === 0) return { ...result, note: nobodyReachedNote(result.kind, result.to) };
    return { ...result, ...(await this.sendNote(request.to, me, shared, live, siblingsRunning)) };
  }

  /** A note when nobody running will read this soon. */
  private async sendNote(to: string, me: string, shared: string | null, live: Set<string> | null, siblingsRunning: boolean): Promise<{ note?: string }> {
    if (live === null) return {};
    if (to === shared && !siblingsRunning) return { note: `no other session of ${quoted(to)} is running; the next one to start will pick this up` };
    if (isSessionName(to) && to !== me) {
      const holders = await this.liveNames(clientAddressOf(to) ?? undefined);
      if (!holders.has(to)) {
        return {
          note: `no running session holds ${quoted(to)}; the message waits until a session takes that name again. To reach whichever session is running, send to ${quoted(clientAddressOf(to))}.`,
        };
      }
    }
    return {};
  }

  /** A thread, named by its id, the start of it or of its short form, or by one of its messages' ids. */
  async thread(given: string, limit = 100): Promise<MessageView[]> {
    return (await this.store.thread(await this.resolveThread(given), limit)).map(messageView);
  }

  /**
   * The thread `given` names: a thread's id or the unique start of one (or of its short form), or a
   * message of it by its id or the start of one, so a reply can name the message it answers. No such
   * thread is a failure: a reply never starts a new thread named by a mistyped id.
   */
  async resolveThread(given: string): Promise<string> {
    const text = given.trim();
    if (text === '' || text.length > MAX_THREAD_ID_LENGTH) throw new InvalidInputError(`thread id must be 1 to ${MAX_THREAD_ID_LENGTH} characters`);
    if ((await this.store.thread(text, 1)).length > 0) return text;
    const candidates: IdCandidate<string>[] = [];
    if (longEnoughToLookUp(text)) {
      const lookup = idLookup(text);
      for (const threadId of await this.store.threadIdsNamed(lookup, 10)) candidates.push({ key: threadId, ids: [threadId], item: threadId });
      for (const send of await this.store.sendIdsNamed(lookup, 10)) {
        const copies = await this.store.receipts(send);
        const threadId = copies[0]?.threadId;
        if (threadId) candidates.push({ key: threadId, ids: [send, ...copies.map((copy) => copy.messageId)], item: threadId });
      }
    }
    const found = pickNamed(text, 'thread', candidates);
    if (found === null) throw new NotFoundError(`no thread ${quoted(text)}: give a thread's id as the bus showed it (or leave the thread out to start one)`);
    return found;
  }

  /** Thread ids a start of an id (or of a short form) names, at most `limit`. */
  async threadIdsStartingWith(prefix: string, limit = 10): Promise<string[]> {
    return prefix.trim() === '' ? [] : this.store.threadIdsNamed(idLookup(prefix), limit);
  }

  /** The newest `limit` messages of the bus, oldest first. */
  async recent(limit = 10): Promise<MessageView[]> {
    return (await this.store.recentMessages(limit)).map(messageView);
  }

  /**
   * Mail whose body matches a query, newest first, each send once, as `request.reader` may see it.
   * A thread to search in is named as every thread is (its id as shown, or one of its messages').
   */
  async search(request: SearchRequest): Promise<SearchHit[]> {
    const thread = request.thread?.trim() ? await this.resolveThread(request.thread) : null;
    return searchMail(this.store, { ...request, thread }, this.clock);
  }

  /** For a process that lives on: index its sends for search in the background as they commit. */
  keepSearchIndexCurrent(): void {
    this.store.keepSearchIndexCurrent();
  }

  /** Bring the search index up to date now, as a search would first. */
  indexForSearch(): Promise<void> {
    return this.store.indexForSearch();
  }

  /** A follower of every message stored from now on, by any process on any machine. */
  async follow(): Promise<SendsFollower> {
    const position = await this.store.lastPosition();
    return new SendsFollower((after, also, limit) => this.store.messagesByPosition(after, also, limit), { position, skipped: new Map() }, () => this.clock.nowMicros() / 1000);
  }

  /** The position of the newest message stored. */
  lastPosition(): Promise<number> {
    return this.store.lastPosition();
  }

  /** The messages stored past `after` or at the positions in `also`, in order (a follower's read). */
  byPosition(after: number, also: number[], limit: number): Promise<PositionedMessage[]> {
    return this.store.messagesByPosition(after, also, limit);
  }

  /** The audit row of a send, for a message another process stored (and audited where it ran). */
  sendRow(message: MessageRecord): AuditRow {
    return messageRow('send', message.sentAt, message.fromAgent, message);
  }
}
