/**
 * The audit log against the store: every stored message should have its `send`
 * row, and every `send` row should name a message the store has (or had, until
 * `prune` removed it). A send whose process died between its commit and its
 * append leaves a message with no row; `repair` appends the row it should have
 * had, marked `recovered`, and never touches a line already written.
 */
import { verifyChain, type ChainReport } from '../audit/verify.js';
import { messageRow } from '../audit/record.js';
import { formatStamp, stampOf, type Clock } from '../model/clock.js';
import type { AuditSink } from './audit-sink.js';
import type { MessageRecord } from '../model/records.js';
import type { FollowPort } from '../store/ports.js';

/** A send younger than this may still be on its way to the log: it is not judged. */
export const IN_FLIGHT_MICROS = 2_000_000;
const BATCH = 2_000;

/** Where a `send` row was read, and when it says the send was. */
export interface SendRowPlace {
  file: string;
  line: number;
  ts: string;
}

export interface StoreCheck {
  /** Messages the store holds. */
  messages: number;
  /** Stored messages with no `send` row, oldest first. */
  missing: MessageRecord[];
  /** `send` rows naming a message the store does not have, and `prune` did not remove. */
  unknown: Array<SendRowPlace & { messageId: string }>;
  /** `send` rows of messages `prune` removed. */
  pruned: number;
  /** Messages sent too recently to judge. */
  inFlight: number;
}

/** The log read once: its chain's report, and what the store check needs of it. */
export interface LogReading {
  chain: ChainReport;
  /** Every `send` row's message id, with where it was read. */
  sendRows: Map<string, SendRowPlace>;
  /** The latest cutoff a `prune` row records; null: never pruned. */
  prunedBefore: string | null;
}

/** Check the chain of the log at `path` (and its rotated files), gathering the send rows on the way. */
export function readLog(path: string): LogReading {
  const sendRows = new Map<string, SendRowPlace>();
  let prunedBefore: string | null = null;
  const chain = verifyChain(path, (row, place) => {
    if (row.op === 'send' && typeof row.message_id === 'string') sendRows.set(row.message_id, { ...place, ts: String(row.ts ?? '') });
    else if (row.op === 'prune' && typeof row.older_than === 'string' && (prunedBefore === null || row.older_than > prunedBefore)) prunedBefore = row.older_than;
  });
  return { chain, sendRows, prunedBefore };
}

export class AuditCheck {
  constructor(
    private readonly store: FollowPort,
    private readonly audit: AuditSink,
    private readonly clock: Clock,
  ) {}

  /**
   * Read every stored message once, in the order stored. `sendRows` is every `send` row's
   * message id; `prunedBefore` the latest cutoff a `prune` row records (null: never pruned).
   */
  async check(sendRows: Map<string, SendRowPlace>, prunedBefore: string | null): Promise<StoreCheck> {
    const youngest = formatStamp(this.clock.nowMicros() - IN_FLIGHT_MICROS);
    const seen = new Set<string>();
    const missing: MessageRecord[] = [];
    let messages = 0;
    let inFlight = 0;
    let after = 0;
    for (;;) {
      const batch = await this.store.messagesByPosition(after, [], BATCH);
      if (batch.length === 0) break;
      for (const message of batch) {
        after = Math.max(after, message.position);
        messages += 1;
        if (sendRows.has(message.messageId)) seen.add(message.messageId);
        else if (message.sentAt > youngest) inFlight += 1;
        else {
          const { position: _position, ...record } = message;
          missing.push(record);
        }
      }
    }
    const unknown: StoreCheck['unknown'] = [];
    let pruned = 0;
    for (const [messageId, place] of sendRows) {
      if (seen.has(messageId)) continue;
      if (prunedBefore !== null && place.ts < prunedBefore) pruned += 1;
      else if (place.ts <= youngest) unknown.push({ messageId, ...place });
    }
    return { messages, missing, unknown, pruned, inFlight };
  }

  /** Append the `send` row each message should have had, marked recovered, chained like any row. */
  repair(missing: readonly MessageRecord[]): number {
    const recoveredAt = stampOf(this.clock);
    for (let start = 0; start < missing.length; start += BATCH) {
      this.audit.append(
        missing.slice(start, start + BATCH).map((message) => ({ ...messageRow('send', message.sentAt, message.fromAgent, message), recovered: true, recovered_at: recoveredAt })),
      );
      this.audit.flush();
    }
    return missing.length;
  }
}
