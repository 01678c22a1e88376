/**
 * The append-only audit log. Each operation's rows go out in one write on an
 * O_APPEND descriptor, so concurrent writers never interleave within a line
 * and a reader never sees half a row. Reading the tail seeks from the end.
 */
import { closeSync, constants, fstatSync, mkdirSync, openSync, readSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { serialiseRows, type AuditRow } from './record.js';

const TAIL_CHUNK = 64 * 1024;

export class AuditLog {
  private fd: number | null = null;

  constructor(readonly path: string) {}

  append(rows: readonly AuditRow[]): void {
    if (rows.length === 0) return;
    const data = Buffer.from(serialiseRows(rows), 'utf8');
    const fd = this.descriptor();
    let offset = 0;
    while (offset < data.length) offset += writeSync(fd, data, offset, data.length - offset);
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }

  private descriptor(): number {
    if (this.fd === null) {
      mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
      this.fd = openSync(this.path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT, 0o600);
    }
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
    const size = Math.min(fstatSync(fd).size, endOffset ?? Number.POSITIVE_INFINITY);
    const rows: AuditRow[] = [];
    let position = size;
    let carry = Buffer.alloc(0);
    while (position > 0 && rows.length < limit) {
      const length = Math.min(TAIL_CHUNK, position);
      position -= length;
      const chunk = Buffer.alloc(length);
      readSync(fd, chunk, 0, length, position);
      let buffer = Buffer.concat([chunk, carry]);
      // Everything after the first newline in the buffer is made of whole lines.
      let end = buffer.length;
      for (let index = buffer.length - 1; index >= 0 && rows.length < limit; index--) {
        if (buffer[index] !== 0x0a) continue;
        const row = parseAuditLine(buffer.subarray(index + 1, end).toString('utf8'));
        if (row) rows.push(row);
        end = index;
      }
      buffer = buffer.subarray(0, end);
      carry = buffer;
    }
    if (position === 0 && rows.length < limit && carry.length > 0) {
      const row = parseAuditLine(carry.toString('utf8'));
      if (row) rows.push(row);
    }
    return rows.reverse();
  } finally {
    closeSync(fd);
  }
}
