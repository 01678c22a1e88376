/**
 * The notice operations every surface calls (CLI, MCP server, hooks, the
 * library): publish, list, acknowledge, clear, and deliver to a session.
 * Each is one store transaction, audited once it has committed.
 */
import { textRow, type AuditRow } from '../audit/record.js';
import { formatStamp, stampOf, type Clock } from '../model/clock.js';
import type { AuditSink } from './audit-sink.js';
import { InvalidInputError, BusError, NotFoundError, TooLargeError } from '../model/errors.js';
import { sha256Hex, randomId } from '../model/ids.js';
import {
  compareNotices,
  evictionVictims,
  parseChannel,
  parsePriority,
  parseSeverity,
  parseTtl,
  planReconcile,
  rotateRecurring,
  selectNotices,
  severitiesDue,
  MAX_TITLE_LENGTH,
  type NoticeCaps,
  type NoticeCandidate,
  type NoticeMoment,
  type NoticeRecord,
  type NoticeSelection,
  type Severity,
} from './notices.js';
import { receives, type Subscriptions } from './subscriptions.js';
import type { BrainPort, BrainState, ChannelCount, DueNoticesQuery, NoticeListing, NoticesPort, ReconcileOutcome } from '../store/ports.js';
import { quoted } from '../model/quote.js';
import { noticeEvents } from './outbound.js';

export const MAX_NOTICE_BODY_BYTES = 16 * 1024;

export interface PublishRequest {
  message: string;
  /** Empty or absent: a global notice. */
  channel?: string | null;
  severity?: string | null;
  /** `30m`, `4h`, `1d`, seconds as text or a number; absent: the severity's default. */
  ttl?: string | number | null;
  source?: string | null;
  title?: string | null;
  priority?: string | number | null;
}

/** A notice as every surface shows it (snake_case, like the mail views). */
export interface NoticeView {
  notice_id: string;
  channel: string | null;
  severity: Severity;
  title: string | null;
  message: string;
  source: string;
  priority: number;
  content_hash: string;
  created_at: string;
  expires_at: string;
}

/** A notice in a listing: how many sessions were shown it once (info) or acknowledged it. */
export interface ListedNotice extends NoticeView {
  delivered_to: number;
  acknowledged_by: number;
}

export interface PublishResult extends NoticeView {
  /** Notices the channel's cap pushed out to make room. */
  evicted: string[];
}

export function noticeView(notice: NoticeRecord): NoticeView {
  return {
    notice_id: notice.noticeId,
    channel: notice.channel,
    severity: notice.severity,
    title: notice.title,
    message: notice.body,
    source: notice.source,
    priority: notice.priority,
    content_hash: notice.contentHash,
    created_at: notice.createdAt,
    expires_at: notice.expiresAt,
  };
}

/** Same text on the same channel at the same severity: the same hash, whatever its id. */
export function noticeHash(channel: string | null, severity: Severity, title: string | null, body: string): string {
  return sha256Hex(`${channel ?? ''}|${severity}|${title ?? ''}|${body}`).slice(0, 16);
}

/** Validate a publish request the same way on every surface; nothing is stored when this throws. */
export function buildNotice(request: PublishRequest, micros: number): NoticeRecord {
  const body = (request.message ?? '').trim();
  if (body === '') throw new InvalidInputError('message must be non-empty; nothing was published');
  const size = Buffer.byteLength(body, 'utf8');
  if (size > MAX_NOTICE_BODY_BYTES) throw new TooLargeError(`message is ${size} bytes; a notice holds at most ${MAX_NOTICE_BODY_BYTES}. Nothing was published`);
  const channel = parseChannel(request.channel);
  const severity = parseSeverity(request.severity);
  const ttl = parseTtl(request.ttl, severity);
  const priority = parsePriority(request.priority);
  const title = (request.title ?? '').trim() || null;
  if (title !== null && title.length > MAX_TITLE_LENGTH) throw new InvalidInputError(`title is longer than ${MAX_TITLE_LENGTH} characters`);
  const source = (request.source ?? '').trim() || 'operator';
  return {
    noticeId: randomId().replace(/-/g, '').slice(0, 12),
    channel,
    severity,
    title,
    body,
    source,
    priority,
    contentHash: noticeHash(channel, severity, title, body),
    createdAt: formatStamp(micros),
    expiresAt: formatStamp(micros + ttl * 1_000_000),
  };
}

