/** The brain's channel, its state, and the markers written back. */
import type { NoticeRecord } from '../../model/notices.js';
import type { BrainState } from '../../model/records.js';
import type { AttemptsOf } from './attempts.js';

/** What a reconcile changes in a channel (core/notices.ts planReconcile decides it). */
export interface ReconcilePlan {
  /** Notices that stay, id and receipts with them. */
  kept: NoticeRecord[];
  /** Kept notices whose priority changes (priority is not part of the content). */
  reprioritize: Array<{ noticeId: string; priority: number }>;
  /** New notices to insert. */
  added: NoticeRecord[];
  /** Notices to remove, receipts and all. */
  removed: NoticeRecord[];
}

export interface ReconcileInput {
  channel: string;
  /** Called once inside the transaction with the channel's notices. */
  plan(current: NoticeRecord[]): ReconcilePlan;
  /** The brain's state, written in the same transaction. */
  state: BrainState;
}

export interface ReconcileOutcome {
  kept: NoticeRecord[];
  added: NoticeRecord[];
  removed: NoticeRecord[];
}

export interface BrainPort {
  /** Apply a reconcile's plan to a channel and write the brain state, in one transaction. */
  reconcileChannel(input: ReconcileInput): Promise<ReconcileOutcome>;
  /** Record a fetch that did not reconcile (the source was unavailable): the channel is untouched. */
  recordBrainState(state: BrainState): Promise<void>;
  brainState(channel: string): Promise<BrainState | null>;
  /** Record a brain marker before writing it back, once: false when any process recorded it before. */
  recordMarker(key: string, session: string, now: string): Promise<boolean>;
}

export const BRAIN_ATTEMPTS = {
  // Run again, the plan finds its notices added already and says so.
  reconcileChannel: 'once',
  recordBrainState: 'retryable',
  brainState: 'retryable',
  // Run again, it finds its own marker and answers false.
  recordMarker: 'once',
} as const satisfies AttemptsOf<BrainPort>;
