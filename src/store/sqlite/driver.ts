/**
 * The seam between the SQLite engine and the driver under it: `node:sqlite`, built into Node.js
 * 22.13 and later (builtin-driver.ts), or the better-sqlite3 addon on Node.js 20 (addon-driver.ts).
 * A driver opens a file and prepares statements; everything above that (statements kept per
 * connection, transactions, savepoints, pragmas, what a busy lock looks like) is here, once, so
 * both drivers behave alike and one database file is used by either. The rest of the engine
 * reaches SQLite only through a `SqliteConnection`.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { StoreUnavailableError } from '../../model/errors.js';
import { setting, settingDefault } from '../../model/settings.js';
import { builtinDriver, builtinSqlite } from './builtin-driver.js';

/** How long a writer waits for the lock before giving up, in milliseconds, unless AGENT_BUS_BUSY_TIMEOUT says. */
export const BUSY_TIMEOUT_MS = settingDefault('AGENT_BUS_BUSY_TIMEOUT') * 1000;

/** A statement's parameters: named (`@name`) as an object, positional (`?`) as an array. */
export type Params = Record<string, string | number | null> | unknown[];

/** What a statement prepared once answers, each time it runs. */
export interface SqliteStatement {
  run(params?: Params): { changes: number };
  get(params?: Params): unknown;
  all(params?: Params): unknown[];
}

/** A driver's prepared statement. */
export interface DriverStatement extends SqliteStatement {
  iterate(params?: Params): IterableIterator<unknown>;
}

/** A driver's open database: what the seam builds a connection from. */
export interface DriverDatabase {
  prepare(sql: string): DriverStatement;
  exec(sql: string): void;
  close(): void;
  readonly isOpen: boolean;
  readonly inTransaction: boolean;
}

export interface OpenOptions {
  timeoutMs: number;
  readonly: boolean;
}

/** The SQLite drivers, as AGENT_BUS_SQLITE_DRIVER names them. */
export type SqliteDriverName = 'builtin' | 'better-sqlite3';

export interface SqliteDriver {
  readonly name: SqliteDriverName;
  open(path: string, options: OpenOptions): DriverDatabase;
}

/** What a migration step needs of a connection: a script run, a table's rows read. */
export interface SchemaConnection {
  exec(sql: string): unknown;
  prepare(sql: string): { all(): unknown[] };
}

export interface ConnectOptions {
  /** How long to wait for another connection's lock (BUSY_TIMEOUT_MS unless told). */
  timeoutMs?: number;
  readonly?: boolean;
  /** The driver; AGENT_BUS_SQLITE_DRIVER's choice unless told. */
  driver?: SqliteDriverName;
  /** How to load the addon driver's bundle (the CLI's, with its code cache); plain require by default. */
  requireBundle?: (path: string) => unknown;
}

type AddonModule = typeof import('./addon-driver.js');

/** The addon driver's bundle, beside the command bundles' folder (scripts/bundle.mjs). */
export const ADDON_DRIVER_BUNDLE = 'sqlite-addon.cjs';

let addonModule: AddonModule | undefined;

function isMissingModule(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'MODULE_NOT_FOUND' || code === 'ERR_MODULE_NOT_FOUND';
}

const NO_ADDON =
  'the SQLite addon (better-sqlite3) is not installed, and it is the driver this Node.js needs: install a C++ compiler and Python and run ' +
  "'npm rebuild better-sqlite3' where agent-bus is installed, or run agent-bus on Node.js 22.13 or later, whose SQLite is built in";

/** The addon driver's module, loaded once: its own bundle when the program runs from its bundles. */
function loadAddon(requireBundle?: (path: string) => unknown): AddonModule {
  if (addonModule !== undefined) return addonModule;
  const here = import.meta.filename;
  // A command bundle lives in dist/bin/commands; the driver's bundle beside that folder.
  const bundled = join(dirname(here), '..', ADDON_DRIVER_BUNDLE);
  let loaded: AddonModule;
  try {
    if (existsSync(bundled)) loaded = (requireBundle ?? createRequire(here))(bundled) as AddonModule;
    else {
      // Not bundled: a name the bundler cannot follow, so no command bundle takes the addon in.
      const name = ['./addon-driver', existsSync(join(dirname(here), 'addon-driver.ts')) ? '.ts' : '.js'].join('');
      loaded = createRequire(here)(name) as AddonModule;
    }
  } catch (error) {
    if (isMissingModule(error)) throw new StoreUnavailableError(NO_ADDON);
    throw error;
  }
  // Bundled, better-sqlite3's JavaScript is in the driver's bundle; the compiled addon may still be missing.
  if (loaded.nativeBinding() === undefined && existsSync(bundled)) throw new StoreUnavailableError(NO_ADDON);
  addonModule = loaded;
  return loaded;
}

