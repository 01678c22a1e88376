/**
 * Where a send has got to: its copies' receipts folded into one status, as a reader may see them,
 * and the wait of `send --wait` for them to move.
 */
import type { ReceiptState } from '../model/receipts.js';
import type { ChangesPort, ReceiptsPort } from '../store/ports.js';
import { awaitSend } from './receipt-wait.js';
import { findSend, sendStatus, type MessageStatus } from './receipts.js';

export class Receipts {
  constructor(private readonly store: ReceiptsPort & ChangesPort) {}

  /** The receipts of the send `id` names, as `reader` may see them (null: every send, for the human on this machine). */
  async status(id: string, reader: string | null): Promise<MessageStatus> {
    return sendStatus(await findSend(this.store, id, reader));
  }

  /**
   * Wait until every copy of the send `id` names has reached `wanted`, or until `timeoutMs` has
   * passed, looking again whenever the store's change feed says it may have moved. The status
   * last seen, and whether it got there.
   */
  async await(id: string, reader: string | null, wanted: ReceiptState, timeoutMs: number, onChange?: (status: MessageStatus) => void): Promise<{ status: MessageStatus; reached: boolean }> {
    const first = await this.status(id, reader);
    const send = first.fanout_id ?? first.message_id;
    return awaitSend(this.store.changes(), () => this.status(send, reader), first, wanted, timeoutMs, onChange);
  }
}