function noticeRow(event: 'publish' | 'acknowledge' | 'clear' | 'evict' | 'expire', ts: string, actor: string, notice: NoticeRecord): AuditRow {
  const text = { id: notice.noticeId, from: notice.source, to: notice.channel ?? '*', threadId: null, body: notice.body };
  return textRow('notice', ts, actor, text, { notice_event: event, severity: notice.severity, expires_at: notice.expiresAt });
}

/** A channel's live notices, by severity (channel null: the global notices). */
export interface ChannelView {
  channel: string | null;
  total: number;
  critical: number;
  alert: number;
  info: number;
  /** When the last of its live notices runs out. */
  last_expiry: string;
}

export class ChannelFullError extends BusError {}

export interface DeliverRequest {
  moment: NoticeMoment;
  /** The client's session id (or, without one, the reader's name): whose receipts count. */
  session: string;
  subscriptions: Subscriptions;
  caps: NoticeCaps;
  /** Bytes of the same hook output already taken (its mail). */
  usedBytes: number;
  render(notice: NoticeCandidate, maxBodyBytes?: number): string;
  /** Notices of any severity due now besides the moment's own (a refresh's restored brain entries). */
  alsoIds?: string[];
}

/**
 * Held-back critical and alert notices move on to the next ones this often: turns come from the
 * clock, since counting them per session would cost every pre-tool hook a write.
 */
export const ROTATION_MS = 1000;

/** Most due notices one delivery reads: critical and alert ones come first in the order. */
export const ROTATION_READ = 500;

/**
 * How many due notices a delivery reads: a turn's worth, and when critical and alert notices take
 * turns, every one of them besides (they come first), so that each gets its turn.
 */
export function noticesToRead(totalDue: Record<Severity, number>, perTurn: number): number {
  return Math.min(ROTATION_READ, perTurn + totalDue.critical + totalDue.alert);
}

/** The live notices by severity that a session with these subscriptions receives, from the channel counts. */
export function receivedCounts(rows: readonly ChannelView[], subscriptions: Subscriptions): { critical: number; alert: number; info: number } {
  const counts = { critical: 0, alert: 0, info: 0 };
  for (const row of rows) {
    if (!receives(subscriptions, row.channel)) continue;
    counts.critical += row.critical;
    counts.alert += row.alert;
    counts.info += row.info;
  }
  return counts;
}

/** What is due to a session at a moment, as the store is asked it. */
function dueQuery(request: Pick<DeliverRequest, 'moment' | 'session' | 'subscriptions' | 'alsoIds'>, now: string): DueNoticesQuery {
  return {
    session: request.session,
    severities: severitiesDue(request.moment),
    channels: request.subscriptions.channels.filter((channel) => channel !== '*'),
    all: request.subscriptions.all,
    now,
    ...(request.alsoIds && request.alsoIds.length > 0 ? { alsoIds: request.alsoIds } : {}),
  };
}

export class Notices {
  constructor(
    private readonly store: NoticesPort & BrainPort,
    private readonly audit: AuditSink,
    private readonly clock: Clock,
    private readonly cap: number,
  ) {}

  async publish(request: PublishRequest, actor = request.source ?? 'operator'): Promise<PublishResult> {
    const notice = buildNotice(request, this.clock.nowMicros());
    const now = notice.createdAt;
    const cap = this.cap;
    const { evicted, expired } = await this.store.publishNotice({
      notice,
      expireBefore: now,
      evict(live) {
        const victims = evictionVictims(live, cap, now);
        if (victims.some((victim) => victim.noticeId === notice.noticeId)) {
          const where = notice.channel === null ? 'the global notices' : `channel ${quoted(notice.channel)}`;
          throw new ChannelFullError(
            `${where} already holds ${live.length - 1} live notices (AGENT_BUS_CHANNEL_MAX_NOTICES=${cap}) that outrank this ${notice.severity} one; nothing was published`,
          );
        }
        return victims;
      },
      outbound: (published, outlets) => noticeEvents(published, outlets, now),
    });
    const who = actor || 'operator';
    this.audit.append([
      ...expired.map((old) => noticeRow('expire', now, who, old)),
      noticeRow('publish', now, who, notice),
      ...evicted.map((victim) => noticeRow('evict', now, who, victim)),
    ]);
    return { ...noticeView(notice), evicted: evicted.map((victim) => victim.noticeId) };
  }

