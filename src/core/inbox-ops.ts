/**
 * A reader's inbox: reading (claims decided inside the read's transaction), peeking, and delivery
 * in two halves, so a receipt never says delivered for text that did not reach the client: mail is
 * leased while a hook or watcher prints it, and marked read and delivered only once it has.
 */
import { digestBody, messageRow, type AuditRow, type BodyDigest } from '../audit/record.js';
import { formatStamp, stampOf, type Clock } from '../model/clock.js';
import { InvalidInputError } from '../model/errors.js';
import type { MessageRecord } from '../model/records.js';
import type { ReceiptWay } from '../model/receipts.js';
import type { InboxPort, ReceiptsPort } from '../store/ports.js';
import type { AuditSink } from './audit-sink.js';
import { decideTake, newLease, readerIdentity } from './inbox.js';
import { clientAddressOf, repoOf } from './names.js';
import { messageView, type MessageView } from './views.js';

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
  /** Only urgent mail, without the copies a repo-mate claimed: what a busy agent is shown between tool calls. */
  urgentOnly?: boolean;
  limit?: number;
}

/** Mail leased and shown but not yet confirmed printed (see Inbox.show): all a confirmation needs, as JSON. */
export interface PendingDelivery {
  via: ReceiptWay;
  /** The lease: only rows it still holds are marked. */
  lease: string;
  message_ids: string[];
  /** Fan-outs the read claimed for the reader (given back with the lease if the mail is not printed). */
  claims: string[];
  /** Copies at the reader's client address its read settles. */
  settle: string[];
  /** Rows whose claim a repo-mate's copy contested (audited as `claim`). */
  contested: string[];
}

export class Inbox {
  constructor(
    private readonly store: InboxPort & Pick<ReceiptsPort, 'recordDelivered'>,
    private readonly audit: AuditSink,
    private readonly clock: Clock,
  ) {}

  async read(request: ReadRequest): Promise<MessageView[]> {
    const limit = request.limit ?? 50;
    if (!Number.isInteger(limit) || limit < 0) throw new InvalidInputError(`limit must be a whole number ≥ 0, got ${limit}`);
    const now = stampOf(this.clock);
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
   * Hand a reader's mail to its model: lease it (claims decided), let `print` print it, and only
   * then mark it read and delivered and audit `read` and `deliver` rows. The lease keeps any other
   * reader from showing it meanwhile. If `print` throws, the lease is given back at once; if the
   * process dies, the lease runs out. Either way the mail stays unread.
   */
  async deliver(request: DeliveryRequest, print: (messages: MessageView[]) => void | Promise<void>): Promise<MessageView[]> {
    const { views, pending } = await this.show(request, print);
    if (pending === null) return views;
    return (await this.confirm(request.reader, pending)).map(messageView);
  }

  /**
   * The first half of a delivery, for one whose printing happens elsewhere (a remote hook prints
   * what the hub answered): lease the mail and let `show` hand it on, leaving it unread. The pending
   * delivery says what `confirm` marks once the text has been printed; if that never comes, the
   * lease runs out and the next turn shows the mail again.
   */
  async show(request: DeliveryRequest, show: (messages: MessageView[]) => void | Promise<void>): Promise<{ views: MessageView[]; pending: PendingDelivery | null }> {
    const reader = readerIdentity(request.reader);
    const micros = this.clock.nowMicros();
    const outcome = await this.store.leaseInbox({
      query: { reader, limit: request.limit ?? 50, actionableOnly: request.actionableOnly ?? false, urgentOnly: request.urgentOnly ?? false, now: formatStamp(micros) },
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
      await this.giveBack(request.reader, pending);
      throw error;
    }
    return { views, pending: outcome.messages.length === 0 ? null : pending };
  }

  /** Mail a lease showed could not be printed after all: its lease and claims are given back at once, for the next turn. */
  async giveBack(reader: string, pending: PendingDelivery): Promise<void> {
    await this.store.releaseLeases(readerIdentity(reader), { lease: pending.lease, messageIds: pending.message_ids, claims: pending.claims });
  }

  /**
   * The mail a lease showed has been printed: mark it read and delivered (only what the lease still
   * holds) and audit `read` and `deliver` rows, with `claim` where its claim was contested. The
   * messages marked.
   */
  async confirm(reader: string, pending: PendingDelivery): Promise<MessageRecord[]> {
    const now = stampOf(this.clock);
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
    const now = stampOf(this.clock);
    const marked = new Set(await this.store.recordDelivered(own.map((message) => message.messageId), now, via));
    if (marked.size === 0) return messages;
    this.audit.append(own.filter((message) => marked.has(message.messageId)).map((message) => messageRow('deliver', now, reader, message, digestBody(message.body), via)));
    return messages.map((message) => (marked.has(message.messageId) ? { ...message, deliveredAt: now, deliveredVia: via } : message));
  }

  /**
   * Whether mail a busy agent is shown between tool calls (urgent only, with `urgentOnly`) may wait for
   * `agent` or one of its sessions: the pre-tool hook asks at every tool call, before it knows which
   * session address reads, and goes on to deliver only on a yes.
   */
  midTurnMailMayWait(agent: string, urgentOnly: boolean): Promise<boolean> {
    return this.store.midTurnMailMayWait({ name: clientAddressOf(agent) ?? agent, repo: repoOf(agent), urgentOnly });
  }

  /** Unread mail the reader would read, leased mail counted too (a message being shown is still unread). */
  pending(reader: string): Promise<number> {
    return this.store.pendingCount(readerIdentity(reader));
  }
}
