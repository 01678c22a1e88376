/**
 * The brain writer: markers from an agent's output go to `POST $BRAIN_URL/marker`,
 * each once per session (the store remembers what it took), with an
 * idempotency key. What cannot be sent now waits in an outbox folder and is
 * retried, oldest first, before anything new. Run in the background by the
 * Stop hook, so the turn never waits for it.
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Bus } from '../core/bus.js';
import { stampOf } from '../model/clock.js';
import { randomId, sha256Hex } from '../model/ids.js';
import { busPaths } from '../adapters/paths.js';
import type { Env } from '../model/settings.js';
import { httpRequest } from './http-source.js';
import { parseMarkers, transcriptText, type Marker } from './markers.js';
import type { BrainSettings } from './settings.js';

export interface OutboxItem {
  key: string;
  type: string;
  content: string;
  attrs: Record<string, string>;
  session_id: string;
  ts: string;
}

export interface WriterResult {
  markers: number;
  sent: number;
  queued: number;
  drained: number;
  skipped: number;
}

export function outboxFolder(env: Env): string {
  return join(busPaths(env).folder, 'brain-outbox');
}

export function markerKey(session: string, marker: Marker): string {
  return sha256Hex(`${session}|${marker.type}|${marker.content}`).slice(0, 32);
}

async function post(settings: BrainSettings, item: OutboxItem): Promise<boolean> {
  if (settings.source.kind !== 'http') return false;
  const headers: Record<string, string> = { 'content-type': 'application/json', 'x-idempotency-key': item.key };
  if (settings.source.token !== null) headers.authorization = `Bearer ${settings.source.token}`;
  try {
    const answer = await httpRequest(`${settings.source.url}/marker`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ type: item.type, content: item.content, attrs: { ...item.attrs, ts: item.ts } }),
      timeoutMs: settings.source.timeoutMs,
    });
    if (answer.status < 200 || answer.status >= 300) return false;
    try {
      return (JSON.parse(answer.body || '{}') as { ok?: unknown }).ok !== false;
    } catch {
      return true;
    }
  } catch {
    return false;
  }
}

function enqueue(folder: string, item: OutboxItem): void {
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  const name = `${item.ts.replace(/[-:]/g, '')}-${item.type}-${item.key.slice(0, 8)}.json`;
  const temporary = join(folder, `.${name}.${randomId()}.tmp`);
  writeFileSync(temporary, JSON.stringify(item), { mode: 0o600 });
  renameSync(temporary, join(folder, name));
}

function waiting(folder: string): number {
  try {
    return readdirSync(folder).filter((name) => name.endsWith('.json')).length;
  } catch {
    return 0;
  }
}

/** Send what waits in the outbox, oldest first; stop at the first that is refused (the brain is down). */
async function drain(folder: string, settings: BrainSettings): Promise<number> {
  let names: string[];
  try {
    names = readdirSync(folder).filter((name) => name.endsWith('.json')).sort();
  } catch {
    return 0;
  }
  let drained = 0;
  for (const name of names) {
    const path = join(folder, name);
    let item: OutboxItem;
    try {
      item = JSON.parse(readFileSync(path, 'utf8')) as OutboxItem;
    } catch {
      // Unreadable (or taken by a concurrent drain): set aside, never retried for ever.
      try {
        renameSync(path, `${path}.bad`);
      } catch {
        // Gone already.
      }
      continue;
    }
    if (!(await post(settings, item))) break;
    rmSync(path, { force: true });
    drained++;
  }
  return drained;
}

/** Take the markers of a Stop payload: each new one is sent, or queued when it cannot be. */
export async function writeMarkers(bus: Bus, settings: BrainSettings, env: Env, payload: Record<string, unknown>): Promise<WriterResult> {
  const session = typeof payload.session_id === 'string' && payload.session_id !== '' ? payload.session_id : 'unknown-session';
  const fromTranscript = typeof payload.transcript_path === 'string' ? transcriptText(payload.transcript_path) : '';
  const text = fromTranscript !== '' ? fromTranscript : typeof payload.last_assistant_message === 'string' ? payload.last_assistant_message : '';
  const markers = parseMarkers(text);
  const folder = outboxFolder(env);
  const result: WriterResult = { markers: markers.length, sent: 0, queued: 0, drained: 0, skipped: 0 };
  if (settings.source.kind === 'http') result.drained = await drain(folder, settings);
  const backlog = waiting(folder) > 0;
  for (const marker of markers) {
    const key = markerKey(session, marker);
    // Every marker of a session once: the store remembers the ones already taken.
    if (!(await bus.brain.recordMarker(key, session))) {
      result.skipped++;
      continue;
    }
    const item: OutboxItem = { key, type: marker.type, content: marker.content, attrs: { source: 'agent-bus', ...marker.attrs, session_id: session }, session_id: session, ts: stampOf(bus.clock) };
    // Behind a backlog, a new marker waits its turn: the brain gets them in the order they were written.
    if (!backlog && (await post(settings, item))) result.sent++;
    else {
      enqueue(folder, item);
      result.queued++;
    }
  }
  return result;
}
