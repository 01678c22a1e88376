/**
 * Test scaffolding: every test gets its own HOME, database and audit log in a
 * temp folder, and drives the built CLI as a real subprocess.
 */
import { spawn, spawnSync } from 'node:child_process';
import { connectSqlite, sqliteDriverName } from '../../src/store/sqlite/driver.js';
import { setting } from '../../src/model/settings.js';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathWithoutAgentBus } from './clean-path.js';

export const ROOT = resolve(new URL('../..', import.meta.url).pathname);
export const CLI = join(ROOT, 'dist', 'bin', 'cli.cjs');

/** The engine the suite runs its buses on: `AGENT_BUS_TEST_ENGINE=postgres` (set by scripts/run-tests.mjs) or SQLite. */
export type Engine = 'sqlite' | 'postgres';
export const ENGINE: Engine = process.env.AGENT_BUS_TEST_ENGINE === 'postgres' ? 'postgres' : 'sqlite';
export const ON_POSTGRES = ENGINE === 'postgres';

export interface TempBus {
  dir: string;
  engine: Engine;
  /** The database: a SQLite file, or a PostgreSQL URL (a database of its own). */
  db: string;
  /** The bus folder (AGENT_BUS_HOME): wake.json, brain-feed/, .env, chat_history. */
  folder: string;
  audit: string;
  env: NodeJS.ProcessEnv;
  /** Run one statement against the bus's database, whatever its engine (for tests that set a row up). */
  sql(statement: string): void;
  /** Rows of a query against the bus's database, as JSON values. */
  rows<T = Record<string, unknown>>(query: string): T[];
  cleanup(): void;
}

function pgAdmin(): { url: string; psql: string } {
  const url = process.env.AGENT_BUS_TEST_PG_URL ?? '';
  if (url === '') throw new Error('AGENT_BUS_TEST_PG_URL is not set: run the suite with scripts/run-tests.mjs, which starts a PostgreSQL');
  const bin = process.env.AGENT_BUS_TEST_PG_BIN ?? '';
  return { url, psql: bin === '' ? 'psql' : join(bin, 'psql') };
}

/** Run psql against `url`, failing the test with what psql said. */
export function psql(url: string, statement: string): string {
  const { psql: command } = pgAdmin();
  const result = spawnSync(command, ['-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-d', url, '-c', statement], { encoding: 'utf8', timeout: 60_000, maxBuffer: 256 * 1024 * 1024 });
  if (result.status !== 0) throw new Error(`psql failed (${result.status}): ${result.stderr || result.error?.message || ""}`);
  return result.stdout;
}

/** A URL for another database on the test server. */
export function databaseUrl(name: string): string {
  const base = new URL(pgAdmin().url);
  base.pathname = `/${name}`;
  return base.toString();
}

/** The template every test database is cloned from (migrated once by run-tests), or none for an empty one. */
export const PG_TEMPLATE = 'agent_bus_template';

