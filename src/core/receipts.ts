/**
 * Receipts as the bus shows them: every copy of a send with its state (sent,
 * delivered, read), when and how it got there, and the state of the whole
 * send: the least advanced of its copies, since a send has reached a state
 * once every recipient has. Who may ask: the sender and the recipients. A
 * send is named by any of its copies' ids, its fan-out's id, or the start of
 * one of those.
 */
import { BusError, InvalidInputError } from '../model/errors.js';
import { quoted } from '../model/quote.js';
import { reached, receiptState, RECEIPT_STATES, type ReceiptRecord, type ReceiptState } from '../model/receipts.js';
import type { ReceiptsPort } from '../store/ports.js';
import { clientAddressOf } from './names.js';
import { idLookup } from '../model/short-id.js';
import { longEnoughToLookUp, pickNamed, type IdCandidate } from './id-resolve.js';
import { messageKind, type MessageKind } from './views.js';

/** One recipient's copy: where it is, and when and how it got there. */
export interface CopyStatus {
  message_id: string;
  to: string;
  state: ReceiptState;
  claimed_by: string | null;
  delivered_at: string | null;
  delivered_via: string | null;
  read_at: string | null;
  read_via: string | null;
}

/** A send's receipts: the copies, their counts, and the state all of them have reached. */
export interface MessageStatus {
  /** The first copy's id (a fan-out's copies each have their own). */
  message_id: string;
  fanout_id: string | null;
  from: string;
  /** What it was addressed to: a name, a repo, or '*'. */
  to: string;
  kind: MessageKind;
  thread_id: string;
  sent_at: string;
  /** The least advanced copy's state. */
  state: ReceiptState;
  recipients: number;
  delivered: number;
  read: number;
  copies: CopyStatus[];
}

/** A send nobody could name: no such id, or not one the asker sent or received (the same answer, so nothing leaks). */
export class NoSuchMessageError extends BusError {}


export function copyStatus(copy: ReceiptRecord): CopyStatus {
  return {
    message_id: copy.messageId,
    to: copy.toAgent,
    state: receiptState(copy),
    claimed_by: copy.claimedBy,
    delivered_at: copy.deliveredAt,
    delivered_via: copy.deliveredVia,
    read_at: copy.readAt,
    read_via: copy.readVia,
  };
}

/** The status of one send from its copies (at least one). */
export function sendStatus(copies: ReceiptRecord[]): MessageStatus {
  const first = copies[0];
  if (first === undefined) throw new Error('a send has at least one copy');
  const rows = copies.map(copyStatus);
  const least = rows.reduce<ReceiptState>((state, copy) => (reached(copy.state, state) ? state : copy.state), 'read');
  return {
    message_id: first.messageId,
    fanout_id: first.fanoutId,
    from: first.fromAgent,
    to: first.addressedTo ?? first.toAgent,
    kind: messageKind(first),
    thread_id: first.threadId,
    sent_at: first.sentAt,
    state: least,
    recipients: rows.length,
    delivered: rows.filter((copy) => reached(copy.state, 'delivered')).length,
    read: rows.filter((copy) => copy.state === 'read').length,
    copies: rows,
  };
}

/** Whether `reader` may see a send's receipts: it sent it, or a copy is addressed to it (or to the client address it shares). */
export function mayAsk(reader: string, copies: ReceiptRecord[]): boolean {
  const names = new Set([reader, clientAddressOf(reader) ?? reader]);
  return copies.some((copy) => names.has(copy.fromAgent) || names.has(copy.toAgent));
}

export function parseWantedState(raw: string): ReceiptState {
  const wanted = raw.trim().toLowerCase();
  if (wanted === 'sent' || !(RECEIPT_STATES as readonly string[]).includes(wanted)) {
    throw new InvalidInputError(`cannot wait for ${quoted(raw)}: wait for delivered or read`);
  }
  return wanted as ReceiptState;
}

/**
 * The copies of the send `id` names: exactly (a copy's id or a fan-out's), else as the start of
 * one. `reader`: who asks (null: the human on this machine, who may see every send).
 */
export async function findSend(store: ReceiptsPort, id: string, reader: string | null): Promise<ReceiptRecord[]> {
  const wanted = id.trim();
  if (wanted === '') throw new InvalidInputError('say which message: its id (or the start of it), as send printed it');
  let copies = await store.receipts(wanted);
  if (copies.length === 0 && longEnoughToLookUp(wanted)) copies = await bySendPrefix(store, wanted, reader);
  if (copies.length === 0 || (reader !== null && !mayAsk(reader, copies))) {
    throw new NoSuchMessageError(
      reader === null ? `no message with id ${quoted(wanted)}` : `no message with id ${quoted(wanted)} that ${quoted(reader)} sent or received`,
    );
  }
  return copies;
}

/**
 * The one send a start of a copy's or a fan-out's id (or of its short form) names, among those
 * `reader` may see; none when there is none.
 */
async function bySendPrefix(store: ReceiptsPort, prefix: string, reader: string | null): Promise<ReceiptRecord[]> {
  const candidates: IdCandidate<ReceiptRecord[]>[] = [];
  // Sends another reader may not see are passed over, so a few more are read than are listed.
  for (const send of await store.sendIdsNamed(idLookup(prefix), 50)) {
    const copies = await store.receipts(send);
    if (copies.length === 0 || (reader !== null && !mayAsk(reader, copies))) continue;
    const first = copies[0] as ReceiptRecord;
    candidates.push({ key: send, ids: [send, ...copies.map((copy) => copy.messageId)], item: copies, hint: `${first.fromAgent} → ${first.addressedTo ?? first.toAgent}` });
  }
  return pickNamed(prefix, 'message', candidates) ?? [];
}

/** The id that names a whole send: its fan-out's, else its one copy's. */
export function sendId(copies: ReceiptRecord[]): string {
  const first = copies[0];
  return first === undefined ? '' : (first.fanoutId ?? first.messageId);
}
