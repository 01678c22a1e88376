/**
 * Where the CLI reads receipts from and waits for them to move: the bus on this
 * machine, or a hub through the token (whose agent sees only its own mail).
 */
import type { Bus } from '../core/bus.js';
import type { MessageStatus } from '../core/receipts.js';
import { awaitSend } from '../core/receipt-wait.js';
import type { ReceiptState } from '../model/receipts.js';
import { HubChangeFeed } from '../remote/changes.js';
import type { HubAccess } from '../remote/settings.js';
import { callHubTool } from '../remote/tools.js';

export interface ReceiptSource {
  status(id: string): Promise<MessageStatus>;
  /** Until every copy of the send has reached `wanted` or `timeoutMs` has passed; `onChange` hears each move. */
  await(id: string, wanted: ReceiptState, timeoutMs: number, onChange?: (status: MessageStatus) => void): Promise<{ status: MessageStatus; reached: boolean }>;
}

/** The bus on this machine: every send for the human (`reader` null), else what `reader` sent or received. */
export function localReceipts(bus: Bus, reader: string | null): ReceiptSource {
  return {
    status: (id) => bus.messageStatus(id, reader),
    await: (id, wanted, timeoutMs, onChange) => bus.awaitReceipts(id, reader, wanted, timeoutMs, onChange),
  };
}

/** A hub's, asked as the token's agent (or `as`, one of its sessions). */
export function hubReceipts(access: HubAccess, as: string | null): ReceiptSource {
  const status = async (id: string): Promise<MessageStatus> => (await callHubTool<MessageStatus>(access, 'message_status', { message_id: id }, as)).value;
  return {
    status,
    await: async (id, wanted, timeoutMs, onChange) => {
      const first = await status(id);
      const send = first.fanout_id ?? first.message_id;
      return awaitSend(new HubChangeFeed(access), () => status(send), first, wanted, timeoutMs, onChange);
    },
  };
}
