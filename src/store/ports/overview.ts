/** What the dashboard reads beside the other ports: each answers from an index, whatever the size of the bus. */
import type { AttemptsOf } from './attempts.js';

/** A message's place in the order of storing and the little a list of threads shows of it. */
export interface MessageGlance {
  position: number;
  threadId: string;
  fromAgent: string;
  toAgent: string;
  addressedTo: string | null;
  sentAt: string;
  /** The body's first code points (GLANCE_CHARS at most). */
  preview: string;
}

/** How much a glance shows of a body. */
export const GLANCE_CHARS = 160;
/** The sender-and-address pairs a window keeps: the busiest. */
export const MAIL_PAIRS = 300;

/** A thread's counts: its sends (a fan-out is one), the copies stored, those unread. */
export interface ThreadCount {
  threadId: string;
  sends: number;
  copies: number;
  unread: number;
  firstSentAt: string;
  lastSentAt: string;
  /** The position of its newest message. */
  lastPosition: number;
}

/** The sends of a window of time: by hour (`YYYY-MM-DDTHH`), and by sender and address (a fan-out once, to what it was addressed to). */
export interface MailWindow {
  hours: Array<{ hour: string; sends: number }>;
  pairs: Array<{ from: string; to: string; sends: number }>;
}

export interface OverviewPort {
  /** The messages stored before position `before` (null: from the newest), newest first, at most `limit`. */
  glancesBefore(before: number | null, limit: number): Promise<MessageGlance[]>;
  /** The counts of each thread named (those with no message are left out). */
  threadCounts(threadIds: string[]): Promise<ThreadCount[]>;
  /**
   * The sends at or after `since`. Positions follow sending time, so the window is found by
   * reading back from the newest message to the first older than `since`: its cost follows the
   * window, not the bus.
   */
  mailSince(since: string): Promise<MailWindow>;
}

export const OVERVIEW_ATTEMPTS = {
  glancesBefore: 'retryable',
  threadCounts: 'retryable',
  mailSince: 'retryable',
} as const satisfies AttemptsOf<OverviewPort>;
