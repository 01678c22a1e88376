/**
 * Searching mail: the query parsed once (core/search-query.ts), the engine's
 * index asked, each send found once (a fan-out's copies are one result), and
 * a snippet made around the first match, the same on both engines.
 */
import { formatStamp, type Clock } from '../model/clock.js';
import { InvalidInputError } from '../model/errors.js';
import { quoted } from '../model/quote.js';
import type { SearchFilter } from '../model/search.js';
import type { SearchPort } from '../store/ports.js';
import { isDuration, parseDuration } from '../model/duration.js';
import { repoOf } from './names.js';
import { parseSearchQuery, snippet, type SnippetPart } from './search-query.js';

export interface SearchRequest {
  query: string;
  /** Whose search it is: it finds that reader's mail and its repo's; null (the human on a local bus) finds all. */
  reader: string | null;
  from?: string | null;
  to?: string | null;
  thread?: string | null;
  /** A duration back from now (`2h`, `7d`) or a date or time (`2026-11-30`). */
  since?: string | null;
  limit?: number;
}

export interface SearchHit {
  message_id: string;
  thread_id: string;
  from: string;
  to: string;
  sent_at: string;
  snippet: SnippetPart[];
}

export const DEFAULT_SEARCH_LIMIT = 20;
const MAX_SEARCH_LIMIT = 500;
/** Copies read per result wanted: a fan-out's copies come back together and count once. */
const COPIES_PER_RESULT = 4;
/** The most copies one look at the index reads, as the looks grow. */
const MAX_COPIES_PER_LOOK = 10_000;

/** `since` as a stamp: a duration back from `nowMillis`, or a date or time. */
export function sinceStamp(since: string, nowMillis: number): string {
  const text = since.trim();
  if (isDuration(text)) return formatStamp((nowMillis - parseDuration(text)) * 1000);
  const millis = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(text) ? `${text}T00:00:00Z` : text);
  if (Number.isNaN(millis)) throw new InvalidInputError(`bad --since ${quoted(since)}: a duration (2h, 7d) or a date (2026-11-30)`);
  return formatStamp(millis * 1000);
}

export async function searchMail(store: SearchPort, request: SearchRequest, clock: Clock): Promise<SearchHit[]> {
  const terms = parseSearchQuery(request.query);
  const limit = Math.min(MAX_SEARCH_LIMIT, Math.max(1, request.limit ?? DEFAULT_SEARCH_LIMIT));
  const reader = request.reader;
  const filter: SearchFilter = {
    // A person has no repo: their own mail only. An agent sees its repo's mail too.
    visibleTo: reader === null ? null : { name: reader, repo: reader.includes('/') ? repoOf(reader) : null },
    from: request.from?.trim() || null,
    to: request.to?.trim() || null,
    thread: request.thread?.trim() || null,
    since: request.since ? sinceStamp(request.since, clock.nowMicros() / 1000) : null,
    before: null,
  };
  const seen = new Set<string>();
  const hits: SearchHit[] = [];
  // Page back through the copies found until `limit` sends are: a broadcast's many copies count once.
  for (let fetch = limit * COPIES_PER_RESULT; ; fetch = Math.min(fetch * 4, MAX_COPIES_PER_LOOK)) {
    const copies = await store.searchMessages(terms, filter, fetch);
    for (const copy of copies) {
      const send = copy.fanoutId ?? copy.messageId;
      if (seen.has(send)) continue;
      seen.add(send);
      hits.push({
        message_id: copy.messageId,
        thread_id: copy.threadId,
        from: copy.fromAgent,
        to: copy.addressedTo ?? copy.toAgent,
        sent_at: copy.sentAt,
        snippet: snippet(copy.body, terms),
      });
      if (hits.length >= limit) return hits;
    }
    const last = copies.at(-1);
    if (copies.length < fetch || last === undefined) return hits;
    filter.before = last.position;
  }
}
