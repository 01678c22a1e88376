/** Receipts on the page as the CLI and chat show them: sent ✓, delivered ✓✓, read ✓✓ (in the colour of done), with when and how. */
import { el, type Child } from './dom.js';
import { moment } from './time.js';
import type { ReceiptState, ThreadCopy } from './types.js';

const TICKS: Record<ReceiptState, string> = { sent: '✓', delivered: '✓✓', read: '✓✓' };

/** `✓✓ read`: the tick (for the eye; the word says it) and the state, or what `label` says of it. */
export function tick(state: ReceiptState, ...label: Child[]): HTMLSpanElement {
  return el('span', { class: `receipt ${state}`, 'data-state': state }, el('span', { class: 'tick', 'aria-hidden': 'true' }, TICKS[state]), ' ', ...(label.length === 0 ? [state] : label));
}

/** When and how a copy got where it is: `read 3 min ago by hook-stop`. */
export function copyWhen(copy: ThreadCopy): Child[] {
  const by = (via: string | null): string => (via === null ? '' : ` by ${via}`);
  if (copy.readAt !== null) return ['read ', moment(copy.readAt), by(copy.readVia)];
  if (copy.deliveredAt !== null) return ['delivered ', moment(copy.deliveredAt), by(copy.deliveredVia)];
  return ['sent'];
}

/** A whole send's state: the least advanced of its copies. */
export function sendState(counts: { copyCount: number; deliveredCount: number; readCount: number }): ReceiptState {
  if (counts.readCount >= counts.copyCount) return 'read';
  return counts.deliveredCount >= counts.copyCount ? 'delivered' : 'sent';
}
