/**
 * Where the bus keeps its state. The database is a SQLite file (the embedded
 * default) or a PostgreSQL URL (`AGENT_BUS_DB=postgres://…`). The bus folder
 * (`AGENT_BUS_HOME`) holds what is a file by nature: wake.json, brain-feed/,
 * .env, chat_history, the brain outbox. Nothing is derived from a URL.
 */
import { dirname, join, resolve } from 'node:path';
import { isPostgresUrl } from '../model/locations.js';
import { setting, type Env } from '../model/settings.js';

export const BUS_FOLDER_NAME = '.claude-agent-bus';

function expandHome(path: string, env: Env): string {
  if (path === '~') return homeOf(env);
  if (path.startsWith('~/')) return join(homeOf(env), path.slice(2));
  return path;
}

function homeOf(env: Env): string {
  // node:os only where HOME is unset: loading it is a share of every hook's start.
  return env.HOME && env.HOME !== '' ? env.HOME : process.getBuiltinModule('node:os').homedir();
}


export type DatabaseLocation = { engine: 'sqlite'; path: string } | { engine: 'postgres'; url: string };

export interface BusPaths {
  database: DatabaseLocation;
  /** The database as one string: the file's path or the URL (with its password: never show it). */
  db: string;
  audit: string;
  /** The bus folder: wake.json, brain-feed/, .env and chat_history live here. */
  folder: string;
}

/**
 * The folder is AGENT_BUS_HOME, else the folder of a database file named by
 * AGENT_BUS_DB (as before there was a setting for it), else ~/.claude-agent-bus.
 * The database defaults to bus.db in the folder; the audit log to audit.log in
 * AGENT_BUS_HOME, else in ~/.claude-agent-bus.
 */
export function busPaths(env: Env = process.env): BusPaths {
  const defaultFolder = join(homeOf(env), BUS_FOLDER_NAME);
  const home = setting(env, 'AGENT_BUS_HOME');
  const configured = setting(env, 'AGENT_BUS_DB');
  const homeFolder = home === '' ? null : resolve(expandHome(home, env));
  let database: DatabaseLocation;
  if (configured !== '' && isPostgresUrl(configured)) database = { engine: 'postgres', url: configured };
  else if (configured !== '') database = { engine: 'sqlite', path: resolve(expandHome(configured, env)) };
  else database = { engine: 'sqlite', path: join(homeFolder ?? defaultFolder, 'bus.db') };
  const folder = homeFolder ?? (database.engine === 'sqlite' ? dirname(database.path) : defaultFolder);
  const auditSetting = setting(env, 'AGENT_BUS_AUDIT_LOG');
  const audit = auditSetting !== '' ? resolve(expandHome(auditSetting, env)) : join(homeFolder ?? defaultFolder, 'audit.log');
  return { database, db: database.engine === 'sqlite' ? database.path : database.url, audit, folder };
}
