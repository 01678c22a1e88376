/**
 * The one module that knows SQLite's driver (better-sqlite3): opening a file through its addon,
 * statements prepared once per connection and reused, transactions and pragmas. The rest of the
 * engine reaches SQLite only through a `SqliteConnection`, so the driver can be swapped here alone.
 */
import Database from 'better-sqlite3';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { settingDefault } from '../../model/settings.js';

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

/** The driver's own handle on a database, for tests and benchmarks that seed or inspect one directly. */
export type RawSqlite = Database.Database;

/** What a migration step needs of a connection: a script run, a table's rows read. The driver's handle has it too. */
export interface SchemaConnection {
  exec(sql: string): unknown;
  prepare(sql: string): { all(): unknown[] };
}

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
export function nativeBinding(): string | undefined {
  if (addonPath === undefined) {
    const here = import.meta.dirname;
    const candidates = [join(here, '..', '..', '..', 'node_modules', ADDON), join(here, '..', '..', '..', '..', ADDON)];
    addonPath = candidates.find((candidate) => existsSync(candidate)) ?? null;
    if (addonPath === null) {
      try {
        addonPath = createRequire(import.meta.filename).resolve(ADDON);
      } catch {
        addonPath = null;
      }
    }
  }
  return addonPath ?? undefined;
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

export interface ConnectOptions {
  /** How long to wait for another connection's lock (BUSY_TIMEOUT_MS unless told). */
  timeoutMs?: number;
  readonly?: boolean;
}

let addon: object | undefined;

/**
 * The addon found above, loaded once and handed to better-sqlite3 as the loaded module (which it
 * takes in place of a path): given a path, it goes through require(), whose resolving of an
 * absolute path costs a hook more than loading the addon does.
 */
function loadedAddon(path: string): object {
  if (addon === undefined) {
    const module = { exports: {} };
    process.dlopen(module, path);
    addon = module.exports;
  }
  return addon;
}

/** A connection to the file at `path` through the addon found above. */
export function connectSqlite(path: string, options: ConnectOptions = {}): SqliteConnection {
  const binding = nativeBinding();
  // Its types name only a path; the loaded module is the documented other form.
  const nativeOption = binding ? { nativeBinding: loadedAddon(binding) as unknown as string } : {};
  return new SqliteConnection(new Database(path, { timeout: options.timeoutMs ?? BUSY_TIMEOUT_MS, ...(options.readonly ? { readonly: true } : {}), ...nativeOption }));
}

/** Whether a failure is SQLite saying another connection holds the lock (or a snapshot it cannot upgrade). */
export function isBusy(error: unknown): boolean {
  return String((error as { code?: unknown }).code ?? '').startsWith('SQLITE_BUSY');
}

/** One connection: the statements it has prepared, kept for as long as it is open. */
export class SqliteConnection {
  private readonly statements = new Map<string, Database.Statement>();

  constructor(private readonly db: Database.Database) {}

  get raw(): RawSqlite {
    return this.db;
  }

  get isOpen(): boolean {
    return this.db.open;
  }

  get inTransaction(): boolean {
    return this.db.inTransaction;
  }

  /** The statement for `sql`, prepared the first time it is asked for. */
  statement(sql: string): SqliteStatement {
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
    return this.statement(sql).all(params) as T[];
  }

  get<T>(sql: string, params: Params = {}): T | undefined {
    return this.statement(sql).get(params) as T | undefined;
  }

  run(sql: string, params: Params = {}): { changes: number } {
    return this.statement(sql).run(params);
  }

  /** The rows of a statement one at a time, for a read too large to hold at once (not kept prepared). */
  iterate<T>(sql: string, params: Params = {}): IterableIterator<T> {
    return this.db.prepare(sql).iterate(params) as IterableIterator<T>;
  }

  exec(sql: string): void {
    this.db.exec(sql);
  }

  /** A pragma's single value (`PRAGMA name`). */
  pragma(name: string): unknown {
    return this.db.pragma(name, { simple: true });
  }

  /** A pragma's rows (a check's findings, say). */
  pragmaRows<T>(name: string): T[] {
    return this.db.pragma(name) as T[];
  }

  /** `work` in a transaction that holds the write lock from its start (BEGIN IMMEDIATE). */
  immediate<T>(work: () => T): T {
    return this.db.transaction(work).immediate();
  }

  /** `work` in a transaction that takes the write lock only if it writes (BEGIN DEFERRED): one snapshot for its reads. */
  deferred<T>(work: () => T): T {
    return this.db.transaction(work).deferred();
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
    return this.db.transaction(work);
  }

  close(): void {
    this.statements.clear();
    if (this.db.open) this.db.close();
  }
}
