/**
 * The brain adapter's settings: the process environment first, then a `.env`
 * file in the bus folder (for settings a user keeps in one place for every
 * client). Read once per process.
 */
import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { busDotEnv } from '../adapters/dot-env.js';
import { busPaths } from '../adapters/paths.js';
import { intSetting, type Env } from '../core/settings.js';

export type BrainSourceKind = 'http' | 'file';

export interface BrainSettings {
  enabled: boolean;
  writerEnabled: boolean;
  /** Where the feed comes from: the HTTP feed when BRAIN_URL is set, else the folder. */
  source: { kind: 'http'; url: string; token: string | null; timeoutMs: number } | { kind: 'file'; path: string };
  /** BRAIN_SOURCE_TYPE as given (only `file` is known; it matters only without BRAIN_URL). */
  sourceType: string;
  channel: string;
  hotArcsTopN: number;
  payloadMaxChars: number;
  refreshToolCalls: number;
  /** Why `enabled` is what it is, for brain status. */
  enabledBecause: string;
}

export const DEFAULT_BRAIN_CHANNEL = 'brain';
export const DEFAULT_HOT_ARCS_TOP_N = 10;
export const DEFAULT_PAYLOAD_MAX_CHARS = 1536;
export const DEFAULT_REFRESH_TOOL_CALLS = 20;
export const DEFAULT_HTTP_TIMEOUT_SECONDS = 3;

/** The process environment over the bus folder's `.env`. */
export function brainEnv(env: Env): Env {
  return { ...busDotEnv(env), ...env };
}

function flag(raw: string | undefined): boolean | null {
  const value = (raw ?? '').trim().toLowerCase();
  if (value === '') return null;
  return ['1', 'true', 'yes', 'on'].includes(value);
}

function expandHome(path: string, env: Env): string {
  const home = env.HOME ?? '';
  if (path === '~') return home;
  return path.startsWith('~/') ? join(home, path.slice(2)) : path;
}

function folderHasContent(path: string): boolean {
  try {
    return readdirSync(path).some((name) => name.endsWith('.md'));
  } catch {
    return false;
  }
}

export function brainSettings(raw: Env): BrainSettings {
  const env = brainEnv(raw);
  const url = (env.BRAIN_URL ?? '').trim().replace(/\/+$/, '');
  const timeoutSeconds = Number((env.BRAIN_HTTP_TIMEOUT ?? '').trim() || DEFAULT_HTTP_TIMEOUT_SECONDS);
  const timeoutMs = Number.isFinite(timeoutSeconds) && timeoutSeconds > 0 ? timeoutSeconds * 1000 : DEFAULT_HTTP_TIMEOUT_SECONDS * 1000;
  const folder = resolve(expandHome((env.BRAIN_SOURCE_PATH ?? '').trim() || join(busPaths(env).folder, 'brain-feed'), env));
  const source: BrainSettings['source'] =
    url !== '' ? { kind: 'http', url, token: (env.BRAIN_HTTP_TOKEN ?? '').trim() || (env.KB_ROUTER_TOKEN ?? '').trim() || null, timeoutMs } : { kind: 'file', path: folder };
  // On by default when there is something to read: a URL, or a feed folder with markdown in it.
  const sourceType = (env.BRAIN_SOURCE_TYPE ?? '').trim() || 'file';
  const hasSource = url !== '' || (sourceType === 'file' && folderHasContent(folder));
  const explicit = flag(env.BRAIN_ENABLED);
  const writer = flag(env.BRAIN_WRITER_ENABLED);
  return {
    enabled: explicit ?? hasSource,
    writerEnabled: writer ?? hasSource,
    source,
    sourceType,
    channel: (env.BRAIN_CHANNEL ?? '').trim() || DEFAULT_BRAIN_CHANNEL,
    hotArcsTopN: intSetting(env, 'BRAIN_HOT_ARCS_TOP_N', DEFAULT_HOT_ARCS_TOP_N, 0),
    payloadMaxChars: intSetting(env, 'BRAIN_PAYLOAD_MAX_BYTES', DEFAULT_PAYLOAD_MAX_CHARS, 0),
    refreshToolCalls: intSetting(env, 'BRAIN_REFRESH_TOOL_CALLS', DEFAULT_REFRESH_TOOL_CALLS, 1),
    enabledBecause:
      explicit !== null ? `BRAIN_ENABLED=${env.BRAIN_ENABLED}` : url !== '' ? 'BRAIN_URL is set' : hasSource ? `${folder} has markdown files` : 'no BRAIN_URL and no feed folder with content',
  };
}
