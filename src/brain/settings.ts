/**
 * The brain adapter's settings: the process environment first, then a `.env`
 * file in the bus folder (for settings a user keeps in one place for every
 * client). Read once per process.
 */
import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { busDotEnv } from '../adapters/dot-env.js';
import { busPaths } from '../adapters/paths.js';
import { setting, type Env } from '../model/settings.js';

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

/** The process environment over the bus folder's `.env`. */
export function brainEnv(env: Env): Env {
  return { ...busDotEnv(env), ...env };
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
  const url = setting(env, 'BRAIN_URL').replace(/\/+$/, '');
  const timeoutMs = setting(env, 'BRAIN_HTTP_TIMEOUT') * 1000;
  const folder = resolve(expandHome(setting(env, 'BRAIN_SOURCE_PATH') || join(busPaths(env).folder, 'brain-feed'), env));
  const source: BrainSettings['source'] =
    url !== '' ? { kind: 'http', url, token: setting(env, 'BRAIN_HTTP_TOKEN') || setting(env, 'KB_ROUTER_TOKEN') || null, timeoutMs } : { kind: 'file', path: folder };
  // On by default when there is something to read: a URL, or a feed folder with markdown in it.
  const sourceType = setting(env, 'BRAIN_SOURCE_TYPE');
  const hasSource = url !== '' || (sourceType === 'file' && folderHasContent(folder));
  const explicit = setting(env, 'BRAIN_ENABLED');
  const writer = setting(env, 'BRAIN_WRITER_ENABLED');
  return {
    enabled: explicit ?? hasSource,
    writerEnabled: writer ?? hasSource,
    source,
    sourceType,
    channel: setting(env, 'BRAIN_CHANNEL'),
    hotArcsTopN: setting(env, 'BRAIN_HOT_ARCS_TOP_N'),
    payloadMaxChars: setting(env, 'BRAIN_PAYLOAD_MAX_BYTES'),
    refreshToolCalls: setting(env, 'BRAIN_REFRESH_TOOL_CALLS'),
    enabledBecause:
      explicit !== null ? `BRAIN_ENABLED=${env.BRAIN_ENABLED}` : url !== '' ? 'BRAIN_URL is set' : hasSource ? `${folder} has markdown files` : 'no BRAIN_URL and no feed folder with content',
  };
}
