/**
 * Send batching, the same on both engines: sends made in the same tick of the event loop are written
 * in one transaction (group commit), because a commit costs far more than the rows it writes. Each
 * send resolves only once its batch has committed. One send's failure never undoes another's: a send
 * whose plan refuses it has written nothing, and the engine runs a send that registers its speaker
 * first as a savepoint; any other failure (the disk, say) fails the whole batch.
 */
import type { AgentRecord, MessageRecord } from '../../model/records.js';
import type { SendInput, SendPlan } from '../ports/mail.js';

/** Most sends one transaction carries, so a burst never holds the lock for long. */
export const MAX_SENDS_PER_COMMIT = 256;

/** A send its own plan refused (an unknown recipient): nothing of it was written. */
export class PlanRefused extends Error {
  constructor(readonly reason: unknown) {
    super('send refused by its plan');
  }
}

/** What became of one send of a batch. */
export type SendOutcome = { records: MessageRecord[] } | { error: unknown };

/** The message rows a send plan writes. */
export function plannedMessages(input: SendInput, plan: SendPlan): MessageRecord[] {
  return plan.rows.map((row) => ({
    messageId: row.messageId,
    fromAgent: input.from,
    toAgent: row.toAgent,
    body: input.body,
    threadId: plan.threadId as string,
    sentAt: input.sentAt,
    readAt: null,
    deliveredAt: null,
    addressedTo: input.addressedTo,
    fanoutId: plan.fanoutId,
    toGroup: row.toGroup,
    claimedBy: null,
    deliveredVia: null,
    readVia: null,
    priority: input.priority,
    taskId: input.taskResult?.id ?? null,
    taskState: input.taskResult?.state ?? null,
  }));
}

/** Plan a send over the roster rows read for it: the rows it writes, or PlanRefused when its plan throws. */
export function planSend(input: SendInput, candidates: AgentRecord[]): MessageRecord[] {
  let plan: SendPlan;
  try {
    plan = input.plan(candidates);
  } catch (error) {
    throw new PlanRefused(error);
  }
  return plannedMessages(input, plan);
}

/** How an engine writes the batches a queue gathers. */
export interface BatchWriter {
  /** Call `flush` once the sends of this moment have been queued (after the tick's I/O callbacks, or its microtasks). */
  schedule(flush: () => void): void;
  /**
   * Write a batch in one transaction: each send's outcome, in order. Throws (or rejects) when the
   * transaction failed as a whole, which fails every send of the batch with it.
   */
  write(batch: SendInput[]): SendOutcome[] | Promise<SendOutcome[]>;
  /** A send's failure as its caller sees it. */
  failure?(error: unknown): unknown;
  /** After each batch has committed. */
  committed?(): void;
}

interface QueuedSend {
  input: SendInput;
  resolve(records: MessageRecord[]): void;
  reject(error: unknown): void;
}

/**
 * The sends waiting for their batch. One batch is written at a time: sends that arrive while a batch
 * commits (a hub's concurrent requests come in ticks of their own) wait for it and go together in the
 * next, rather than each opening a transaction of its own beside it. Once the last batch has settled,
 * the flush ends a few microtasks later, so that the callers it answered can queue their next sends
 * before the next flush is scheduled: a burst of callers keeps its sends together.
 */
export class SendQueue {
  private queued: QueuedSend[] = [];
  /** Whether a flush is due or under way: a send queued meanwhile joins it. */
  private flushing = false;

  constructor(private readonly writer: BatchWriter) {}

  send(input: SendInput): Promise<MessageRecord[]> {
    return new Promise((resolve, reject) => {
      this.queued.push({ input, resolve, reject });
      if (this.flushing) return;
      this.flushing = true;
      this.writer.schedule(() => void this.flush());
    });
  }

  private async flush(): Promise<void> {
    try {
      await this.writeQueued();
    } finally {
      this.flushing = false;
      // A send queued as the last batch settled: it starts the next flush itself.
      if (this.queued.length > 0) {
        this.flushing = true;
        this.writer.schedule(() => void this.flush());
      }
    }
  }

  private async writeQueued(): Promise<void> {
    while (this.queued.length > 0) {
      const batch = this.queued.splice(0, MAX_SENDS_PER_COMMIT);
      let outcomes: SendOutcome[];
      try {
        outcomes = await this.writer.write(batch.map((queued) => queued.input));
      } catch (error) {
        for (const queued of batch) queued.reject(error);
        continue;
      }
      batch.forEach((queued, index) => {
        const outcome = outcomes[index];
        if (outcome && 'records' in outcome) queued.resolve(outcome.records);
        else queued.reject(outcome ? (this.writer.failure?.(outcome.error) ?? outcome.error) : new Error('send outcome missing'));
      });
      this.writer.committed?.();
    }
  }
}