  async list(options: { channel?: string | null; includeExpired?: boolean } = {}): Promise<ListedNotice[]> {
    const rows: NoticeListing[] = await this.store.notices({ now: stampOf(this.clock), ...options });
    return rows.map((row) => ({ ...noticeView(row), delivered_to: row.deliveredTo, acknowledged_by: row.acknowledgedBy }));
  }

  async channels(): Promise<ChannelView[]> {
    const rows: ChannelCount[] = await this.store.channelCounts(stampOf(this.clock));
    return rows.map((row) => ({ channel: row.channel, total: row.total, critical: row.critical, alert: row.alert, info: row.info, last_expiry: row.lastExpiry }));
  }

  async acknowledge(noticeId: string, session: string): Promise<NoticeView> {
    const id = noticeId.trim();
    if (id === '') throw new InvalidInputError('message_id must be non-empty');
    if (session.trim() === '') throw new InvalidInputError('no session to acknowledge for');
    const now = stampOf(this.clock);
    const notice = await this.store.acknowledgeNotice(id, session, now);
    if (notice === null) throw new NotFoundError(`no notice with id ${quoted(id)} (it may have expired or been cleared)`);
    this.audit.append([noticeRow('acknowledge', now, session, notice)]);
    return noticeView(notice);
  }

  async clear(target: { noticeId?: string; channel?: string | null; all?: boolean }, actor = 'operator'): Promise<NoticeView[]> {
    let removed: NoticeRecord[];
    if (target.noticeId !== undefined) removed = await this.store.clearNotices({ kind: 'id', noticeId: target.noticeId.trim() });
    else if (target.channel !== undefined) removed = await this.store.clearNotices({ kind: 'channel', channel: target.channel });
    else if (target.all) removed = await this.store.clearNotices({ kind: 'all' });
    else throw new InvalidInputError('say what to clear: a notice id, a channel, or all');
    const now = stampOf(this.clock);
    this.audit.append(removed.map((notice) => noticeRow('clear', now, actor, notice)));
    return removed.map(noticeView);
  }

  /**
   * Make `channel` hold exactly `desired` (the brain's reconcile): unchanged notices keep their
   * ids and receipts, missing or expired ones are published anew, the rest removed. Audited.
   */
  async reconcile(channel: string, desired: NoticeRecord[], now: string, state: BrainState): Promise<ReconcileOutcome> {
    const outcome = await this.store.reconcileChannel({ channel, plan: (current) => planReconcile(current, desired, now), state });
    this.audit.append([
      ...outcome.removed.map((notice) => noticeRow(notice.expiresAt <= now ? 'expire' : 'clear', now, 'brain-adapter', notice)),
      ...outcome.added.map((notice) => noticeRow('publish', now, 'brain-adapter', notice)),
    ]);
    return outcome;
  }

  /** Whether a delivery to this session at this moment would find anything due (a read only). */
  async anyDue(request: Pick<DeliverRequest, 'moment' | 'session' | 'subscriptions' | 'alsoIds'>): Promise<boolean> {
    return this.store.anyNoticeDue(dueQuery(request, stampOf(this.clock)));
  }

  /** What a hook shows this session now; info notices shown get their receipt in the same transaction. */
  async deliver(request: DeliverRequest): Promise<NoticeSelection> {
    const { caps } = request;
    const micros = this.clock.nowMicros();
    const turn = Math.floor(micros / 1000 / ROTATION_MS) + 1;
    return this.store.deliverNotices({
      query: dueQuery(request, formatStamp(micros)),
      readLimit: (totalDue) => noticesToRead(totalDue, caps.perTurn),
      decide: (due, totalDue) => {
        const ordered = [...due].sort(compareNotices);
        const plain = selectNotices(ordered, totalDue, caps, request.usedBytes, request.render);
        if (plain.heldBack.critical + plain.heldBack.alert === 0) return plain;
        return selectNotices(rotateRecurring(ordered, plain, turn), totalDue, caps, request.usedBytes, request.render);
      },
    });
  }
}
