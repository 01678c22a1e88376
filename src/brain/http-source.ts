/**
 * The brain's HTTP feed: `GET $BRAIN_URL/feed`. node:http is loaded only when
 * a fetch is due, so a hook that does not refresh pays nothing for it.
 */
import { createRequire } from 'node:module';
import { entryFrom, orderEntries, type BrainEntry, type BrainSource, type FetchResult } from './entry.js';

const BUCKETS = ['hot_arcs', 'inject_blocks', 'entries'];

export interface HttpAnswer {
  status: number;
  body: string;
}

/** One request with a deadline for the whole exchange; rejects on a transport error or the deadline. */
export async function httpRequest(url: string, options: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: string; timeoutMs: number }): Promise<HttpAnswer> {
  const target = new URL(url);
  // Required, not imported: the CLI runs its bundles as scripts, which have no dynamic import().
  const load = createRequire(import.meta.filename);
  const client = (target.protocol === 'https:' ? load('node:https') : load('node:http')) as typeof import('node:http');
  return new Promise((resolve, reject) => {
    const request = client.request(target, { method: options.method, headers: options.headers }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => {
        clearTimeout(timer);
        resolve({ status: response.statusCode ?? 0, body });
      });
      response.on('error', reject);
    });
    const timer = setTimeout(() => request.destroy(new Error(`no answer within ${options.timeoutMs} ms`)), options.timeoutMs);
    request.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    request.end(options.body);
  });
}

export class HttpBrainSource implements BrainSource {
  readonly kind = 'http';
  readonly location: string;

  constructor(
    private readonly baseUrl: string,
    private readonly token: string | null,
    private readonly timeoutMs: number,
  ) {
    this.location = `${baseUrl}/feed`;
  }

  async fetch(): Promise<FetchResult> {
    let answer: HttpAnswer;
    try {
      const headers: Record<string, string> = { accept: 'application/json' };
      if (this.token !== null) headers.authorization = `Bearer ${this.token}`;
      answer = await httpRequest(this.location, { method: 'GET', headers, timeoutMs: this.timeoutMs });
    } catch (error) {
      return { ok: false, error: `${this.location}: ${(error as Error).message}` };
    }
    if (answer.status < 200 || answer.status >= 300) return { ok: false, error: `${this.location} answered HTTP ${answer.status}` };
    let feed: unknown;
    try {
      feed = answer.body.trim() === '' ? {} : JSON.parse(answer.body);
    } catch {
      return { ok: false, error: `${this.location} answered something that is not JSON` };
    }
    if (feed === null || typeof feed !== 'object' || Array.isArray(feed)) return { ok: false, error: `${this.location} answered JSON that is not a feed object` };
    // `{}` (or an empty body) is an authoritative empty feed; an object with other keys but no bucket
    // (`{"error": "db down"}`) is not a feed at all, and must not clear the channel.
    const keys = Object.keys(feed).filter((key) => key !== 'generated_at' && key !== 'hash');
    if (keys.length > 0 && !BUCKETS.some((bucket) => keys.includes(bucket))) {
      return { ok: false, error: `${this.location} answered an object with none of ${BUCKETS.join(', ')} (keys: ${keys.slice(0, 5).join(', ')})` };
    }
    const entries: BrainEntry[] = [];
    const warnings: string[] = [];
    for (const bucket of BUCKETS) {
      const items = (feed as Record<string, unknown>)[bucket];
      if (items === undefined) continue;
      if (!Array.isArray(items)) {
        warnings.push(`the feed's ${bucket} is not a list`);
        continue;
      }
      for (const [index, item] of items.entries()) {
        const where = `the feed's ${bucket}[${index}]`;
        if (item === null || typeof item !== 'object' || Array.isArray(item)) {
          warnings.push(`${where} is not an object; skipped`);
          continue;
        }
        const fields = item as Record<string, unknown>;
        const problems: string[] = [];
        const entry = entryFrom(fields, typeof fields.content === 'string' ? fields.content : '', '', problems);
        for (const problem of problems) warnings.push(`${where}: ${problem}`);
        if (entry) entries.push(entry);
        else warnings.push(`${where} has no ${typeof fields.content === 'string' && fields.content.trim() !== '' ? 'id or title' : 'content'}; skipped`);
      }
    }
    return { ok: true, entries: orderEntries(entries), warnings };
  }
}
