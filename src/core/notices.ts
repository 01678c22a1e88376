/**
 * Notices: broadcasts with a severity and a TTL, global or on a channel.
 * Stored once and filtered at read time by each session's subscriptions.
 * This module holds the rules only: validation, subscriptions, which notices
 * are due at which hook, their order, and the caps on one hook's output.
 */
import { InvalidInputError } from '../model/errors.js';
import { SEVERITIES, type NoticeCandidate, type NoticeRecord, type Severity } from '../model/notices.js';
import { setting, type Env } from '../model/settings.js';
import type { ReconcilePlan } from '../store/ports.js';
import { quoted } from '../model/quote.js';
import { parseDuration } from '../model/duration.js';

export { SEVERITIES, type NoticeCandidate, type NoticeRecord, type Severity };

/** Seconds a notice lives when its publisher gives no TTL. */
export const DEFAULT_TTL_SECONDS: Record<Severity, number> = { critical: 1800, alert: 3600, info: 14_400 };
/** Longest TTL accepted: a notice is ambient context, not a record. */
export const MAX_TTL_SECONDS = 30 * 86_400;
export const DEFAULT_PRIORITY = 5;
export const MAX_CHANNEL_LENGTH = 64;
export const MAX_TITLE_LENGTH = 200;

export function severityRank(severity: Severity): number {
  return severity === 'critical' ? 0 : severity === 'alert' ? 1 : 2;
}

export function parseSeverity(raw: string | undefined | null): Severity {
  const value = (raw ?? '').trim().toLowerCase();
  if (value === '') return 'info';
  if ((SEVERITIES as readonly string[]).includes(value)) return value as Severity;
  throw new InvalidInputError(`unknown severity ${quoted(raw)}: use info, alert or critical`);
}

/** A TTL as `45s`, `30m`, `4h`, `1d` or plain seconds; undefined/empty gives the severity's default. */
export function parseTtl(raw: string | number | undefined | null, severity: Severity): number {
  if (raw === undefined || raw === null || (typeof raw === 'string' && raw.trim() === '')) return DEFAULT_TTL_SECONDS[severity];
  // Text is read as every duration is; a number (from a tool's JSON) is seconds.
  const seconds = typeof raw === 'number' ? raw : parseDuration(raw, { what: 'TTL', longestMs: MAX_TTL_SECONDS * 1000, longestText: '30d' }) / 1000;
  if (!Number.isInteger(seconds) || seconds <= 0) throw new InvalidInputError(`bad TTL ${quoted(raw)}: it must be a positive whole number of seconds`);
  if (seconds > MAX_TTL_SECONDS) throw new InvalidInputError(`bad TTL ${quoted(raw)}: the longest is 30d`);
  return seconds;
}

/** A channel name, or null for a global notice (an empty channel). */
export function parseChannel(raw: string | undefined | null): string | null {
  const value = (raw ?? '').trim();
  if (value === '') return null;
  if (value.length > MAX_CHANNEL_LENGTH || !/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(value)) {
    throw new InvalidInputError(
      `bad channel ${quoted(raw)}: use up to ${MAX_CHANNEL_LENGTH} letters, digits, '.', '_' or '-', starting with a letter or digit`,
    );
  }
  return value;
}

export function parsePriority(raw: string | number | undefined | null): number {
  if (raw === undefined || raw === null || raw === '') return DEFAULT_PRIORITY;
  if (typeof raw === 'string' && !/^\s*-?\d+\s*$/.test(raw)) throw new InvalidInputError(`bad priority ${quoted(raw)}: use a whole number from -1000 to 1000`);
  const value = typeof raw === 'number' ? raw : Number(raw.trim());
  if (!Number.isInteger(value) || value < -1000 || value > 1000) throw new InvalidInputError(`bad priority ${quoted(raw)}: use a whole number from -1000 to 1000`);
  return value;
}

/** Where a hook runs decides which severities are due there (the spec's delivery table). */
export type NoticeMoment = 'session-start' | 'prompt' | 'pre-tool';

