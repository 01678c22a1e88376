/**
 * The dashboard's live feed, as server-sent events: `audit` with each row the
 * audit log gains (followed as `tail -f` follows it), and `change` whenever the
 * store's change feed moves (the page then reads again what it shows). The
 * page never polls; a comment every 15 s keeps proxies from closing the stream.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isChainRow } from '../../audit/chain.js';
import { followLines, type Follower } from '../../audit/follow.js';
import { parseAuditLine } from '../../audit/log.js';
import type { SharedChanges } from '../waits.js';
import { SECURITY_HEADERS } from './assets.js';

const KEEPALIVE_MS = 15_000;
/** Open streams at most, and per signed-in name: past them a new one is refused (503), none is pushed out. */
const MAX_STREAMS = 256;
const MAX_STREAMS_PER_ACTOR = 16;
/** A stream whose reader has this much unread is dropped (the page reconnects and reads afresh). */
const MAX_BUFFERED_BYTES = 1 << 20;
/** How often each stream's sign-in is checked again: a revoked token or a new key ends its streams. */
const RECHECK_MS = 30_000;

interface Stream {
  actor: string;
  stillSignedIn(): Promise<boolean>;
}

export class DashboardEvents {
  private readonly streams = new Map<ServerResponse, Stream>();
  private readonly recheck: NodeJS.Timeout;
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
    this.recheck = setInterval(() => void this.checkSignIns(), RECHECK_MS);
    this.recheck.unref();
    void this.watchStore();
  }

  /** Open a stream for one page of a signed-in actor. */
  open(req: IncomingMessage, res: ServerResponse, actor: string, stillSignedIn: () => Promise<boolean>): void {
    // The page may have gone while its sign-in was checked.
    if (req.destroyed || res.destroyed || res.writableEnded) return;
    const mine = [...this.streams.values()].filter((stream) => stream.actor === actor).length;
    if (this.streams.size >= MAX_STREAMS || mine >= MAX_STREAMS_PER_ACTOR) {
      res.writeHead(503, { ...SECURITY_HEADERS, 'content-type': 'application/json', 'retry-after': '5' });
      res.end(`${JSON.stringify({ error: 'too many live pages open; close one and reload' })}\n`);
      return;
    }
    res.writeHead(200, { ...SECURITY_HEADERS, 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive', 'x-accel-buffering': 'no' });
    res.write(`retry: 2000\n: connected\n\n`);
    this.streams.set(res, { actor, stillSignedIn });
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

  private async checkSignIns(): Promise<void> {
    for (const [res, stream] of [...this.streams]) {
      const still = await stream.stillSignedIn().catch(() => true);
      if (!still) this.drop(res);
    }
  }

  private drop(res: ServerResponse): void {
    if (!this.streams.delete(res)) return;
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
    for (const res of [...this.streams.keys()]) {
      if (res.writableLength > MAX_BUFFERED_BYTES) this.drop(res);
      else res.write(chunk);
    }
  }

  close(): void {
    this.stopped.abort();
    clearInterval(this.keepalive);
    clearInterval(this.recheck);
    for (const res of [...this.streams.keys()]) this.drop(res);
  }
}