/** A fresh database on the test server: a copy of the migrated template unless `empty`. */
export function createDatabase(options: { empty?: boolean } = {}): { url: string; drop(): void } {
  const name = `agent_bus_t_${Math.random().toString(36).slice(2, 12)}`;
  psql(pgAdmin().url, `CREATE DATABASE ${name}${options.empty ? '' : ` TEMPLATE ${PG_TEMPLATE}`}`);
  return {
    url: databaseUrl(name),
    drop: () => {
      try {
        psql(pgAdmin().url, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } catch {
        // The server is going away with the suite anyway.
      }
    },
  };
}

/** Every file under `dir` (none when it does not exist), folders named in `skip` left out. */
export function filesUnder(dir: string, skip: readonly string[] = []): string[] {
  const found: string[] = [];
  const walk = (folder: string): void => {
    let entries;
    try {
      entries = readdirSync(folder, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) {
        if (!skip.includes(entry.name)) walk(path);
      } else found.push(path);
    }
  };
  walk(dir);
  return found;
}

/** Whether a file a test must never have written (a SQLite file standing in for PostgreSQL) is anywhere under `dir`. */
function sqliteFilesUnder(dir: string): string[] {
  return filesUnder(dir).filter((path) => /\.db(-wal|-shm)?$/.test(path));
}

/**
 * A private bus: HOME, the database and the audit log under a fresh temp folder. On
 * PostgreSQL the database is a fresh database of the test server, and cleanup fails the
 * test if anything wrote a SQLite file instead (the bus secretly stored elsewhere).
 */
export function tempBus(extraEnv: NodeJS.ProcessEnv = {}, options: { engine?: Engine; emptyDatabase?: boolean } = {}): TempBus {
  const engine = options.engine ?? ENGINE;
  const dir = mkdtempSync(join(tmpdir(), 'agent-bus-test-'));
  const folder = join(dir, 'bus');
  const audit = join(folder, 'audit.log');
  mkdirSync(join(dir, 'home'));
  const database = engine === 'postgres' ? createDatabase({ empty: options.emptyDatabase ?? false }) : null;
  // A SQLite bus creates its folder with its database; a PostgreSQL one has it as a user would, set up.
  if (database) mkdirSync(folder, { mode: 0o700 });
  const db = database ? database.url : join(folder, 'bus.db');
  const env: NodeJS.ProcessEnv = {
    // Whether agent-bus is on PATH is each test's to say, never the machine's.
    PATH: pathWithoutAgentBus(),
    HOME: join(dir, 'home'),
    AGENT_BUS_DB: db,
    AGENT_BUS_AUDIT_LOG: audit,
    NO_COLOR: '1',
    ...(database ? { AGENT_BUS_HOME: folder } : {}),
    ...extraEnv,
  };
  // The bus's own SQLite driver: two SQLite libraries in one process must never share a file (each
  // keeps its own record of the process's locks, and closing one's descriptor drops the other's).
  const busDriver = sqliteDriverName(setting(env, 'AGENT_BUS_SQLITE_DRIVER'));
  return {
    dir,
    engine,
    db,
    folder,
    audit,
    env,
    sql(statement) {
      if (database) {
        psql(database.url, statement);
        return;
      }
      const sqlite = connectSqlite(db, { driver: busDriver });
      try {
        sqlite.exec(statement);
      } finally {
        sqlite.close();
      }
    },
    rows<T>(query: string): T[] {
      if (database) return JSON.parse(psql(database.url, `SELECT coalesce(json_agg(t), '[]'::json) FROM (${query}) t`).trim() || '[]') as T[];
      const sqlite = connectSqlite(db, { readonly: true, driver: busDriver });
      try {
        return sqlite.prepare(query).all() as T[];
      } finally {
        sqlite.close();
      }
    },
    cleanup: () => {
      const strays = database ? sqliteFilesUnder(dir) : [];
      database?.drop();
      rmSync(dir, { recursive: true, force: true });
      if (strays.length > 0) throw new Error(`the bus was meant to live in PostgreSQL, but SQLite files were written: ${strays.join(', ')}`);
    },
  };
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  env: NodeJS.ProcessEnv;
  cwd?: string;
  input?: string;
  timeoutMs?: number;
}

export function runCli(args: string[], options: CliOptions): CliResult {
  const result = spawnSync(process.execPath, [CLI, ...args], {
    env: options.env,
    cwd: options.cwd ?? options.env.HOME ?? ROOT,
    input: options.input ?? '',
    encoding: 'utf8',
    timeout: options.timeoutMs ?? 30_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Run the CLI without blocking the test's event loop (for concurrency tests). */
export function runCliAsync(args: string[], options: CliOptions): Promise<CliResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: options.env,
      cwd: options.cwd ?? options.env.HOME ?? ROOT,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}

export function readAudit(path: string): Array<Record<string, unknown>> {
  let text = '';
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** Parse the single JSON document a `--json` command printed. */
export function json<T = unknown>(result: CliResult): T {
  if (result.code !== 0) throw new Error(`command failed (${result.code}): ${result.stderr}`);
  return JSON.parse(result.stdout) as T;
}

/** A test body run against a fresh private bus, removed afterwards. */
export function withTempBus(work: (bus: TempBus) => void | Promise<void>): () => Promise<void> {
  return async () => {
    const bus = tempBus();
    try {
      await work(bus);
    } finally {
      bus.cleanup();
    }
  };
}

/**
 * The lines of an error on stderr, less the usage line the CLI adds after bad usage: a usage error
 * is one line that says what is wrong, then `Usage: agent-bus …`.
 */
export function messageLines(stderr: string): string[] {
  const lines = stderr.trimEnd().split('\n');
  return lines.length > 1 && /^Usage: agent-bus /.test(lines.at(-1) as string) ? lines.slice(0, -1) : lines;
}
