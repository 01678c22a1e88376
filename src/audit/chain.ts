/**
 * The audit log's hash chain. Every row ends with two keys: `seq`, its place in
 * the chain (0 for the log's first row), and `chain`, the SHA-256 of the chain
 * value before it, a newline, and the row's own text up to `chain` (the JSON of
 * the row with `seq`, as written). Editing, removing, inserting or reordering a
 * line breaks the chain there, and `audit verify` names the line.
 *
 * The chain starts at a genesis row (op `audit`, event `genesis`) whose
 * previous value is GENESIS_PREVIOUS; a file begun by rotation starts with a
 * `continue` row that records the chain value it carries on from, so the
 * newest files still verify after older ones are deleted.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { randomBytes, sha256Hex } from '../model/ids.js';
import type { AuditRow } from './record.js';

/** The value the genesis row chains from. */
export const GENESIS_PREVIOUS = '0'.repeat(64);

/** The chain's state after a row: what the next row chains from. */
export interface ChainHead {
  seq: number;
  chain: string;
}

/** A chained line taken apart: the text its chain covers, and the two chain keys. */
export interface ChainedLine {
  content: string;
  seq: number;
  chain: string;
}

const CHAIN_SUFFIX = /,"chain":"([0-9a-f]{64})"\}$/;
const SEQ_SUFFIX = /,"seq":(0|[1-9]\d{0,15})$/;

export function chainValue(previous: string, content: string): string {
  return sha256Hex(`${previous}\n${content}`);
}

/** The line of `row` as the row after `head` (null: the first row of a chain), and the head it leaves. */
export function chainedLine(row: AuditRow, head: ChainHead | null): { line: string; head: ChainHead } {
  const seq = head === null ? 0 : head.seq + 1;
  // Rows come from the bus's own code and never carry the chain's keys: `seq` goes on the end.
  const content = `${JSON.stringify(row).slice(0, -1)},"seq":${seq}}`;
  const chain = chainValue(head?.chain ?? GENESIS_PREVIOUS, content);
  return { line: `${content.slice(0, -1)},"chain":"${chain}"}`, head: { seq, chain } };
}

/**
 * A line's chain keys and the text they cover, or null when the line does not end the way a
 * chained row ends (a row written before the chain began, or a line changed by hand).
 */
export function splitChained(line: string): ChainedLine | null {
  const chainMatch = CHAIN_SUFFIX.exec(line);
  if (chainMatch === null) return null;
  const content = `${line.slice(0, chainMatch.index)}}`;
  const seqMatch = SEQ_SUFFIX.exec(content.slice(0, -1));
  if (seqMatch === null) return null;
  return { content, seq: Number(seqMatch[1]), chain: chainMatch[1] as string };
}

/** A row of the log about itself: the message keys empty, then the event's own. */
function logRow(ts: string, preview: string, extra: Record<string, unknown>): AuditRow {
  return { ts, op: 'audit', actor: 'agent-bus', message_id: null, from: 'agent-bus', to: 'agent-bus', thread_id: null, body_preview: preview, body_sha256: null, ...extra };
}

/** The row that begins a new log: a random nonce makes its chain its own. */
export function genesisRow(ts: string): AuditRow {
  return logRow(ts, 'audit log begins', { event: 'genesis', nonce: randomBytes(16).toString('hex') });
}

/** The row that begins a file after rotation, carrying the chain on from the file before it. */
export function continueRow(ts: string, from: ChainHead, previousFile: string): AuditRow {
  return logRow(ts, `audit log continues from ${previousFile}`, { event: 'continue', previous_seq: from.seq, previous_chain: from.chain });
}

/** The log's own rows (genesis, continue): bookkeeping of the chain, not of the bus. */
export function isChainRow(row: AuditRow): boolean {
  return row.op === 'audit';
}

const TAIL_BYTES = 256 * 1024;

/** What the end of a log file says of the chain. */
export type FileEnd =
  | { kind: 'missing' }
  | { kind: 'empty'; size: number }
  | { kind: 'chained'; head: ChainHead; size: number; endsWithNewline: boolean }
  /** Rows, but none chained near the end: a log written before the chain began, or damaged. */
  | { kind: 'unchained'; size: number; endsWithNewline: boolean };

/**
 * The chain head at the end of the file open at `fd`: the last line near the end that ends as a
 * chained row does. A torn last line (a write cut short) is passed over.
 */
export function fileEnd(fd: number): FileEnd {
  const size = fstatSync(fd).size;
  if (size === 0) return { kind: 'empty', size };
  const length = Math.min(size, TAIL_BYTES);
  const buffer = Buffer.alloc(length);
  let read = 0;
  while (read < length) {
    const bytes = readSync(fd, buffer, read, length - read, size - length + read);
    if (bytes <= 0) break;
    read += bytes;
  }
  const endsWithNewline = buffer[read - 1] === 0x0a;
  const text = buffer.subarray(0, read).toString('utf8');
  const lines = text.split('\n');
  // The first piece may be the end of a line that began before the window.
  const first = length < size ? 1 : 0;
  for (let index = lines.length - 1; index >= first; index--) {
    const split = splitChained(lines[index] as string);
    if (split !== null) return { kind: 'chained', head: { seq: split.seq, chain: split.chain }, size, endsWithNewline };
  }
  return { kind: 'unchained', size, endsWithNewline };
}

/** The end of the log file at `path` (for a file not held open). */
export function fileEndAt(path: string): FileEnd {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'missing' };
    throw error;
  }
  try {
    return fileEnd(fd);
  } finally {
    closeSync(fd);
  }
}
