/**
 * The chat's own recent sends, followed until every copy is read: a line each
 * time one moves on (✓ sent, ✓✓ delivered, ✓✓ read), looked at whenever the
 * bus changes.
 */
import type { SendResult } from '../core/mail-ops.js';
import type { MessageStatus } from '../core/receipts.js';
import { printable, shortIdText } from '../render/format.js';
import { tickLabel } from '../render/receipts.js';
import type { Style } from '../render/style.js';
import type { BusClient } from '../client/bus-client.js';

/** Sends followed at once, at most: past it the oldest is let go. */
const MAX_FOLLOWED = 50;

interface Followed {
  /** Who it went to, as the chat said it: a name, or a repo with its count. */
  to: string;
  threadId: string | null;
  /** The state and counts last said. */
  said: string;
}

export class SentReceipts {
  private readonly followed = new Map<string, Followed>();

  constructor(
    /** The chat's own client: a send's receipts as its speaker may see them. */
    private readonly client: BusClient,
  ) {}

  /** Follow a send the chat made; the line that says it was sent comes with its first tick. */
  follow(result: SendResult, to: string): void {
    const id = result.fanout_id ?? result.message_ids[0];
    if (id === undefined) return;
    if (this.followed.size >= MAX_FOLLOWED) this.followed.delete(this.followed.keys().next().value as string);
    this.followed.set(id, { to, threadId: result.thread_id, said: `sent:0:0` });
  }

  /** The lines to say for the sends that moved since the last look; a send read by all is let go. */
  async look(style: Style): Promise<string[]> {
    const lines: string[] = [];
    for (const [id, followed] of [...this.followed]) {
      let status: MessageStatus;
      try {
        status = await this.client.messageStatus(id);
      } catch {
        // Gone (pruned, or the hub forgot it): nothing more to say of it.
        this.followed.delete(id);
        continue;
      }
      const now = `${status.state}:${status.delivered}:${status.read}`;
      if (now !== followed.said) {
        followed.said = now;
        lines.push(receiptLine(status, followed, style));
      }
      if (status.state === 'read') this.followed.delete(id);
    }
    return lines;
  }

  get size(): number {
    return this.followed.size;
  }
}

/** `[chat] ✓✓ delivered → alpha (id 47010c6f)`; a fan-out with its counts. */
function receiptLine(status: MessageStatus, followed: Followed, style: Style): string {
  const counts = status.recipients === 1 ? '' : `: ${status.delivered} of ${status.recipients} delivered, ${status.read} read`;
  const label = tickLabel(status.state);
  return `[chat] ${status.state === 'read' ? style.bold(label) : label} → ${printable(followed.to)}${counts} (id ${shortIdText(followed.threadId)})`;
}
