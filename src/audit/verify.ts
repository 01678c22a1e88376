/**
 * Checking the audit log's hash chain (see chain.ts), across the rotated files
 * oldest first. Every line is read once, in chunks, so a log of any size is
 * checked in memory that does not grow with it. Each problem names its file and
 * line and says what is wrong; after one, the check takes up the chain again
 * from what it can trust, so one edit reports once, not as every line after it.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { GENESIS_PREVIOUS, chainValue, splitChained, type ChainHead } from './chain.js';
import { logFiles } from './files.js';
import type { AuditRow } from './record.js';

export type ChainProblemKind = 'unreadable' | 'edited' | 'inserted' | 'missing' | 'reordered' | 'restarted' | 'start-missing';

export interface ChainProblem {
  file: string;
  line: number;
  kind: ChainProblemKind;
  message: string;
}

export interface ChainReport {
  files: Array<{ path: string; lines: number }>;
  /** Rows read, of every kind. */
  rows: number;
  /** Rows before the chain began (written by a version of agent-bus without it): read, not checked. */
  legacyRows: number;
  /** How the chain begins in the oldest file: a genesis, or a `continue` row (the files before it are gone). */
  startsWith: 'genesis' | 'continue' | null;
  firstSeq: number | null;
  head: ChainHead | null;
  problems: ChainProblem[];
  /** Lines cut short by a write its process did not live to finish; the chain goes on past each. */
  torn: RowPlace[];
}

/** Where a row was read. */
export interface RowPlace {
  file: string;
  line: number;
}

interface Entry extends RowPlace {
  text: string;
  /** The parsed row, when the line is a JSON object. */
  row: AuditRow | null;
  chained: { content: string; seq: number; chain: string } | null;
}

const CHUNK = 1024 * 1024;

/** Every line of a file with its number, read in chunks. */
function* linesOf(file: string): Generator<{ text: string; line: number }> {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  try {
    const chunk = Buffer.alloc(CHUNK);
    let carry = Buffer.alloc(0);
    let line = 0;
    let position = 0;
    for (;;) {
      const bytes = readSync(fd, chunk, 0, CHUNK, position);
      if (bytes <= 0) break;
      position += bytes;
      let data = carry.length > 0 ? Buffer.concat([carry, chunk.subarray(0, bytes)]) : chunk.subarray(0, bytes);
      let newline = data.indexOf(0x0a);
      while (newline >= 0) {
        line += 1;
        yield { text: data.subarray(0, newline).toString('utf8'), line };
        data = data.subarray(newline + 1);
        newline = data.indexOf(0x0a);
      }
      carry = Buffer.from(data);
    }
    if (carry.length > 0) yield { text: carry.toString('utf8'), line: line + 1 };
  } finally {
    closeSync(fd);
  }
}

function parseObject(text: string): AuditRow | null {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as AuditRow) : null;
  } catch {
    return null;
  }
}

function* entriesOf(files: string[], counts: Map<string, number>): Generator<Entry> {
  for (const file of files) {
    let lines = 0;
    for (const { text, line } of linesOf(file)) {
      lines = line;
      const chained = splitChained(text);
      const row = parseObject(chained?.content ?? text);
      yield { file, line, text, row, chained: row === null ? null : chained };
    }
    counts.set(file, lines);
  }
}

/**
 * Check the chain of the log at `path` and its rotated files. `onRow` sees every row that parses
 * (legacy, chained, or out of place), with where it was read: the store check reads the same pass.
 */
