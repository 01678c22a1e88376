/**
 * A sender waiting for its mail to be delivered or read: the receipts are read
 * again whenever the change feed says the store may have moved (a file-system
 * event, a NOTIFY, the hub's feed), with a slow poll as the fallback. The same
 * loop serves a bus on this machine and one reached through a hub.
 */
import { reached, type ReceiptState } from '../model/receipts.js';
import type { MessageStatus } from './receipts.js';
import { eachChange, type ChangeFeed } from './store-changes.js';

/** The fallback look when no hint comes. */
const POLL_MS = 2_000;

/**
 * Look at a send's status (`look`) until it reaches `wanted` or `timeoutMs` passes; `first` is the
 * status already read. `onChange` hears each status that differs from the last one seen.
 */
export async function awaitSend(
  feed: ChangeFeed,
  look: () => Promise<MessageStatus>,
  first: MessageStatus,
  wanted: ReceiptState,
  timeoutMs: number,
  onChange?: (status: MessageStatus) => void,
): Promise<{ status: MessageStatus; reached: boolean }> {
  let status = first;
  if (reached(status.state, wanted)) return { status, reached: true };
  let seen = progress(status);
  try {
    const done = await eachChange({ feed, pollMs: POLL_MS, deadline: Date.now() + timeoutMs, stopped: () => false }, async (changed) => {
      if (!changed) return undefined;
      status = await look();
      const now = progress(status);
      if (now !== seen) {
        seen = now;
        onChange?.(status);
      }
      return reached(status.state, wanted) ? true : undefined;
    });
    return { status, reached: done === true };
  } finally {
    await feed.close();
  }
}

/** What a waiter tells apart: each copy's state. */
function progress(status: MessageStatus): string {
  return status.copies.map((copy) => copy.state).join(',');
}
