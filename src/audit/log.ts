/**
 * The append-only audit log. Rows go out in whole-line writes on an O_APPEND
 * descriptor, each operation's rows within one write, so concurrent writers
 * never interleave within a line and a reader never sees half a row. Each
 * write is made under a lock shared by every process on the machine, which
 * is what lets each row chain from the one truly before it (see chain.ts).
 * Reading the tail seeks from the end.
 */
import { closeSync, constants, fstatSync, mkdirSync, openSync, readSync, statSync, writeSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { nowStamp } from '../model/clock.js';
import { chainedLine, continueRow, fileEnd, fileEndAt, genesisRow, isChainRow, type ChainHead } from './chain.js';
import { logFilesNewestFirst, rotateFiles, rotatedPath } from './files.js';
import type { AuditRow } from './record.js';

const TAIL_CHUNK = 64 * 1024;
/** No audit row comes near this; anything longer is not a row. */
const MAX_LINE_BYTES = 1024 * 1024;

export type AuditErrorHandler = (message: string) => void;

/**
 * Mutual exclusion among the processes appending to one log. It must let go when its holder
 * dies (a `kill -9` mid-append never wedges the log).
 */
export interface AppendLock {
  hold(work: () => void): void;
  close(): void;
}

/** For a log only this process writes (tests, tools): no lock to take. */
export const IN_PROCESS_LOCK: AppendLock = { hold: (work) => work(), close: () => undefined };

export interface AuditLogOptions {
  onError?: AuditErrorHandler;
  /** Made on the first write: a process that writes no row never opens it. */
  lock?: () => AppendLock;
  /** Move the file aside (to .1, .2 …) before a write would take it past this size; 0: never. */
  maxBytes?: number;
}

const reportToStderr: AuditErrorHandler = (message) => {
  process.stderr.write(`agent-bus: ${message}\n`);
};

export class AuditLog {
  private fd: number | null = null;
  private inode = -1;
  /** The open file's size as the last look at it found it. */
  private size = 0;
  private pending: AuditRow[] = [];
  private flushQueued = false;
  private lock: AppendLock | null = null;
  /** The head this process last wrote and the file's size after it: still the head while the size is unchanged. */
  private known: { inode: number; size: number; head: ChainHead } | null = null;
  private readonly onError: AuditErrorHandler;
  private readonly makeLock: () => AppendLock;
  private readonly maxBytes: number;

  /**
   * A log that cannot be written is reported, never thrown: the operation has
   * committed by then, and the database is the record of truth.
   */
  constructor(
    readonly path: string,
    options: AuditLogOptions = {},
  ) {
    this.onError = options.onError ?? reportToStderr;
    this.makeLock = options.lock ?? (() => IN_PROCESS_LOCK);
    this.maxBytes = options.maxBytes ?? 0;
  }

  /**
   * Fields added to every row appended while it returns some: the hub names itself and the
   * token a request came with (its id, never the token), for whatever that request does.
   */
  stamp: (() => Record<string, string> | undefined) | null = null;
  /** Told of every row as it is appended (the hub counts what it did for its metrics). */
  observe: ((rows: readonly AuditRow[], stamp: Record<string, string> | undefined) => void) | null = null;

  /**
   * Queue rows for the log. Rows appended in the same tick (the sends of one
   * group commit, say) go out together in one write, made before any caller
   * awaiting those operations resumes: a caller that sees a result can read its row.
   */
  append(rows: readonly AuditRow[]): void {
    if (rows.length === 0) return;
    const stamp = this.stamp?.();
    for (const row of rows) this.pending.push(stamp === undefined ? row : { ...row, ...stamp });
    this.observe?.(rows, stamp);
    if (!this.flushQueued) {
      this.flushQueued = true;
      queueMicrotask(() => this.flush());
    }
  }

  /** Write whatever is queued now. */
  flush(): void {
    this.flushQueued = false;
    if (this.pending.length === 0) return;
    const rows = this.pending;
    this.pending = [];
    try {
      this.lock ??= this.makeLock();
      this.lock.hold(() => this.write(rows));
    } catch (error) {
      this.known = null;
      this.onError(`could not write ${rows.length} row(s) to the audit log at ${this.path}: ${(error as Error).message}`);
    }
  }

  close(): void {
    this.flush();
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
    this.lock?.close();
    this.lock = null;
  }

  /** Under the lock: chain the rows from the log's last row, rotate if they would overflow it, write them. */
  private write(rows: AuditRow[]): void {
    let fd = this.descriptor();
    const size = this.size;
    let out = chainRows(rows, this.startOf(fd, size));
    let before = size;
    if (this.maxBytes > 0 && size > 0 && size + Buffer.byteLength(out.text) > this.maxBytes) {
      rotateFiles(this.path);
      fd = this.descriptor();
      before = this.size;
      out = chainRows(rows, this.startOf(fd, before));
    }
    const data = Buffer.from(out.text, 'utf8');
    let offset = 0;
    while (offset < data.length) offset += writeSync(fd, data, offset, data.length - offset);
    this.known = { inode: this.inode, size: before + data.length, head: out.head };
  }

  /**
   * Where the next row chains from, and any line to write before it: the head this process left
   * when the file has not grown since; else the file's last chained row; in a new file, a row
   * carrying the chain on from the newest rotated file, or a genesis.
   */
  private startOf(fd: number, size: number): ChainStart {
    const known = this.known;
    if (known !== null && known.inode === this.inode && known.size === size) return { head: known.head, prefix: '' };
    const end = size === 0 ? null : fileEnd(fd);
    if (end?.kind === 'chained') return { head: end.head, prefix: end.endsWithNewline ? '' : '\n' };
    if (end === null) {
      const previous = rotatedPath(this.path, 1);
      const carried = fileEndAt(previous);
      if (carried.kind === 'chained') {
        const first = chainedLine(continueRow(nowStamp(), carried.head, basename(previous)), carried.head);
        return { head: first.head, prefix: `${first.line}\n` };
      }
    }
    // A new log, or one whose rows were written before the chain began. A torn last line gets
    // its newline, so the genesis starts a line of its own.
    const separator = end !== null && end.kind === 'unchained' && !end.endsWithNewline ? '\n' : '';
    const first = chainedLine(genesisRow(nowStamp()), null);
    return { head: first.head, prefix: `${separator}${first.line}\n` };
  }

  /**
   * The open log, and its size in `size`; reopened when the file was rotated or removed since
   * (long-running servers). One stat of the path tells both.
   */
  private descriptor(): number {
    if (this.fd !== null) {
      const current = statSync(this.path, { throwIfNoEntry: false });
      if (current !== undefined && current.ino === this.inode) {
        this.size = current.size;
        return this.fd;
      }
      closeSync(this.fd);
      this.fd = null;
    }
    mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
    this.fd = openSync(this.path, constants.O_RDWR | constants.O_APPEND | constants.O_CREAT, 0o600);
    const opened = fstatSync(this.fd);
    this.inode = opened.ino;
    this.size = opened.size;
    return this.fd;
  }
}

interface ChainStart {
  head: ChainHead;
  prefix: string;
}

/** The text of `rows` chained after `start`, and the head they leave. */
function chainRows(rows: readonly AuditRow[], start: ChainStart): { text: string; head: ChainHead } {
  let text = start.prefix;
  let head = start.head;
  for (const row of rows) {
    const next = chainedLine(row, head);
    text += `${next.line}\n`;
    head = next.head;
  }
  return { text, head };
}

/** Parse one audit line; blank or malformed lines give null. */
export function parseAuditLine(line: string): AuditRow | null {
  if (line.trim() === '') return null;
  try {
    const value: unknown = JSON.parse(line);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as AuditRow) : null;
  } catch {
    return null;
  }
}

