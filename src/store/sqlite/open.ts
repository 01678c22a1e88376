/**
 * Opening the SQLite file: private permissions, WAL, and forward migration
 * under the write lock so that processes starting together migrate once.
 */
import { accessSync, chmodSync, closeSync, constants, existsSync, mkdirSync, openSync, renameSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { SchemaTooNewError, StoreUnavailableError } from '../../model/errors.js';
import { BUSY_TIMEOUT_MS, connectSqlite, isBusy, type ConnectOptions, type SqliteConnection } from './driver.js';
import { EPOCH_SIZE, SCHEMA_EPOCH, STEPS, TARGET_VERSION } from './schema.js';

export { BUSY_TIMEOUT_MS };

/** How a store's connection is made: the busy timeout, the driver, how a driver's bundle loads. */
export type SqliteOpenOptions = Pick<ConnectOptions, 'timeoutMs' | 'driver' | 'requireBundle'>;

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
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

export function openSqlite(path: string, options: SqliteOpenOptions = {}): SqliteConnection {
  let db: SqliteConnection;
  try {
    preparePrivateFile(path);
    db = connectSqlite(path, options);
  } catch (error) {
    // The driver's own trouble (no addon, or one built for another Node.js) says what to do itself.
    if (error instanceof StoreUnavailableError) throw error;
    throw new StoreUnavailableError(`cannot open the database at ${path}: ${describe(error)}`);
  }
  try {
    // Refuse a newer epoch before anything writes to the file (the switch to WAL is a write).
    const version = readVersion(db);
    checkEpoch(version);
    // Checkpoint every ~32 MB of WAL rather than 4 MB: fewer fsyncs under a burst of sends. A page
    // cache of 16 MB whichever driver's SQLite this is (the addon's default; Node.js's is 2 MB).
    // Reads through a memory map of up to 256 MB of the file: a hook is a fresh process whose page
    // cache starts empty, and mapping the pages its queries touch costs a fraction of reading each
    // one into that cache. Writes still go through the WAL as before.
    // One exec for the connection settings: every process start pays for each statement.
    db.exec('PRAGMA synchronous = NORMAL; PRAGMA wal_autocheckpoint = 8000; PRAGMA cache_size = -16000; PRAGMA mmap_size = 268435456');
    // A new file keeps its freed pages for `prune` to give back (incremental vacuum); this only
    // takes before the first table, so it changes nothing in a database already made.
    if (version === 0) db.exec('PRAGMA auto_vacuum = INCREMENTAL');
    try {
      db.exec('PRAGMA journal_mode = WAL');
    } catch (error) {
      // Another process converting the file at this moment holds the lock; it ends in WAL anyway.
      if (!isBusy(error)) throw error;
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

function readVersion(db: SqliteConnection): number {
  return db.pragma('user_version') as number;
}

function checkEpoch(version: number): void {
  const epoch = Math.floor(version / EPOCH_SIZE);
  if (epoch > SCHEMA_EPOCH) {
    throw new SchemaTooNewError(
      `this database uses schema epoch ${epoch}, but this agent-bus only understands epoch ${SCHEMA_EPOCH} — upgrade agent-bus`,
    );
  }
}

function columnExists(db: SqliteConnection, table: string, column: string): boolean {
  return (db.prepare(`PRAGMA table_info(${table})`).all() as Array<{ name: string }>).some((row) => row.name === column);
}

function hasTable(db: SqliteConnection, table: string): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get([table]) !== undefined;
}

/** Copy the database as it is now next to it, as `<db>.pre-migrate-<version>`, once. */
function backUp(path: string, version: number, db: SqliteConnection): void {
  const target = `${path}.pre-migrate-${version}`;
  if (existsSync(target)) return;
  const partial = `${target}.partial`;
  rmSync(partial, { force: true });
  // A second connection reads a consistent snapshot while the first holds the write lock.
  const reader = connectSqlite(path, { readonly: true, driver: db.driver });
  try {
    reader.prepare('VACUUM INTO ?').run([partial]);
  } finally {
    reader.close();
  }
  chmodSync(partial, 0o600);
  renameSync(partial, target);
}

export function migrate(db: SqliteConnection, path: string, seenVersion = readVersion(db)): void {
  let version = seenVersion;
  checkEpoch(version);
  if (version === TARGET_VERSION) return;
  if (version > TARGET_VERSION) {
    // A newer agent-bus of this epoch migrated the file. Its steps only add, but make sure ours
    // are all there (each is a no-op when it is), and leave its version alone.
    if (!columnExists(db, 'messages', 'lease_until') || !hasTable(db, 'client_routes') || !hasTable(db, 'notices') || !hasTable(db, 'brain_state') || !hasTable(db, 'brain_markers') || !hasTable(db, 'wakes') || !hasTable(db, 'watchers') || !columnExists(db, 'client_routes', 'turn_state') || !columnExists(db, 'watchers', 'agent')) {
      db.immediate(() => STEPS.forEach((step) => step.apply(db)));
    }
    return;
  }
  db.exec('BEGIN IMMEDIATE');
  try {
    version = readVersion(db);
    checkEpoch(version);
    if (version < TARGET_VERSION) {
      if (hasTable(db, 'agents')) backUp(path, version, db);
      const done = version >= SCHEMA_EPOCH * EPOCH_SIZE ? version % EPOCH_SIZE : 0;
      for (const step of STEPS) if (step.step > done) step.apply(db);
      db.exec(`PRAGMA user_version = ${TARGET_VERSION}`);
    }
    db.exec('COMMIT');
  } catch (error) {
    if (db.inTransaction) db.exec('ROLLBACK');
    throw error;
  }
}
