/**
 * Brain markers: what an agent writes back to the brain from its own output,
 * as `<!-- @lesson key=value -->…<!-- @/lesson -->` (types lesson, milestone,
 * signal, decision). Parsing only; sending is in writer.ts.
 */
import { readFileSync } from 'node:fs';

export const MARKER_TYPES = ['lesson', 'milestone', 'signal', 'decision'] as const;
export type MarkerType = (typeof MARKER_TYPES)[number];

export interface Marker {
  type: MarkerType;
  content: string;
  attrs: Record<string, string>;
}

export const MAX_MARKER_CHARS = 4096;

const MARKER = /<!--\s*@(lesson|milestone|signal|decision)\b([^>]*?)-->([\s\S]*?)<!--\s*@\/\1\s*-->/g;
const ATTR = /([A-Za-z_][\w.-]*)=(?:"([^"]*)"|'([^']*)'|(\S+))/g;

export function parseMarkers(text: string): Marker[] {
  const markers: Marker[] = [];
  for (const match of text.matchAll(MARKER)) {
    const content = (match[3] ?? '').trim();
    if (content === '') continue;
    const attrs: Record<string, string> = {};
    for (const attr of (match[2] ?? '').matchAll(ATTR)) {
      const key = attr[1] as string;
      // The writer stamps its own time: a model-written one is dropped.
      if (key !== 'ts') attrs[key] = attr[2] ?? attr[3] ?? attr[4] ?? '';
    }
    markers.push({ type: match[1] as MarkerType, content: Array.from(content).slice(0, MAX_MARKER_CHARS).join(''), attrs });
  }
  return markers;
}

/** The assistant's text in a Claude Code or Codex transcript (JSON lines), oldest first. */
export function transcriptText(path: string): string {
  let raw: string;
  try {
    raw = readFileSync(path, 'utf8');
  } catch {
    return '';
  }
  const texts: string[] = [];
  for (const line of raw.split('\n')) {
    if (line.trim() === '') continue;
    let row: unknown;
    try {
      row = JSON.parse(line);
    } catch {
      continue;
    }
    collectAssistantText(row, texts);
  }
  return texts.join('\n');
}

function collectAssistantText(row: unknown, into: string[]): void {
  if (row === null || typeof row !== 'object') return;
  const record = row as Record<string, unknown>;
  const message = (record.message ?? record.payload ?? record) as Record<string, unknown>;
  const role = message.role ?? record.type;
  if (role !== 'assistant') return;
  const content = message.content;
  if (typeof content === 'string') into.push(content);
  else if (Array.isArray(content)) {
    for (const part of content) {
      if (part && typeof part === 'object' && typeof (part as { text?: unknown }).text === 'string') into.push((part as { text: string }).text);
    }
  }
}