/**
 * The last `limit` rows of the log about the bus (the chain's own rows left out), oldest first,
 * across the rotated files when the current one holds fewer. `endOffset` stops the current file
 * there (what a follower will print next is not printed twice).
 */
export function tailAudit(path: string, limit: number, endOffset?: number): AuditRow[] {
  if (limit <= 0) return [];
  const found: AuditRow[][] = [];
  let count = 0;
  const files = logFilesNewestFirst(path);
  for (const file of files) {
    const rows = tailFile(file, limit - count, file === path ? endOffset : undefined);
    found.push(rows);
    count += rows.length;
    if (count >= limit) break;
  }
  return found.reverse().flat();
}

/**
 * The last `limit` bus rows of one file, oldest first, reading backwards from the end in chunks:
 * the cost follows `limit`, not the size of the log. A "line" longer than any audit row could be
 * is skipped rather than buffered.
 */
function tailFile(path: string, limit: number, endOffset?: number): AuditRow[] {
  if (limit <= 0) return [];
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  try {
    let position = Math.min(fstatSync(fd).size, endOffset ?? Number.POSITIVE_INFINITY);
    const rows: AuditRow[] = [];
    const chunk = Buffer.alloc(TAIL_CHUNK);
    // The tail of the line being assembled (bytes after the newline not yet seen), or null once it is too long.
    let carry: Buffer | null = Buffer.alloc(0);
    const take = (piece: Buffer): void => {
      if (carry === null) return;
      const row = parseAuditLine(Buffer.concat([piece, carry]).toString('utf8'));
      if (row && !isChainRow(row)) rows.push(row);
    };
    while (position > 0 && rows.length < limit) {
      const length = Math.min(TAIL_CHUNK, position);
      position -= length;
      readSync(fd, chunk, 0, length, position);
      let end = length;
      for (let index = length - 1; index >= 0 && rows.length < limit; index--) {
        if (chunk[index] !== 0x0a) continue;
        take(chunk.subarray(index + 1, end));
        carry = Buffer.alloc(0);
        end = index;
      }
      if (rows.length >= limit) break;
      if (carry !== null) {
        carry = Buffer.concat([chunk.subarray(0, end), carry]);
        if (carry.length > MAX_LINE_BYTES) carry = null;
      }
    }
    if (position === 0 && rows.length < limit) take(Buffer.alloc(0));
    return rows.reverse();
  } finally {
    closeSync(fd);
  }
}
