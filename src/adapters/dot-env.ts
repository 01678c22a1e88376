/**
 * The bus folder's `.env`: settings a user keeps in one place for every
 * client (the brain's, and the user's default subscriptions). The process
 * environment always wins over it. A missing or unreadable file adds nothing.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseEnv } from 'node:util';
import { busPaths } from './paths.js';
import { setting, type Env } from '../model/settings.js';

export function dotEnvPath(env: Env): string {
  return join(busPaths(env).folder, '.env');
}

/** The `.env` file's settings alone, as the file says now (a long-running server sees edits). */
export function busDotEnv(env: Env): Env {
  try {
    return parseEnv(readFileSync(dotEnvPath(env), 'utf8'));
  } catch {
    return {};
  }
}

/** AGENT_BUS_RETENTION_DAYS from the environment, else from the bus folder's `.env`; null: off. */
export function retentionDaysOf(env: Env): number | null {
  return setting(env, 'AGENT_BUS_RETENTION_DAYS') ?? setting(busDotEnv(env), 'AGENT_BUS_RETENTION_DAYS');
}

