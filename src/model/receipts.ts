/**
 * Receipts: where each recipient's copy of a message has got to. A copy is
 * sent, then delivered (its text left the bus into a model's context or onto
 * a person's screen), then read (taken off the inbox). Each step is stored
 * with its time and the way it happened, in the transaction that made it.
 */

/** The ways a copy reaches its reader: the hook or surface that put it in front of a model or a person. */
export const RECEIPT_WAYS = ['hook-user-prompt', 'hook-stop', 'hook-pre-tool', 'hook-watch', 'read_inbox', 'chat', 'web', 'inbox', 'webhook'] as const;

export type ReceiptWay = (typeof RECEIPT_WAYS)[number];

/** The ways of agent-bus's own surfaces that read mail through the hub's read_inbox for a person. */
export const SURFACE_WAYS = ['chat', 'inbox'] as const;

export type SurfaceWay = (typeof SURFACE_WAYS)[number];

export function isSurfaceWay(value: unknown): value is SurfaceWay {
  return typeof value === 'string' && (SURFACE_WAYS as readonly string[]).includes(value);
}

export const RECEIPT_STATES = ['sent', 'delivered', 'read'] as const;

export type ReceiptState = (typeof RECEIPT_STATES)[number];

import type { MessageRecord } from './records.js';

/** A copy's receipt as the store keeps it: everything but the body. */
export interface ReceiptRecord {
  messageId: string;
  fanoutId: string | null;
  fromAgent: string;
  toAgent: string;
  addressedTo: string | null;
  threadId: string;
  sentAt: string;
  claimedBy: string | null;
  deliveredAt: string | null;
  deliveredVia: string | null;
  readAt: string | null;
  readVia: string | null;
}

/** Where a copy is: read once taken, delivered once shown, else sent. */
export function receiptState(copy: { deliveredAt: string | null; readAt: string | null }): ReceiptState {
  if (copy.readAt !== null) return 'read';
  return copy.deliveredAt !== null ? 'delivered' : 'sent';
}

/** Whether `state` is at least as far along as `wanted`. */
export function reached(state: ReceiptState, wanted: ReceiptState): boolean {
  return RECEIPT_STATES.indexOf(state) >= RECEIPT_STATES.indexOf(wanted);
}

/** A message as a read at `now` by `via` leaves it (a delivery before keeps its time and way). */
export function readRecord(message: MessageRecord, now: string, via: ReceiptWay): MessageRecord {
  const delivered = message.deliveredAt !== null;
  return { ...message, readAt: now, readVia: via, deliveredAt: delivered ? message.deliveredAt : now, deliveredVia: delivered ? message.deliveredVia : via };
}
