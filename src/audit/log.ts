/**
 * The append-only audit log. Rows go out in whole-line writes on an O_APPEND
 * descriptor, each operation's rows within one write, so concurrent writers
 * never interleave within a line and a reader never sees half a row. Reading
 * the tail seeks from the end.
 */
import { closeSync, constants, fstatSync, mkdirSync, openSync, readSync, statSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { serialiseRows, type AuditRow } from './record.js';

const TAIL_CHUNK = 64 * 1024;
/** No audit row comes near this; anything longer is not a row. */
const MAX_LINE_BYTES = 1024 * 1024;

export type AuditErrorHandler = (message: string) => void;

const reportToStderr: AuditErrorHandler = (message) => {
  process.stderr.write(`agent-bus: ${message}\n`);
};

export class AuditLog {
  private fd: number | null = null;
  private inode = -1;
  private pending: AuditRow[] = [];
  private flushQueued = false;

  /**
   * A log that cannot be written is reported, never thrown: the operation has
   * committed by then, and the database is the record of truth.
   */
  constructor(
    readonly path: string,
    private readonly onError: AuditErrorHandler = reportToStderr,
  ) {}

  /**
   * Queue rows for the log. Rows appended in the same tick (the sends of one
   * group commit, say) go out together in one write, made before any caller
   * awaiting those operations resumes: a caller that sees a result can read its row.
   */
  /**
   * Fields added to every row appended while it returns some: the hub names itself and the
   * token a request came with (its id, never the token), for whatever that request does.
   */
  stamp: (() => Record<string, string> | undefined) | null = null;
  /** Told of every row as it is appended (the hub counts what it did for its metrics). */
  observe: ((rows: readonly AuditRow[], stamp: Record<string, string> | undefined) => void) | null = null;

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
    const data = Buffer.from(serialiseRows(this.pending), 'utf8');
    const count = this.pending.length;
    this.pending = [];
    try {
      const fd = this.descriptor();
      let offset = 0;
      while (offset < data.length) offset += writeSync(fd, data, offset, data.length - offset);
    } catch (error) {
      this.onError(`could not write ${count} row(s) to the audit log at ${this.path}: ${(error as Error).message}`);
    }
  }

  close(): void {
    this.flush();
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }

  /** The open log; reopened when the file was rotated or removed since (long-running servers). */
  private descriptor(): number {
    if (this.fd !== null) {
      let current = -2;
      try {
        current = statSync(this.path).ino;
      } catch {
        current = -2;
      }
      if (current === this.inode) return this.fd;
      closeSync(this.fd);
      this.fd = null;
    }
    mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
    this.fd = openSync(this.path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT, 0o600);
    this.inode = fstatSync(this.fd).ino;
    return this.fd;
  }
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
 * The last `limit` parsed rows of the log, oldest first, reading backwards
 * from the end in chunks: the cost follows `limit`, not the size of the log.
 * A "line" longer than any audit row could be is skipped rather than buffered.
 */
export function tailAudit(path: string, limit: number, endOffset?: number): AuditRow[] {
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
      if (row) rows.push(row);
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
