/**
 * Where the hub is, for a machine without the database: AGENT_BUS_URL and
 * AGENT_BUS_TOKEN, else what `agent-bus login` saved in the bus folder
 * (hub.json, 0600). With neither, the bus is local.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { busPaths } from './paths.js';
import { setting, type Env } from '../model/settings.js';

export interface HubAccess {
  /** The hub's base URL, without a trailing slash. */
  url: string;
  token: string;
  /** Where it was set: the environment, or the login file. */
  from: 'env' | 'login';
  /** The name this machine's agent was given (AGENT_BUS_NAME), said with each request: a session of the token's agent is held under it. */
  name?: string;
}

export const LOGIN_FILE = 'hub.json';

export function loginPath(env: Env): string {
  return join(busPaths(env).folder, LOGIN_FILE);
}

export function hubAccess(env: Env): HubAccess | null {
  const url = setting(env, 'AGENT_BUS_URL');
  const token = setting(env, 'AGENT_BUS_TOKEN');
  const name = setting(env, 'AGENT_BUS_NAME').trim();
  const named = name === '' ? {} : { name };
  if (url !== '') return { url: url.replace(/\/+$/, ''), token, from: 'env', ...named };
  let saved: unknown;
  try {
    saved = JSON.parse(readFileSync(loginPath(env), 'utf8'));
  } catch {
    return null;
  }
  const record = saved as { url?: unknown; token?: unknown };
  if (typeof record.url !== 'string' || record.url.trim() === '') return null;
  return { url: record.url.trim().replace(/\/+$/, ''), token: token !== '' ? token : typeof record.token === 'string' ? record.token : '', from: 'login', ...named };
}
