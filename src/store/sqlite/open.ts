/**
 * Opening the SQLite file: private permissions, WAL, and forward migration
 * under the write lock so that processes starting together migrate once.
 */
import Database from 'better-sqlite3';
import { accessSync, chmodSync, closeSync, constants, existsSync, mkdirSync, openSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SchemaTooNewError, StoreUnavailableError } from '../../model/errors.js';
import { EPOCH_SIZE, SCHEMA_EPOCH, STEPS, TARGET_VERSION } from './schema.js';

/** How long a writer waits for the lock before giving up, in milliseconds, unless AGENT_BUS_BUSY_TIMEOUT says. */
export const BUSY_TIMEOUT_MS = 30_000;

let addonPath: string | null | undefined;

const ADDON = join('better-sqlite3', 'build', 'Release', 'better_sqlite3.node');

/**
 * The compiled SQLite addon, located directly: better-sqlite3's own lookup
 * searches a dozen paths, and module resolution walks folders, on every start,
 * and every hook pays for start-up. This file sits three folders below the
 * package root (src/store/sqlite, dist/store/sqlite, dist/bin/commands), so
 * the addon is in the package's node_modules or, when npm hoisted it, beside
 * the package.
 */
function nativeBinding(): string | undefined {
  if (addonPath === undefined) {
    const here = dirname(fileURLToPath(import.meta.url));
    const candidates = [join(here, '..', '..', '..', 'node_modules', ADDON), join(here, '..', '..', '..', '..', ADDON)];
    addonPath = candidates.find((candidate) => existsSync(candidate)) ?? null;
    if (addonPath === null) {
      try {
        addonPath = createRequire(import.meta.url).resolve(ADDON);
      } catch {
        addonPath = null;
      }
    }
  }
  return addonPath ?? undefined;
}

