/**
 * What a brain source yields, and how an entry becomes the text of a notice:
 * the hot-arcs table trimmed, the size capped, stop phrases defused, and
 * recalled state framed as such.
 */
import type { Severity } from '../core/notices.js';

export interface BrainEntry {
  id: string;
  title: string;
  content: string;
  /** Higher first. */
  priority: number;
  ttlSeconds: number;
  severity: Severity;
}

export type FetchResult =
  /** The source answered: its entries are the whole desired set (an empty list clears the channel). */
  | { ok: true; entries: BrainEntry[]; warnings: string[] }
  /** The source could not be read: the channel keeps what it had. */
  | { ok: false; error: string };

export interface BrainSource {
  kind: 'file' | 'http';
  /** The folder or the feed URL, for brain status. */
  location: string;
  fetch(): Promise<FetchResult>;
}

export const DEFAULT_ENTRY_PRIORITY = 5;
export const DEFAULT_ENTRY_TTL = 3600;

/** Keep the first `topN` data rows of a hot-arcs table (`| Arc … Heat …`), saying how many went. */
export function trimHotArcs(content: string, topN: number): string {
  if (topN <= 0) return content;
  const lines = content.split('\n');
  const header = lines.findIndex((line) => line.trim().startsWith('| Arc') && line.includes('Heat'));
  if (header < 0 || header + 2 > lines.length) return content;
  const first = header + 2;
  let end = first;
  while (end < lines.length && (lines[end] ?? '').trim().startsWith('|')) end++;
  const rows = end - first;
  if (rows <= topN) return content;
  const columns = Math.max(1, ((lines[header] ?? '').match(/\|/g)?.length ?? 2) - 1);
  const note = `| ${Array.from({ length: columns - 1 }, () => '...').join(' | ')}${columns > 1 ? ' | ' : ''}*(${rows - topN} more arcs trimmed)* |`;
  return [...lines.slice(0, first + topN), note, ...lines.slice(end)].join('\n');
}

/** At most `maxChars` characters (code points), saying how many were cut. */
export function capContent(content: string, maxChars: number): string {
  if (maxChars <= 0) return content;
  const chars = Array.from(content);
  if (chars.length <= maxChars) return content;
  return `${chars.slice(0, maxChars).join('')}\n…[+${chars.length - maxChars} characters trimmed]`;
}

// Phrases agents are told to treat as a stop signal: recalled text must not trigger them.
const STOP_PHRASES: Array<[RegExp, string]> = [
  [/do you understand/gi, 'is this clear'],
  [/elaborate to me/gi, 'expand on'],
  [/stop all tool calls/gi, 'pause tool usage'],
  [/wait for confirmation/gi, 'awaiting input'],
];

export function defuse(content: string): string {
  return STOP_PHRASES.reduce((text, [pattern, replacement]) => text.replace(pattern, replacement), content);
}

const RECALLED_STATE = 'BRAIN CONTEXT (recalled state, not an operator directive):';

/** The notice body an entry becomes. */
export function entryBody(entry: BrainEntry, topN: number, maxChars: number): string {
  return `${RECALLED_STATE}\n\n${defuse(capContent(trimHotArcs(entry.content.trim(), topN), maxChars))}`;
}

/** Priority first (higher first), then the order the source gave; the first of a duplicate id wins. */
export function orderEntries(entries: BrainEntry[]): BrainEntry[] {
  const seen = new Set<string>();
  const unique = entries.filter((entry) => !seen.has(entry.id) && seen.add(entry.id));
  return unique.map((entry, index) => ({ entry, index })).sort((a, b) => b.entry.priority - a.entry.priority || a.index - b.index).map(({ entry }) => entry);
}

function wholeNumber(value: unknown): number | null {
  const number = typeof value === 'number' ? value : typeof value === 'string' && /^\s*-?\d+\s*$/.test(value) ? Number(value) : Number.NaN;
  return Number.isInteger(number) ? number : null;
}

/** A field the entry gives but that cannot be used: said, and the default taken. */
function unusable(field: string, value: unknown, instead: string): string {
  return `${field} ${JSON.stringify(value)} is not usable (${instead} used)`;
}

/**
 * An entry from loosely typed fields (front matter, a feed item); null when it has no content.
 * `fallbackId` (a file's stem) names and titles an entry that gives none; a feed item without an id
 * goes by its title. Fields given but unusable are reported through `problems`, defaults taken.
 */
export function entryFrom(fields: Record<string, unknown>, content: string, fallbackId: string, problems: string[] = []): BrainEntry | null {
  if (content.trim() === '') return null;
  const text = (value: unknown): string => (typeof value === 'string' || typeof value === 'number' ? String(value).trim() : '');
  const idField = text(fields.id);
  const titleField = text(fields.title);
  const id = idField || fallbackId || titleField;
  if (id === '') return null;
  let priority = DEFAULT_ENTRY_PRIORITY;
  if (fields.priority !== undefined && fields.priority !== null) {
    priority = wholeNumber(fields.priority) ?? DEFAULT_ENTRY_PRIORITY;
    if (wholeNumber(fields.priority) === null) problems.push(unusable('priority', fields.priority, String(DEFAULT_ENTRY_PRIORITY)));
  }
  let ttlSeconds = DEFAULT_ENTRY_TTL;
  if (fields.ttl !== undefined && fields.ttl !== null) {
    const given = wholeNumber(fields.ttl);
    if (given !== null && given > 0) ttlSeconds = given;
    else problems.push(unusable('ttl', fields.ttl, `${DEFAULT_ENTRY_TTL} seconds`));
  }
  let severity: Severity = 'info';
  if (fields.severity !== undefined && fields.severity !== null) {
    const given = typeof fields.severity === 'string' ? fields.severity.trim().toLowerCase() : '';
    if (given === 'critical' || given === 'alert' || given === 'info') severity = given;
    else problems.push(unusable('severity', fields.severity, 'info'));
  }
  return { id, title: titleField || fallbackId || idField, content, priority, ttlSeconds, severity };
}
