/**
 * The search filters and who sees what (QUERIES.md, "Searching mail"), written once for both engines.
 * The search index finds the candidates (each engine its own way, from the terms and the reader's
 * parties); these conditions, on messages `m`, are the rule itself.
 */
import type { SearchFilter } from '../../model/search.js';

/** How an engine writes a value into its SQL and tests a text's start. */
export interface SearchDialect {
  /** Bind a value: its placeholder. */
  bind(value: string): string;
  /** Whether `column` begins with the text bound at `prefix`. */
  startsWith(column: string, prefix: string): string;
}

/** The conditions a message must meet besides matching the terms, in the order the filter names them (`before` is the engine's). */
export function searchConditions(filter: SearchFilter, sql: SearchDialect): string[] {
  const where: string[] = [];
  if (filter.visibleTo !== null) {
    const me = sql.bind(filter.visibleTo.name);
    if (filter.visibleTo.repo === null) where.push(`(m.from_agent = ${me} OR m.to_agent = ${me})`);
    else {
      const repo = sql.bind(filter.visibleTo.repo);
      const under = sql.bind(`${filter.visibleTo.repo}/`);
      where.push(`(m.from_agent = ${me} OR m.to_agent = ${me} OR m.to_group = ${repo} OR m.from_agent = ${repo} OR m.to_agent = ${repo}
          OR ${sql.startsWith('m.from_agent', under)} OR ${sql.startsWith('m.to_agent', under)})`);
    }
  }
  if (filter.from !== null) {
    const from = sql.bind(filter.from);
    where.push(`(m.from_agent = ${from} OR ${sql.startsWith('m.from_agent', sql.bind(`${filter.from}/`))} OR ${sql.startsWith('m.from_agent', sql.bind(`${filter.from}-`))})`);
  }
  if (filter.to !== null) {
    const to = sql.bind(filter.to);
    where.push(`(m.to_agent = ${to} OR m.addressed_to = ${to} OR m.to_group = ${to})`);
  }
  if (filter.thread !== null) where.push(sql.startsWith('m.thread_id', sql.bind(filter.thread)));
  if (filter.since !== null) where.push(`m.sent_at >= ${sql.bind(filter.since)}`);
  return where;
}