export function severitiesDue(moment: NoticeMoment): Severity[] {
  return moment === 'pre-tool' ? ['critical'] : ['critical', 'alert', 'info'];
}

/** Severity first, then priority (higher first), then age (older first). */
export function compareNotices(a: NoticeRecord, b: NoticeRecord): number {
  return (
    severityRank(a.severity) - severityRank(b.severity) ||
    b.priority - a.priority ||
    (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0) ||
    (a.noticeId < b.noticeId ? -1 : a.noticeId > b.noticeId ? 1 : 0)
  );
}

export interface NoticeCaps {
  /** Most notices one hook output carries. */
  perTurn: number;
  /** Most UTF-8 bytes of notice text one hook output carries (mail printed with it counts too). */
  maxBytes: number;
}

export function noticeCaps(env: Env): NoticeCaps {
  return {
    perTurn: setting(env, 'AGENT_BUS_NOTICES_PER_TURN'),
    maxBytes: setting(env, 'AGENT_BUS_NOTICE_MAX_BYTES'),
  };
}

/**
 * Which of the live notices on a channel go when a new one would take it past
 * its cap: expired ones first, then the lowest severity, the lowest priority,
 * the oldest. `incoming` is among `existing`; if it is the one to go, the
 * channel is full of notices that outrank it and the publish is refused.
 */
export function evictionVictims(existing: NoticeRecord[], cap: number, now: string): NoticeRecord[] {
  const excess = existing.length - cap;
  if (excess <= 0) return [];
  const order = [...existing].sort((a, b) => {
    const expiredA = a.expiresAt <= now ? 0 : 1;
    const expiredB = b.expiresAt <= now ? 0 : 1;
    return expiredA - expiredB || severityRank(b.severity) - severityRank(a.severity) || a.priority - b.priority || (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0);
  });
  return order.slice(0, excess);
}

export interface NoticeSelection {
  shown: NoticeCandidate[];
  /** Due but left for next time by a cap, by severity. */
  heldBack: Record<Severity, number>;
  /** Info notices shown now: they get a receipt, so the session never sees them again. */
  receipts: string[];
  /** Shown with their body cut to fit the byte budget: notice id → most body bytes. */
  truncated: Map<string, number>;
}

export function heldBackCount(selection: NoticeSelection): number {
  return selection.heldBack.critical + selection.heldBack.alert + selection.heldBack.info;
}

/**
 * Pick what one hook output shows from the due notices (already ordered and
 * filtered), within the per-turn count and the byte budget left after
 * `usedBytes`. `totalDue` counts every due notice, including ones not passed in.
 */
export function selectNotices(
  due: NoticeCandidate[],
  totalDue: Record<Severity, number>,
  caps: NoticeCaps,
  usedBytes: number,
  /** The notice as shown; with `maxBodyBytes`, its body cut to that and marked as cut. */
  render: (notice: NoticeCandidate, maxBodyBytes?: number) => string,
): NoticeSelection {
  const shown: NoticeCandidate[] = [];
  const truncated = new Map<string, number>();
  let budget = caps.maxBytes - usedBytes - HEADER_ALLOWANCE;
  /** Bytes of the critical and alert notices shown: they come back at every turn. */
  let recurring = 0;
  for (const notice of due) {
    if (shown.length >= caps.perTurn) break;
    const size = Buffer.byteLength(render(notice), 'utf8') + 1;
    if (size <= budget) {
      shown.push(notice);
      budget -= size;
      if (notice.severity !== 'info') recurring += size;
      continue;
    }
    // A notice that will fit once the mail and the info notices ahead of it are shown waits for that
    // turn. One that never will (critical and alert ones ahead of it come back at every turn) is shown
    // now, cut to the room that is left, rather than held back for ever.
    const fitsLater = size <= caps.maxBytes - HEADER_ALLOWANCE - recurring;
    if (!fitsLater && budget > MIN_CUT_BYTES) {
      const frame = Buffer.byteLength(render({ ...notice, body: '' }), 'utf8') + CUT_MARKER_BYTES + 1;
      // The rendering indents every line of a body, so the cut is found by measuring what it renders to.
      const fits = (bytes: number): boolean => Buffer.byteLength(render(notice, bytes), 'utf8') + 1 <= budget;
      let low = 0;
      let high = Math.max(0, budget - frame);
      while (low < high) {
        const middle = Math.ceil((low + high) / 2);
        if (fits(middle)) low = middle;
        else high = middle - 1;
      }
      const limit = low;
      if (limit > MIN_CUT_BYTES / 2) {
        shown.push(notice);
        truncated.set(notice.noticeId, limit);
        budget = 0;
      }
    }
    break;
  }
  const heldBack: Record<Severity, number> = { critical: totalDue.critical, alert: totalDue.alert, info: totalDue.info };
  for (const notice of shown) heldBack[notice.severity] = Math.max(0, heldBack[notice.severity] - 1);
  return { shown, heldBack, receipts: shown.filter((notice) => notice.severity === 'info').map((notice) => notice.noticeId), truncated };
}

