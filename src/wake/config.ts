/**
 * wake.json, next to the database: agent, client address or repo → a shell
 * command to run when mail arrives for it, or `false`/null to turn waking off.
 * Reading never fails a send: a missing or malformed file wakes nobody.
 */
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { randomId } from '../model/ids.js';
import { busPaths } from '../adapters/paths.js';
import { clientAddressOf, repoOf } from '../core/names.js';
import type { Env } from '../model/settings.js';

export type WakeEntry = string | false;

export interface WakeConfig {
  path: string;
  /** False when there is no file. */
  exists: boolean;
  entries: Record<string, WakeEntry>;
  /** Why the file was not used, when it exists but cannot be read as a wake config. */
  problem: string | null;
}

export type WakeLookup =
  | { status: 'command'; command: string; key: string }
  | { status: 'disabled'; key: string }
  | { status: 'no-config' };

export function wakeConfigPath(env: Env): string {
  return join(busPaths(env).folder, 'wake.json');
}

/** An entry as written: a command string, `{ "command": … }`, or anything else meaning "off". */
function entryOf(value: unknown): WakeEntry {
  if (typeof value === 'string') return value.trim() === '' ? false : value;
  if (value !== null && typeof value === 'object' && typeof (value as { command?: unknown }).command === 'string') {
    const command = (value as { command: string }).command;
    return command.trim() === '' ? false : command;
  }
  return false;
}

/** "No file here" is remembered this long: a burst of sends asks once (a new file is seen within it). */
const ABSENCE_TTL_MS = 250;
const absentUntil = new Map<string, number>();

export function loadWakeConfig(env: Env): WakeConfig {
  const path = wakeConfigPath(env);
  const now = Date.now();
  if ((absentUntil.get(path) ?? 0) > now) return { path, exists: false, entries: {}, problem: null };
  // Every send asks: the common answer (no file) without building an exception.
  if (!existsSync(path)) {
    absentUntil.set(path, now + ABSENCE_TTL_MS);
    return { path, exists: false, entries: {}, problem: null };
  }
  absentUntil.delete(path);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
    return { path, exists: !missing, entries: {}, problem: missing ? null : `cannot read it: ${(error as Error).message}` };
  }
  if (text.trim() === '') return { path, exists: true, entries: {}, problem: null };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { path, exists: true, entries: {}, problem: `it is not valid JSON (${(error as Error).message})` };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return { path, exists: true, entries: {}, problem: 'its top level is not a JSON object' };
  const entries: Record<string, WakeEntry> = {};
  for (const [key, entry] of Object.entries(value as Record<string, unknown>)) entries[key] = entryOf(entry);
  return { path, exists: true, entries, problem: null };
}

/** The agent's own entry wins, then its client address, then its repo: the first key present decides. */
export function lookupWake(config: WakeConfig, agent: string): WakeLookup {
  const keys = [agent, clientAddressOf(agent), repoOf(agent)].filter((key, index, all): key is string => key !== null && all.indexOf(key) === index);
  for (const key of keys) {
    if (!(key in config.entries)) continue;
    const entry = config.entries[key];
    return entry === false || entry === undefined ? { status: 'disabled', key } : { status: 'command', command: entry, key };
  }
  return { status: 'no-config' };
}

/** Rewrite the file with `entries` (temp file, then rename; private to the user). */
export function saveWakeConfig(path: string, entries: Record<string, WakeEntry>): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${randomId()}.tmp`;
  try {
    writeFileSync(temporary, `${JSON.stringify(entries, null, 2)}\n`, { mode: 0o600 });
    renameSync(temporary, path);
  } finally {
    rmSync(temporary, { force: true });
  }
}
