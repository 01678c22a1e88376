/**
 * The outbox: events queued for outbound integrations in the transaction that made them (a send's
 * or a publish's, through their `outbound` rule), taken by one worker at a time under a lease,
 * and settled as delivered, due again, or failed.
 */
import type { OutboxRecord } from '../../model/records.js';
import type { AttemptsOf } from './attempts.js';

/** What one attempt came to. */
export type OutboxOutcome =
  | { state: 'delivered'; at: string; status: number }
  | { state: 'queued'; nextAt: string; status: number | null; error: string }
  | { state: 'failed'; at: string; status: number | null; error: string };

export interface OutboxFilter {
  integration?: string | null;
  state?: string | null;
  limit: number;
}

/** How an integration's deliveries stand. */
export interface OutboxCounts {
  integration: string;
  queued: number;
  failed: number;
  delivered: number;
  lastDeliveredAt: string | null;
}

export interface OutboxPort {
  /** Queue events by themselves, as they are (a test event, taken already; mail and notices queue theirs in their own transactions). */
  queueOutbound(entries: OutboxRecord[]): Promise<void>;
  /**
   * Take, of each integration that is not held, up to `limit` queued events due at `now` that no
   * worker holds, for each of them one more attempt held until `leaseUntil`: an event is taken by
   * one worker at a time, and again only once its lease has run out (the worker that took it is
   * gone). Each integration is a lane of its own: one held, or with many events due, never keeps
   * another's from being taken. Integrations named `busy` (this process's attempts of theirs under
   * way) are skipped.
   */
  claimOutbox(now: string, leaseUntil: string, limit: number, busy?: readonly string[]): Promise<OutboxRecord[]>;
  /**
   * Settle an attempt. A delivered mail event marks the person's copy delivered by `webhook`, in the
   * same transaction. An attempt due again holds its integration until then (none of its events is
   * taken before: a receiver that is down is not tried once per event), and a delivery lets it go.
   * Delivered events finished before `forgetBefore` are forgotten. False when the event is not
   * queued (settled already, or removed).
   */
  finishOutbox(eventId: string, outcome: OutboxOutcome, forgetBefore: string): Promise<boolean>;
  /** The newest events, of one integration or all, in one state or any. */
  outbox(filter: OutboxFilter): Promise<OutboxRecord[]>;
  outboxCounts(): Promise<OutboxCounts[]>;
  /** A failed (or queued) event due again at `now`, its attempts counted afresh and its integration no longer held; false when there is no such event. */
  retryOutbox(eventId: string, now: string): Promise<boolean>;
  /**
   * When the earliest queued event falls due (its attempt's lease run out, its integration no longer
   * held), or null when none is queued; integrations named `busy` left out.
   */
  nextOutboxDue(busy?: readonly string[]): Promise<string | null>;
  /**
   * Hold the lease named `name` until `until`: true when `holder` has it (it was free, ran out
   * before `now`, is this holder's already, or is `replacing`'s: a holder known to be gone). One
   * process at a time does the work it guards.
   */
  holdWorkerLease(name: string, holder: string, now: string, until: string, replacing?: string | null): Promise<boolean>;
  /**
   * Every queued event's attempt lease let go, so it is taken again at once: what a worker that
   * replaced one known to be gone does (the attempts that one had under way ended with it). Returns
   * how many were let go.
   */
  releaseAttemptLeases(): Promise<number>;
  /** Who holds the lease named `name`, and until when; null when nobody does. */
  workerLease(name: string): Promise<{ holder: string; until: string } | null>;
  releaseWorkerLease(name: string, holder: string): Promise<void>;
}

export const OUTBOX_ATTEMPTS = {
  // Run again, it queues the events twice.
  queueOutbound: 'once',
  // Run again, it takes other events (those it took stay held until their lease runs out).
  claimOutbox: 'once',
  // Run again, it finds the event settled and says false.
  finishOutbox: 'once',
  outbox: 'retryable',
  outboxCounts: 'retryable',
  retryOutbox: 'retryable',
  nextOutboxDue: 'retryable',
  holdWorkerLease: 'retryable',
  // Run again, it finds none held.
  releaseAttemptLeases: 'retryable',
  workerLease: 'retryable',
  releaseWorkerLease: 'retryable',
} as const satisfies AttemptsOf<OutboxPort>;