/**
 * Critical and alert notices take turns when more are due than one hook output
 * holds: each severity's due notices (in order) start `k` further on at each
 * turn, `k` being how many of them the output holds, so every one is shown in
 * turn instead of the first few for ever. Info notices keep their place after them.
 */
export function rotateRecurring(ordered: NoticeCandidate[], unrotated: NoticeSelection, turn: number): NoticeCandidate[] {
  const rotated: NoticeCandidate[] = [];
  for (const severity of ['critical', 'alert'] as const) {
    const group = ordered.filter((notice) => notice.severity === severity);
    const held = unrotated.shown.filter((notice) => notice.severity === severity).length;
    if (held === 0 || group.length <= held) {
      rotated.push(...group);
      continue;
    }
    const offset = ((turn - 1) * held) % group.length;
    rotated.push(...group.slice(offset), ...group.slice(0, offset));
  }
  return [...rotated, ...ordered.filter((notice) => notice.severity === 'info')];
}

/** Bytes kept for the block's heading, its closing hint and the held-back line. */
const HEADER_ALLOWANCE = 400;
const MIN_CUT_BYTES = 200;
export const CUT_MARKER = '\n[…truncated]';
const CUT_MARKER_BYTES = Buffer.byteLength(CUT_MARKER, 'utf8');

/** `text` cut to at most `maxBytes` UTF-8 bytes without splitting a character. */
export function cutToBytes(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text, 'utf8') <= maxBytes) return text;
  let used = 0;
  let end = 0;
  for (const char of text) {
    const size = Buffer.byteLength(char, 'utf8');
    if (used + size > maxBytes) break;
    used += size;
    end += char.length;
  }
  return text.slice(0, end);
}

/**
 * Make a channel hold exactly `desired`: a live notice with a desired content hash stays (its
 * id and receipts with it; a new priority reorders it in place), desired ones missing or
 * expired are published anew, every other notice of the channel goes.
 */
export function planReconcile(current: NoticeRecord[], desired: NoticeRecord[], now: string): ReconcilePlan {
  const live = new Map<string, NoticeRecord>();
  for (const notice of current) if (notice.expiresAt > now && !live.has(notice.contentHash)) live.set(notice.contentHash, notice);
  const plan: ReconcilePlan = { kept: [], reprioritize: [], added: [], removed: [] };
  const keep = new Set<string>();
  for (const wanted of desired) {
    const existing = live.get(wanted.contentHash);
    if (existing && !keep.has(existing.noticeId)) {
      keep.add(existing.noticeId);
      if (existing.priority !== wanted.priority) plan.reprioritize.push({ noticeId: existing.noticeId, priority: wanted.priority });
      plan.kept.push({ ...existing, priority: wanted.priority });
      continue;
    }
    plan.added.push(wanted);
  }
  plan.removed = current.filter((notice) => !keep.has(notice.noticeId));
  return plan;
}