export function verifyChain(path: string, onRow: (row: AuditRow, place: RowPlace) => void = () => undefined): ChainReport {
  const files = logFiles(path);
  const counts = new Map<string, number>();
  const problems: ChainProblem[] = [];
  const torn: RowPlace[] = [];
  let rows = 0;
  let legacyRows = 0;
  let startsWith: ChainReport['startsWith'] = null;
  let firstSeq: number | null = null;
  /** What the next row chains from; a null chain: the row before was unreadable, its value unknown. */
  let head: { seq: number; chain: string | null } | null = null;

  const problem = (entry: Entry, kind: ChainProblemKind, message: string): void => {
    problems.push({ file: entry.file, line: entry.line, kind, message });
  };
  const linksFrom = (previous: { seq: number; chain: string | null }, entry: Entry | undefined): boolean =>
    entry?.chained != null && entry.chained.seq === previous.seq + 1 && (previous.chain === null || entry.chained.chain === chainValue(previous.chain, entry.chained.content));

  const iterator = entriesOf(files, counts);
  let next = iterator.next();
  let held: Entry | null = null;
  const take = (): Entry | undefined => {
    if (held !== null) {
      const entry = held;
      held = null;
      return entry;
    }
    if (next.done) return undefined;
    const entry = next.value;
    next = iterator.next();
    return entry;
  };
  const peek = (): Entry | undefined => held ?? (next.done ? undefined : next.value);

  for (let entry = take(); entry !== undefined; entry = take()) {
    if (entry.row !== null) {
      rows += 1;
      onRow(entry.row, { file: entry.file, line: entry.line });
    }
    const chained = entry.chained;
    if (chained === null) {
      if (head === null) {
        if (entry.row !== null) legacyRows += 1;
        else if (entry.text.trim() !== '') problem(entry, 'unreadable', 'not a JSON row: changed by hand, or cut short by a failed write');
        continue;
      }
      const after = peek();
      if (entry.row === null && entry.text.startsWith('{"ts":"') && (after === undefined || linksFrom(head, after))) {
        // The start of a row whose write was cut short (its process killed mid-write), the chain
        // going on from the row before it: a crash's trace, not a change. Its rows are gone from
        // the log; the store check finds any send among them.
        torn.push({ file: entry.file, line: entry.line });
        continue;
      }
      if (linksFrom(head, after)) {
        problem(entry, 'inserted', entry.row === null ? 'a line that is not a row was put into the chain here' : 'a row without a chain value was put into the chain here');
      } else {
        problem(entry, 'edited', entry.row === null ? 'not a JSON row: changed after it was written, or cut short by a failed write' : 'its chain value is gone: changed after it was written');
        head = { seq: head.seq + 1, chain: null };
      }
      continue;
    }
    const row = entry.row as AuditRow;
    const event = row.op === 'audit' ? row.event : undefined;
    if (event === 'genesis') {
      const intact = chained.seq === 0 && chained.chain === chainValue(GENESIS_PREVIOUS, chained.content);
      if (head !== null) problem(entry, 'restarted', `a new chain begins here: the ${head.seq + 1} row(s) before it do not lead to it`);
      else if (!intact) problem(entry, 'edited', "the log's first row was changed after it was written");
      if (head === null) {
        startsWith = 'genesis';
        firstSeq = chained.seq;
      }
      head = { seq: chained.seq, chain: chained.chain };
      continue;
    }
    if (head === null) {
      const previous = typeof row.previous_chain === 'string' && typeof row.previous_seq === 'number' ? { seq: row.previous_seq, chain: row.previous_chain } : null;
      if (event === 'continue' && previous !== null && linksFrom(previous, entry)) {
        startsWith = 'continue';
      } else {
        problem(entry, 'start-missing', "the log's beginning is gone: this row chains from one that is not in any file of the log");
      }
      firstSeq = chained.seq;
      head = { seq: chained.seq, chain: chained.chain };
      continue;
    }
    if (event === 'continue' && (row.previous_seq !== head.seq || (head.chain !== null && row.previous_chain !== head.chain))) {
      problem(entry, 'missing', `this file carries on from seq ${String(row.previous_seq)}, but the file before it ends at seq ${head.seq}`);
      head = { seq: chained.seq, chain: chained.chain };
      continue;
    }
    const expected: number = head.seq + 1;
    if (linksFrom(head, entry)) {
      head = { seq: chained.seq, chain: chained.chain };
      continue;
    }
    const after = peek();
    if (after?.chained != null && after.chained.seq === expected + 1 && after.chained.chain === chainValue(chained.chain, after.chained.content)) {
      // The next row carries on from this one as the row of seq `expected`: this one was changed.
      problem(entry, 'edited', 'changed after it was written: its content does not match its chain value');
      head = { seq: expected, chain: chained.chain };
      continue;
    }
    if (after?.chained != null && linksFrom(head, after)) {
      // The next row carries on from the row before this one: this one was moved or put in here.
      if (chained.seq === expected + 1 && chained.chain === chainValue(after.chained.chain, chained.content)) {
        problem(entry, 'reordered', `out of order: seq ${chained.seq} comes before seq ${expected} (line ${after.line})`);
        // The row that belongs here is read first, then this one after it.
        next = iterator.next();
        held = entry;
        if (after.row !== null) {
          rows += 1;
          onRow(after.row, { file: after.file, line: after.line });
        }
        head = { seq: after.chained.seq, chain: after.chained.chain };
      } else {
        problem(entry, 'inserted', chained.seq === head.seq && chained.chain === head.chain ? 'a copy of the row before it was put in here' : 'this row is not part of the chain: it was put in here');
      }
      continue;
    }
    if (chained.seq > expected) {
      problem(entry, 'missing', expected === chained.seq - 1 ? `the row of seq ${expected} before it is gone` : `the rows of seq ${expected} to ${chained.seq - 1} before it are gone`);
      head = { seq: chained.seq, chain: chained.chain };
    } else if (chained.seq === expected) {
      problem(entry, 'edited', 'changed after it was written: its content does not match its chain value');
      head = { seq: chained.seq, chain: chained.chain };
    } else {
      problem(entry, 'reordered', `out of place: seq ${chained.seq} after seq ${head.seq}`);
    }
  }
  return {
    files: files.map((file) => ({ path: file, lines: counts.get(file) ?? 0 })),
    rows,
    legacyRows,
    startsWith,
    firstSeq,
    head: head === null || head.chain === null ? null : { seq: head.seq, chain: head.chain },
    problems,
    torn,
  };
}
