/** Where the bus keeps its state: `~/.claude-agent-bus/` unless the environment says otherwise. */
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import type { Env } from './settings.js';

export const BUS_FOLDER_NAME = '.claude-agent-bus';

function expandHome(path: string, env: Env): string {
  if (path === '~') return homeOf(env);
  if (path.startsWith('~/')) return join(homeOf(env), path.slice(2));
  return path;
}

function homeOf(env: Env): string {
  return env.HOME && env.HOME !== '' ? env.HOME : homedir();
}

export interface BusPaths {
  db: string;
  audit: string;
  /** The folder holding the database: wake.json and chat_history live here too. */
  folder: string;
}

export function busPaths(env: Env = process.env): BusPaths {
  const defaultFolder = join(homeOf(env), BUS_FOLDER_NAME);
  const db = env.AGENT_BUS_DB ? resolve(expandHome(env.AGENT_BUS_DB, env)) : join(defaultFolder, 'bus.db');
  const audit = env.AGENT_BUS_AUDIT_LOG ? resolve(expandHome(env.AGENT_BUS_AUDIT_LOG, env)) : join(defaultFolder, 'audit.log');
  return { db, audit, folder: dirname(db) };
}
