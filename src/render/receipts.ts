/**
 * Receipts on a terminal: a tick per state (sent ✓, delivered ✓✓, read ✓✓
 * with the word), each copy on a line with when and how it got there. The
 * CLI's `status`, `send --wait` and the chat show them the same way.
 */
import type { CopyStatus, MessageStatus } from '../core/receipts.js';
import type { ReceiptState } from '../model/receipts.js';
import { displayWidth, pad, padStyled, printable, shortIdText } from './format.js';
import { when } from '../model/when.js';
import type { Style } from './style.js';

const TICKS: Record<ReceiptState, string> = { sent: '✓', delivered: '✓✓', read: '✓✓' };

/** `✓ sent`, `✓✓ delivered`, `✓✓ read`. */
export function tickLabel(state: ReceiptState): string {
  return `${TICKS[state]} ${state}`;
}

/** When and how a copy got where it is: `2 min ago by hook-stop`, with an earlier delivery when it was another moment or way. */
export function copyWhen(copy: CopyStatus, now = Date.now()): string {
  const at = (stamp: string, via: string | null): string => `${when(stamp, now)}${via === null ? '' : ` by ${printable(via)}`}`;
  if (copy.read_at !== null) {
    const read = at(copy.read_at, copy.read_via);
    const delivered = copy.delivered_at !== null && (copy.delivered_at !== copy.read_at || copy.delivered_via !== copy.read_via) ? ` (delivered ${at(copy.delivered_at, copy.delivered_via)})` : '';
    return `${read}${delivered}`;
  }
  return copy.delivered_at !== null ? at(copy.delivered_at, copy.delivered_via) : '';
}

/** A send's counts: `3 recipients: 2 delivered, 1 read`. */
export function receiptCounts(status: MessageStatus): string {
  return `${status.recipients} recipient${status.recipients === 1 ? '' : 's'}: ${status.delivered} delivered, ${status.read} read`;
}

/** One copy's line: the tick and state, the recipient, when and how, and whether it claimed the send. */
export function copyLine(copy: CopyStatus, width: number, style: Style): string {
  const label = tickLabel(copy.state);
  const tick = copy.state === 'read' ? style.bold(label) : copy.state === 'sent' ? style.dim(label) : label;
  const claimed = copy.claimed_by !== null && copy.claimed_by === copy.to ? style.dim('  (claimed it)') : '';
  return `  ${padStyled(tick, label, 12)} ${padStyled(style.agent(copy.to), printable(copy.to), width)}  ${copyWhen(copy)}${claimed}`.trimEnd();
}

/** A send's receipts as `agent-bus status` prints them. */
export function statusText(status: MessageStatus, style: Style): string {
  const width = Math.max(0, ...status.copies.map((copy) => displayWidth(printable(copy.to))));
  const id = shortIdText(status.fanout_id ?? status.message_id);
  const head =
    `${style.bold(id)}  ${style.agent(status.from)} → ${printable(status.to)}  sent ${when(status.sent_at)}  ${style.dim(`(thread ${shortIdText(status.thread_id)})`)}`;
  const summary = `  ${pad(tickLabel(status.state), 12)} ${receiptCounts(status)}`;
  return [head, summary, ...status.copies.map((copy) => copyLine(copy, width, style))].join('\n');
}
