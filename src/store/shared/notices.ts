/** What both engines' notice queries share: the order of severities, and which query a moment asks. */
import { SEVERITIES } from '../../model/notices.js';
import type { DueNoticesQuery } from '../ports/notices.js';

/** A notice's severity as its rank (critical first), in SQL: notices are read in this order. */
export function severityRankSql(column: string): string {
  const ranked = SEVERITIES.slice(0, -1).map((severity, rank) => `WHEN '${severity}' THEN ${rank}`);
  return `CASE ${column} ${ranked.join(' ')} ELSE ${SEVERITIES.length - 1} END`;
}

/** The pre-tool query: critical notices only (and the ones named besides). */
export function isCriticalOnly(query: DueNoticesQuery): boolean {
  return query.severities.length === 1 && query.severities[0] === 'critical';
}
