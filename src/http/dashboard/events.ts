/**
 * The dashboard's live feed, as server-sent events: `audit` with each row the
 * audit log gains (followed as `tail -f` follows it), and `change` whenever the
 * store's change feed moves (the page then reads again what it shows). The
 * page never polls; a comment every 15 s keeps proxies from closing the stream.
 */
import type { ServerResponse } from 'node:http';
import { isChainRow } from '../../audit/chain.js';
import { followLines, type Follower } from '../../audit/follow.js';
import { parseAuditLine } from '../../audit/log.js';
import type { SharedChanges } from '../waits.js';
import { SECURITY_HEADERS } from './assets.js';

const KEEPALIVE_MS = 15_000;
/** The open streams at most; past it the oldest is closed (the page reconnects). */
const MAX_STREAMS = 256;

export class DashboardEvents {
  private readonly streams = new Set<ServerResponse>();
  private follower: Follower | null = null;
  private readonly keepalive: NodeJS.Timeout;
  private readonly stopped = new AbortController();
  private id = 0;

  constructor(
    private readonly auditPath: string,
    private readonly changes: SharedChanges,
    private readonly auditPollMs = 1_000,
  ) {
    this.keepalive = setInterval(() => this.write(': keepalive\n\n'), KEEPALIVE_MS);
    this.keepalive.unref();
    void this.watchStore();
  }

  /** Open a stream for one page. */
  open(res: ServerResponse): void {
    if (this.streams.size >= MAX_STREAMS) {
      const oldest = this.streams.values().next().value;
      if (oldest !== undefined) this.drop(oldest);
    }
    res.writeHead(200, { ...SECURITY_HEADERS, 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive', 'x-accel-buffering': 'no' });
    res.write(`retry: 2000\n: connected\n\n`);
    this.streams.add(res);
    res.once('close', () => this.drop(res));
    this.follower ??= followLines(
      this.auditPath,
      (line) => {
        const row = parseAuditLine(line);
        if (row !== null && !isChainRow(row)) this.send('audit', row);
      },
      { pollMs: this.auditPollMs },
    );
  }

  get open_streams(): number {
    return this.streams.size;
  }

  private drop(res: ServerResponse): void {
    this.streams.delete(res);
    res.end();
    if (this.streams.size === 0) {
      this.follower?.close();
      this.follower = null;
    }
  }

  private async watchStore(): Promise<void> {
    while (!this.stopped.signal.aborted && !this.changes.closed) {
      const seen = this.changes.version;
      await this.changes.next(60_000, this.stopped.signal);
      if (this.changes.version !== seen && this.streams.size > 0) this.send('change', { version: this.changes.version });
    }
  }

  private send(event: string, data: unknown): void {
    this.id++;
    // JSON holds no raw newline, so one data line carries it whole.
    this.write(`id: ${this.id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  private write(chunk: string): void {
    for (const res of this.streams) res.write(chunk);
  }

  close(): void {
    this.stopped.abort();
    clearInterval(this.keepalive);
    for (const res of [...this.streams]) this.drop(res);
  }
}
