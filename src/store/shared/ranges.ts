import type { IdLookup } from '../../model/short-id.js';

/**
 * Prefixes as ranges of keys, so an index answers them whatever the prefix holds (a LIKE would need
 * its wildcards escaped, and is not always answered from an index).
 */

/** The least text after every text that begins with `prefix`. */
export function prefixEnd(prefix: string): string {
  return `${prefix}\u{10FFFF}`;
}

/** The names that begin `repo/`: from `repo/` up to `repo0` ('0' follows '/'). */
export function namesUnder(repo: string): { from: string; to: string } {
  return { from: `${repo}/`, to: `${repo}0` };
}

/**
 * Where a time-ordered id's short form begins in its text (1-based, as SQL's substr counts): after
 * the four dashes of `xxxxxxxx-xxxx-7xxx-xxxx-`, its last twelve hex digits. Tasks index
 * `substr(task_id, ID_TAIL_FROM)`, so a start of a task's short id is a range; a message's is found by
 * a scan of its key's index (an index of the random half of every message id would cost each send a
 * random page of it), which a lookup by id, never a hot path, can afford.
 */
export const ID_TAIL_FROM = 25;

/** Distinct values, in order, at most `limit` of them: the union of what each range of a lookup found. */
export function firstDistinct(values: Iterable<string>, limit: number): string[] {
  return [...new Set(values)].sort().slice(0, Math.max(0, limit));
}

/** A range of one indexed expression's values: `expression >= from AND expression < to`. */
export interface KeyRange {
  expression: string;
  from: string;
  to: string;
}

/**
 * The ranges an id lookup names in `column`: a range of the column for each start of a whole id,
 * and, where `withTail` (message and task ids, time-ordered), a range of its short form's index.
 */
export function idRanges(lookup: IdLookup, column: string, withTail: boolean): KeyRange[] {
  const ranges = lookup.prefixes.map((prefix) => ({ expression: column, from: prefix, to: prefixEnd(prefix) }));
  if (withTail && lookup.tail !== null) ranges.push({ expression: `substr(${column}, ${ID_TAIL_FROM})`, from: lookup.tail, to: prefixEnd(lookup.tail) });
  return ranges;
}