/** The drivers that work here: the built-in one where this Node.js has it, the addon where it is built for this Node.js. */
export function availableSqliteDrivers(): SqliteDriverName[] {
  const available: SqliteDriverName[] = hasBuiltinSqlite() ? ['builtin'] : [];
  try {
    loadAddon().addonDriver.open(':memory:', { timeoutMs: 0, readonly: false }).close();
    available.push('better-sqlite3');
  } catch {
    // Not installed, or built for another Node.js.
  }
  return available;
}

/** Whether this Node.js has SQLite built in (and it loads). */
export function hasBuiltinSqlite(): boolean {
  return builtinSqlite() !== null;
}

/**
 * The driver a connection uses: the one named, or AGENT_BUS_SQLITE_DRIVER's, or (unset, `auto`)
 * the built-in one wherever this Node.js has it and the addon elsewhere.
 */
export function sqliteDriverName(wanted: string = setting(process.env, 'AGENT_BUS_SQLITE_DRIVER')): SqliteDriverName {
  if (wanted === 'builtin' || wanted === 'better-sqlite3') return wanted;
  return hasBuiltinSqlite() ? 'builtin' : 'better-sqlite3';
}

function driverFor(name: SqliteDriverName, requireBundle?: (path: string) => unknown): SqliteDriver {
  if (name === 'better-sqlite3') return loadAddon(requireBundle).addonDriver;
  if (!hasBuiltinSqlite()) {
    throw new StoreUnavailableError(
      `AGENT_BUS_SQLITE_DRIVER is builtin, but Node.js ${process.versions.node} has no built-in SQLite (node:sqlite, in Node.js 22.13 and later): ` +
        'unset it to use the better-sqlite3 addon',
    );
  }
  return builtinDriver;
}

/**
 * What to say when the SQLite addon was compiled for another Node.js (a Node upgrade, or nvm
 * switching versions under a global install): what to run, and where, rather than the loader's
 * paragraph. Null for any other failure.
 */
export function addonMismatch(error: unknown, addon: string | undefined, nodeVersion: string): string | null {
  const message = error instanceof Error ? error.message : String(error);
  const versions = /NODE_MODULE_VERSION\s+(\d+)\.\s+This\s+version\s+of\s+Node\.js\s+requires\s+NODE_MODULE_VERSION\s+(\d+)/.exec(message);
  if (!versions) return null;
  // <root>/node_modules/better-sqlite3/build/Release/better_sqlite3.node: npm rebuild runs in <root>.
  const where = addon ? dirname(dirname(dirname(dirname(dirname(addon))))) : null;
  return (
    `the SQLite addon (better-sqlite3) was built for another Node.js (module version ${versions[1]}; Node.js ${nodeVersion} needs ${versions[2]}): ` +
    `run 'npm rebuild better-sqlite3'${where ? ` in ${where}` : ''} with this Node.js, or reinstall agent-bus with it`
  );
}

/**
 * What to say when the driver itself cannot be used (the addon compiled for another Node.js):
 * null when the failure is the file's, not the driver's.
 */
function driverProblem(error: unknown, driver: SqliteDriverName): string | null {
  if (driver !== 'better-sqlite3' || addonModule === undefined) return null;
  return addonMismatch(error, addonModule.nativeBinding(), process.versions.node);
}

/** A connection to the file at `path`. */
export function connectSqlite(path: string, options: ConnectOptions = {}): SqliteConnection {
  const name = sqliteDriverName(options.driver);
  const driver = driverFor(name, options.requireBundle);
  try {
    return new SqliteConnection(driver.open(path, { timeoutMs: options.timeoutMs ?? BUSY_TIMEOUT_MS, readonly: options.readonly ?? false }), name);
  } catch (error) {
    const problem = driverProblem(error, name);
    throw problem === null ? error : new StoreUnavailableError(problem);
  }
}

/** Whether a failure is SQLite saying another connection holds the lock (or a snapshot it cannot upgrade). */
export function isBusy(error: unknown): boolean {
  return String((error as { code?: unknown }).code ?? '').startsWith('SQLITE_BUSY');
}

