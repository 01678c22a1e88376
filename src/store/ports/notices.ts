/** Notices: publish, deliver with receipts, list, acknowledge, clear. */
import type { NoticeCandidate, NoticeRecord, Severity } from '../../model/notices.js';
import type { OutboundIntake, OutletRecord } from '../../model/records.js';
import type { AttemptsOf } from './attempts.js';

export interface PublishNoticeInput {
  notice: NoticeRecord;
  /** Notices that expired at or before this are removed first, receipts and all (and returned). */
  expireBefore: string;
  /** Called once with the channel's notices after the insert (the new one included): the ones to remove. Throws to refuse the publish. */
  evict(live: NoticeRecord[]): NoticeRecord[];
  /** Decides the events queued for the outbound integrations read inside the transaction, written in it too. Called only when there are any. */
  outbound?(notice: NoticeRecord, outlets: OutletRecord[]): OutboundIntake[];
}

/** The notices due for one session at one hook. */
export interface DueNoticesQuery {
  session: string;
  severities: Severity[];
  /** The session's channels; ignored when `all`. Global notices are always due. */
  channels: string[];
  all: boolean;
  now: string;
  /** Before a tool call: notices due besides the critical ones (the brain entries a refresh just restored). */
  alsoIds?: string[];
}

/** What a delivery decides that the store must write: the info notices shown, which get a receipt. */
export interface NoticeDecision {
  receipts: string[];
}

/**
 * One delivery, one transaction: the due notices are counted by severity, `readLimit` says from
 * the counts how many to read (in the order severity, priority descending, age, id), `decide` is
 * called once with them, and the receipts it names are written before the transaction ends.
 */
export interface DeliverNoticesInput<S extends NoticeDecision = NoticeDecision> {
  query: DueNoticesQuery;
  readLimit(totalDue: Record<Severity, number>): number;
  decide(due: NoticeCandidate[], totalDue: Record<Severity, number>): S;
}

export interface NoticeFilter {
  now: string;
  channel?: string | null;
  includeExpired?: boolean;
}

export interface NoticeListing extends NoticeRecord {
  /** Sessions that were shown this notice once (info) or acknowledged it. */
  deliveredTo: number;
  acknowledgedBy: number;
}

export interface ChannelCount {
  channel: string | null;
  total: number;
  critical: number;
  alert: number;
  info: number;
  /** When the last of its live notices runs out. */
  lastExpiry: string;
}

export type NoticeClearTarget = { kind: 'id'; noticeId: string } | { kind: 'channel'; channel: string | null } | { kind: 'all' };

export interface NoticesPort {
  /** Store a notice, in one transaction with the removal of the expired ones and of those `evict` picks. */
  publishNotice(input: PublishNoticeInput): Promise<{ evicted: NoticeRecord[]; expired: NoticeRecord[] }>;
  /**
   * Decide which notices a hook shows a session and, in the same transaction,
   * give the info notices shown a receipt: two hooks of one session never both show one.
   */
  deliverNotices<S extends NoticeDecision>(input: DeliverNoticesInput<S>): Promise<S>;
  /** Whether any notice is due to the query's session (a read: a hub asks it beside the inbox's). */
  anyNoticeDue(query: DueNoticesQuery): Promise<boolean>;
  notices(filter: NoticeFilter): Promise<NoticeListing[]>;
  channelCounts(now: string): Promise<ChannelCount[]>;
  /** Silence a notice for one session; null when there is no such notice. */
  acknowledgeNotice(noticeId: string, session: string, now: string): Promise<NoticeRecord | null>;
  clearNotices(target: NoticeClearTarget): Promise<NoticeRecord[]>;
}

export const NOTICES_ATTEMPTS = {
  // Run again, a publish stores a second notice.
  publishNotice: 'once',
  // Run again, the info notices shown have their receipts and are not due any more.
  deliverNotices: 'once',
  anyNoticeDue: 'retryable',
  notices: 'retryable',
  channelCounts: 'retryable',
  // A second acknowledgement keeps the first one's time.
  acknowledgeNotice: 'retryable',
  clearNotices: 'once',
} as const satisfies AttemptsOf<NoticesPort>;
