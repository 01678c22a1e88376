/**
 * Which audit rows the dashboard's Activity shows for a filter: one rule for
 * the rows read from the log and for those pushed as they happen.
 */
export interface ActivityFilter {
  /** A name, a client address (its sessions too) or a repo (everyone in it). */
  agent?: string;
  op?: string;
  /** A thread id or the start of one (the short ids the views show). */
  thread?: string;
}

interface RowFields {
  op?: unknown;
  actor?: unknown;
  from?: unknown;
  to?: unknown;
  addressed_to?: unknown;
  thread_id?: unknown;
}

function names(agent: string, value: unknown): boolean {
  if (typeof value !== 'string' || value === '') return false;
  return value === agent || value.startsWith(`${agent}/`) || value.startsWith(`${agent}-`);
}

export function matchesActivity(row: RowFields, filter: ActivityFilter): boolean {
  const agent = filter.agent?.trim() ?? '';
  const op = filter.op?.trim() ?? '';
  const thread = filter.thread?.trim() ?? '';
  if (op !== '' && row.op !== op) return false;
  if (thread !== '' && !(typeof row.thread_id === 'string' && row.thread_id.startsWith(thread))) return false;
  if (agent !== '' && ![row.actor, row.from, row.to, row.addressed_to].some((value) => names(agent, value))) return false;
  return true;
}