/** The savepoint a transaction inside another runs as. */
const SAVEPOINT = 'agent_bus_nested';

/** One connection: the statements it has prepared, kept for as long as it is open. */
export class SqliteConnection {
  private readonly statements = new Map<string, DriverStatement>();

  constructor(
    private readonly db: DriverDatabase,
    /** The driver under it. */
    readonly driver: SqliteDriverName,
  ) {}

  get isOpen(): boolean {
    return this.db.isOpen;
  }

  get inTransaction(): boolean {
    return this.db.inTransaction;
  }

  /** The statement for `sql`, prepared the first time it is asked for. */
  statement(sql: string): SqliteStatement {
    return this.kept(sql);
  }

  private kept(sql: string): DriverStatement {
    let prepared = this.statements.get(sql);
    if (!prepared) {
      prepared = this.db.prepare(sql);
      this.statements.set(sql, prepared);
    }
    return prepared;
  }

  /** A statement prepared now and not kept: for one that runs once, or that its caller keeps. */
  prepare(sql: string): SqliteStatement {
    return this.db.prepare(sql);
  }

  all<T>(sql: string, params: Params = {}): T[] {
    return this.kept(sql).all(params) as T[];
  }

  get<T>(sql: string, params: Params = {}): T | undefined {
    return this.kept(sql).get(params) as T | undefined;
  }

  run(sql: string, params: Params = {}): { changes: number } {
    return this.kept(sql).run(params);
  }

  /** The rows of a statement one at a time, for a read too large to hold at once (not kept prepared). */
  iterate<T>(sql: string, params: Params = {}): IterableIterator<T> {
    return this.db.prepare(sql).iterate(params) as IterableIterator<T>;
  }

  exec(sql: string): void {
    this.db.exec(sql);
  }

  /** A pragma's single value (`PRAGMA name`): the first column of its first row. */
  pragma(name: string): unknown {
    const row = this.kept(`PRAGMA ${name}`).get() as Record<string, unknown> | undefined;
    return row === undefined ? undefined : Object.values(row)[0];
  }

  /** A pragma's rows (a check's findings, say). */
  pragmaRows<T>(name: string): T[] {
    return this.db.prepare(`PRAGMA ${name}`).all() as T[];
  }

  /**
   * `work` in a transaction begun by `begin`, or, inside one already, as a savepoint: committed
   * (released) when it returns, rolled back when it throws. A failed COMMIT is rolled back too.
   */
  private transaction<T>(begin: string, work: () => T): T {
    if (this.db.inTransaction) return this.nested(work);
    this.kept(begin).run();
    try {
      const result = work();
      this.kept('COMMIT').run();
      return result;
    } catch (error) {
      if (this.db.inTransaction) this.kept('ROLLBACK').run();
      throw error;
    }
  }

  private nested<T>(work: () => T): T {
    this.kept(`SAVEPOINT ${SAVEPOINT}`).run();
    try {
      const result = work();
      this.kept(`RELEASE ${SAVEPOINT}`).run();
      return result;
    } catch (error) {
      if (this.db.inTransaction) {
        this.kept(`ROLLBACK TO ${SAVEPOINT}`).run();
        this.kept(`RELEASE ${SAVEPOINT}`).run();
      }
      throw error;
    }
  }

  /** `work` in a transaction that holds the write lock from its start (BEGIN IMMEDIATE). */
  immediate<T>(work: () => T): T {
    return this.transaction('BEGIN IMMEDIATE', work);
  }

  /** `work` in a transaction that takes the write lock only if it writes (BEGIN DEFERRED): one snapshot for its reads. */
  deferred<T>(work: () => T): T {
    return this.transaction('BEGIN DEFERRED', work);
  }

  /**
   * A transaction that usually only reads: it starts without the write lock, and if it must write
   * and another connection committed meanwhile (SQLite refuses to upgrade a stale snapshot), the
   * whole of it runs again holding the lock. Each run is a transaction of its own.
   */
  readMostly<T>(work: () => T): T {
    try {
      return this.deferred(work);
    } catch (error) {
      if (!isBusy(error)) throw error;
      return this.immediate(work);
    }
  }

  /** `work` as a function that runs as a savepoint inside a transaction (a transaction of its own outside one). */
  savepoint<A, T>(work: (argument: A) => T): (argument: A) => T {
    return (argument) => this.transaction('BEGIN', () => work(argument));
  }

  close(): void {
    this.statements.clear();
    this.db.close();
  }
}
