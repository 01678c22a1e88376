/** Receipts: where each copy of a send has got to (sent, delivered, read), and finding a send by its id. */
import type { ReceiptRecord, ReceiptWay } from '../../model/receipts.js';
import type { AttemptsOf } from './attempts.js';
import type { IdLookup } from '../../model/short-id.js';

export interface ReceiptsPort {
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
   * The sends named by a copy's id or a fan-out's id beginning with one of `lookup.prefixes`, or a
   * copy's id whose short form begins with `lookup.tail`, each by the id `receipts` takes for it (its
   * fan-out's id, else its message id): at most `limit`, in order.
   */
  sendIdsNamed(lookup: IdLookup, limit: number): Promise<string[]>;
}

export const RECEIPTS_ATTEMPTS = {
  // Run again, it finds the copies delivered already and names none of them.
  recordDelivered: 'once',
  receipts: 'retryable',
  sendIdsNamed: 'retryable',
} as const satisfies AttemptsOf<ReceiptsPort>;