/** A connection to the file at `path` through the addon found above, waiting BUSY_TIMEOUT_MS for locks unless told. */
export function connectSqlite(path: string, options: Database.Options = {}): Database.Database {
  const binding = nativeBinding();
  return new Database(path, { timeout: BUSY_TIMEOUT_MS, ...options, ...(binding ? { nativeBinding: binding } : {}) });
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * What to say when the SQLite addon was compiled for another Node.js (a Node upgrade, or nvm
 * switching versions under a global install): what to run, and where, rather than the loader's
 * paragraph. Null for any other failure.
 */
export function addonMismatch(error: unknown, addon: string | undefined, nodeVersion: string): string | null {
  const message = describe(error);
  const versions = /NODE_MODULE_VERSION\s+(\d+)\.\s+This\s+version\s+of\s+Node\.js\s+requires\s+NODE_MODULE_VERSION\s+(\d+)/.exec(message);
  if (!versions) return null;
  // <root>/node_modules/better-sqlite3/build/Release/better_sqlite3.node: npm rebuild runs in <root>.
  const where = addon ? dirname(dirname(dirname(dirname(dirname(addon))))) : null;
  return (
    `the SQLite addon (better-sqlite3) was built for another Node.js (module version ${versions[1]}; Node.js ${nodeVersion} needs ${versions[2]}): ` +
    `run 'npm rebuild better-sqlite3'${where ? ` in ${where}` : ''} with this Node.js, or reinstall agent-bus with it`
  );
}

function isCorruption(error: unknown): boolean {
  const code = (error as { code?: string }).code ?? '';
  return code.startsWith('SQLITE_NOTADB') || code.startsWith('SQLITE_CORRUPT') || code.startsWith('SQLITE_CANTOPEN');
}

/** Create the folder (0700) and an empty file (0600) so SQLite never creates them with looser modes. */
function preparePrivateFile(path: string): void {
  // The common case, every hook at every turn: the file is there. One stat, no exception built.
  if (existsSync(path)) return;
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  try {
    closeSync(openSync(path, 'wx', 0o600));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}

export function openSqlite(path: string, busyTimeoutMs = BUSY_TIMEOUT_MS): Database.Database {
  let db: Database.Database;
  try {
    preparePrivateFile(path);
    db = connectSqlite(path, { timeout: busyTimeoutMs });
  } catch (error) {
    throw new StoreUnavailableError(addonMismatch(error, nativeBinding(), process.versions.node) ?? `cannot open the database at ${path}: ${describe(error)}`);
  }
  try {
    // Refuse a newer epoch before anything writes to the file (the switch to WAL is a write).
    const version = readVersion(db);
    checkEpoch(version);
    // Checkpoint every ~32 MB of WAL rather than 4 MB: fewer fsyncs under a burst of sends.
    // One exec for the connection settings: every process start pays for each statement.
    db.exec('PRAGMA synchronous = NORMAL; PRAGMA wal_autocheckpoint = 8000');
    // A new file keeps its freed pages for `prune` to give back (incremental vacuum); this only
    // takes before the first table, so it changes nothing in a database already made.
    if (version === 0) db.exec('PRAGMA auto_vacuum = INCREMENTAL');
    try {
      db.exec('PRAGMA journal_mode = WAL');
    } catch (error) {
      // Another process converting the file at this moment holds the lock; it ends in WAL anyway.
      if (!String((error as { code?: string }).code).startsWith('SQLITE_BUSY')) throw error;
    }
    migrate(db, path, version);
    return db;
  } catch (error) {
    db.close();
    if (error instanceof SchemaTooNewError) throw error;
    const readOnly = unwritable(path);
    if (readOnly !== null) throw new StoreUnavailableError(`the database at ${path} is read-only (${readOnly}): nothing was written and nothing was sent`);
    if (isCorruption(error)) throw new StoreUnavailableError(`cannot use the database at ${path}: ${describe(error)}`);
    throw error;
  }
}

/**
 * Why a database that failed to open cannot be written, when its folder or file says so: SQLite in
 * WAL mode cannot even read without writing its shared-memory file, and says only "unable to open".
 */
function unwritable(path: string): string | null {
  try {
    accessSync(dirname(path), constants.W_OK);
    accessSync(path, constants.W_OK);
    return null;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EROFS') return 'it is on a read-only file system';
    if (code === 'EACCES' || code === 'EPERM') return 'this user may not write it or its folder';
    return null;
  }
}

function readVersion(db: Database.Database): number {
  return db.pragma('user_version', { simple: true }) as number;
}

function checkEpoch(version: number): void {
  const epoch = Math.floor(version / EPOCH_SIZE);
  if (epoch > SCHEMA_EPOCH) {
    throw new SchemaTooNewError(
      `this database uses schema epoch ${epoch}, but this agent-bus only understands epoch ${SCHEMA_EPOCH} — upgrade agent-bus`,
    );
  }
}

function columnExists(db: Database.Database, table: string, column: string): boolean {
  return (db.prepare(`PRAGMA table_info(${table})`).all() as Array<{ name: string }>).some((row) => row.name === column);
}

function hasTable(db: Database.Database, table: string): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(table) !== undefined;
}

/** Copy the database as it is now next to it, as `<db>.pre-migrate-<version>`, once. */
function backUp(path: string, version: number): void {
  const target = `${path}.pre-migrate-${version}`;
  if (existsSync(target)) return;
  const partial = `${target}.partial`;
  rmSync(partial, { force: true });
  // A second connection reads a consistent snapshot while the first holds the write lock.
  const reader = connectSqlite(path, { readonly: true });
  try {
    reader.prepare('VACUUM INTO ?').run(partial);
  } finally {
    reader.close();
  }
  chmodSync(partial, 0o600);
  renameSync(partial, target);
}

export function migrate(db: Database.Database, path: string, seenVersion = readVersion(db)): void {
  let version = seenVersion;
  checkEpoch(version);
  if (version === TARGET_VERSION) return;
  if (version > TARGET_VERSION) {
    // A newer agent-bus of this epoch migrated the file. Its steps only add, but make sure ours
    // are all there (each is a no-op when it is), and leave its version alone.
    if (!columnExists(db, 'messages', 'lease_until') || !hasTable(db, 'client_routes') || !hasTable(db, 'notices') || !hasTable(db, 'brain_state') || !hasTable(db, 'brain_markers') || !hasTable(db, 'wakes') || !hasTable(db, 'watchers') || !columnExists(db, 'client_routes', 'turn_state') || !columnExists(db, 'watchers', 'agent')) {
      db.transaction(() => STEPS.forEach((step) => step.apply(db))).immediate();
    }
    return;
  }
  db.exec('BEGIN IMMEDIATE');
  try {
    version = readVersion(db);
    checkEpoch(version);
    if (version < TARGET_VERSION) {
      if (hasTable(db, 'agents')) backUp(path, version);
      const done = version >= SCHEMA_EPOCH * EPOCH_SIZE ? version % EPOCH_SIZE : 0;
      for (const step of STEPS) if (step.step > done) step.apply(db);
      db.pragma(`user_version = ${TARGET_VERSION}`);
    }
    db.exec('COMMIT');
  } catch (error) {
    if (db.inTransaction) db.exec('ROLLBACK');
    throw error;
  }
}
