/**
 * The brain adapter: read the source, and reconcile what it says into the
 * brain channel in one transaction. Loaded by the hooks only when a refresh
 * is due (it carries the YAML parser and, for an HTTP feed, node:http).
 */
import type { HookBus } from '../core/hook-bus.js';
import { formatStamp } from '../model/clock.js';
import { sha256Hex } from '../model/ids.js';
import { buildNotice, MAX_NOTICE_BODY_BYTES } from '../core/notice-ops.js';
import { MAX_TTL_SECONDS, parseChannel, type NoticeRecord } from '../core/notices.js';
import type { BrainState } from '../model/records.js';
import { entryBody, type BrainEntry, type BrainSource } from './entry.js';
import { FileBrainSource } from './file-source.js';
import { HttpBrainSource } from './http-source.js';
import type { BrainSettings } from './settings.js';

export const BRAIN_SOURCE_NAME = 'brain-adapter';

export function sourceFor(settings: BrainSettings): BrainSource {
  const source = settings.source;
  if (source.kind === 'http') return new HttpBrainSource(source.url, source.token, source.timeoutMs);
  if (settings.sourceType !== 'file') {
    const error = `BRAIN_SOURCE_TYPE=${settings.sourceType} is not a source agent-bus knows (file, or set BRAIN_URL)`;
    return { kind: 'file', location: source.path, fetch: async () => ({ ok: false, error }) };
  }
  return new FileBrainSource(source.path);
}

export interface RefreshResult {
  /** The source answered and the channel now holds what it said. */
  ok: boolean;
  error: string | null;
  entries: number;
  kept: number;
  /** Notices published anew at this refresh (new, missing or expired entries). */
  added: string[];
  removed: number;
  /** Entries left out because the channel cap is smaller than the feed. */
  cutByCap: number;
  contentHash: string | null;
  warnings: string[];
}

/** One entry as the notice it becomes; null (with a warning) when it cannot be one. */
function noticeOf(entry: BrainEntry, settings: BrainSettings, micros: number, warnings: string[]): NoticeRecord | null {
  let body = entryBody(entry, settings.hotArcsTopN, settings.payloadMaxChars);
  if (Buffer.byteLength(body, 'utf8') > MAX_NOTICE_BODY_BYTES) {
    warnings.push(`entry ${entry.id} is over ${MAX_NOTICE_BODY_BYTES} bytes even after BRAIN_PAYLOAD_MAX_BYTES; cut`);
    body = Buffer.from(body, 'utf8').subarray(0, MAX_NOTICE_BODY_BYTES - 8).toString('utf8').replace(/\uFFFD$/, '');
  }
  try {
    return buildNotice(
      { channel: settings.channel, message: body, severity: entry.severity, ttl: Math.min(entry.ttlSeconds, MAX_TTL_SECONDS), title: entry.title.slice(0, 200), priority: Math.max(-1000, Math.min(1000, entry.priority)), source: BRAIN_SOURCE_NAME },
      micros,
    );
  } catch (error) {
    warnings.push(`entry ${entry.id} skipped: ${(error as Error).message}`);
    return null;
  }
}

export async function refreshBrain(bus: HookBus, settings: BrainSettings): Promise<RefreshResult> {
  // A BRAIN_CHANNEL that is no channel name is one clear error, before anything is read or written.
  try {
    parseChannel(settings.channel);
  } catch (error) {
    const message = `BRAIN_CHANNEL: ${(error as Error).message}`;
    return { ok: false, error: message, entries: 0, kept: 0, added: [], removed: 0, cutByCap: 0, contentHash: null, warnings: [] };
  }
  const source = sourceFor(settings);
  const previous = await bus.brain.state(settings.channel);
  const fetched = await source.fetch();
  const micros = bus.clock.nowMicros();
  const now = formatStamp(micros);
  const base: BrainState = {
    channel: settings.channel,
    sourceKind: source.kind,
    location: source.location,
    contentHash: previous?.contentHash ?? null,
    entryCount: previous?.entryCount ?? 0,
    cutByCap: previous?.cutByCap ?? 0,
    warnings: previous?.warnings ?? '[]',
    lastFetchAt: now,
    lastOkAt: previous?.lastOkAt ?? null,
    lastError: null,
  };
  if (!fetched.ok) {
    // Unavailable is not empty: the channel keeps its last good content.
    await bus.brain.recordState({ ...base, lastError: fetched.error });
    return { ok: false, error: fetched.error, entries: previous?.entryCount ?? 0, kept: 0, added: [], removed: 0, cutByCap: 0, contentHash: base.contentHash, warnings: [] };
  }
  const warnings = [...fetched.warnings];
  const cap = bus.settings.channelMaxNotices;
  const wanted = fetched.entries.slice(0, cap);
  const cutByCap = fetched.entries.length - wanted.length;
  if (cutByCap > 0) warnings.push(`${cutByCap} entries cut by the channel cap (AGENT_BUS_CHANNEL_MAX_NOTICES=${cap})`);
  // Entries that make the same notice are one notice (the first, by priority, stands for them).
  const seen = new Set<string>();
  const desired = wanted
    .map((entry, index) => noticeOf(entry, settings, micros + index, warnings))
    .filter((notice): notice is NoticeRecord => notice !== null && !seen.has(notice.contentHash) && Boolean(seen.add(notice.contentHash)));
  const contentHash = desired.length === 0 ? null : sha256Hex(desired.map((notice) => notice.contentHash).join(',')).slice(0, 16);
  const outcome = await bus.notices.reconcile(settings.channel, desired, now, {
    ...base,
    contentHash,
    entryCount: desired.length,
    cutByCap,
    warnings: JSON.stringify(warnings),
    lastOkAt: now,
  });
  return {
    ok: true,
    error: null,
    entries: desired.length,
    kept: outcome.kept.length,
    added: outcome.added.map((notice) => notice.noticeId),
    removed: outcome.removed.length,
    cutByCap,
    contentHash,
    warnings,
  };
}
