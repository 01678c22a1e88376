/**
 * SQLite through the runtime's own module, `node:sqlite` (Node.js 22.13 and later): no addon to
 * compile or load. This module adapts it to the seam's shape (driver.ts): positional parameters
 * passed as an array, named ones as an object whose extra keys are ignored (as better-sqlite3
 * ignores them), and errors carrying SQLite's code name in `code` (`SQLITE_BUSY`), as the rest of
 * the engine and the problem messages read it.
 */
import type { DriverDatabase, DriverStatement, OpenOptions, Params, SqliteDriver } from './driver.js';

/** The part of `node:sqlite` used here (the type package this project builds against predates it). */
interface BuiltinStatement {
  run(...parameters: unknown[]): { changes: number | bigint };
  get(...parameters: unknown[]): unknown;
  all(...parameters: unknown[]): unknown[];
  iterate(...parameters: unknown[]): IterableIterator<unknown>;
  setAllowUnknownNamedParameters(enabled: boolean): void;
}

interface BuiltinDatabase {
  prepare(sql: string): BuiltinStatement;
  exec(sql: string): void;
  close(): void;
  readonly isOpen: boolean;
  readonly isTransaction: boolean;
}

interface BuiltinModule {
  DatabaseSync: new (path: string, options: { readOnly?: boolean; timeout?: number }) => BuiltinDatabase;
}

/** SQLite's primary result codes by number, as better-sqlite3 names them in `code`. */
const PRIMARY_CODES: Record<number, string> = {
  1: 'SQLITE_ERROR',
  2: 'SQLITE_INTERNAL',
  3: 'SQLITE_PERM',
  4: 'SQLITE_ABORT',
  5: 'SQLITE_BUSY',
  6: 'SQLITE_LOCKED',
  7: 'SQLITE_NOMEM',
  8: 'SQLITE_READONLY',
  9: 'SQLITE_INTERRUPT',
  10: 'SQLITE_IOERR',
  11: 'SQLITE_CORRUPT',
  12: 'SQLITE_NOTFOUND',
  13: 'SQLITE_FULL',
  14: 'SQLITE_CANTOPEN',
  15: 'SQLITE_PROTOCOL',
  16: 'SQLITE_EMPTY',
  17: 'SQLITE_SCHEMA',
  18: 'SQLITE_TOOBIG',
  19: 'SQLITE_CONSTRAINT',
  20: 'SQLITE_MISMATCH',
  21: 'SQLITE_MISUSE',
  22: 'SQLITE_NOLFS',
  23: 'SQLITE_AUTH',
  24: 'SQLITE_FORMAT',
  25: 'SQLITE_RANGE',
  26: 'SQLITE_NOTADB',
};

/** The extended codes a caller tells apart; any other keeps its primary name. */
const EXTENDED_CODES: Record<number, string> = {
  261: 'SQLITE_BUSY_RECOVERY',
  517: 'SQLITE_BUSY_SNAPSHOT',
  773: 'SQLITE_BUSY_TIMEOUT',
  1555: 'SQLITE_CONSTRAINT_PRIMARYKEY',
  2067: 'SQLITE_CONSTRAINT_UNIQUE',
  1299: 'SQLITE_CONSTRAINT_NOTNULL',
  787: 'SQLITE_CONSTRAINT_FOREIGNKEY',
  275: 'SQLITE_CONSTRAINT_CHECK',
};

/** SQLite's code name for a result code, extended or primary. */
export function sqliteCodeName(errcode: number): string {
  return EXTENDED_CODES[errcode] ?? PRIMARY_CODES[errcode & 0xff] ?? `SQLITE_${errcode}`;
}

/** The error with its SQLite code name in `code`, when SQLite raised it (node:sqlite says ERR_SQLITE_ERROR there). */
function coded(error: unknown): unknown {
  const errcode = (error as { errcode?: unknown } | null)?.errcode;
  if (typeof errcode === 'number' && error instanceof Error) (error as Error & { code: string }).code = sqliteCodeName(errcode);
  return error;
}

/**
 * A row as an ordinary object: node:sqlite makes rows without a prototype, and rows reach callers
 * that compare, copy or print them as they would any object, as they do better-sqlite3's.
 */
function plain(row: unknown): unknown {
  return { ...(row as object) };
}

class Statement implements DriverStatement {
  constructor(private readonly statement: BuiltinStatement) {
    statement.setAllowUnknownNamedParameters(true);
  }

  run(params?: Params): { changes: number } {
    try {
      const result = Array.isArray(params) ? this.statement.run(...params) : params === undefined ? this.statement.run() : this.statement.run(params);
      return { changes: Number(result.changes) };
    } catch (error) {
      throw coded(error);
    }
  }

  get(params?: Params): unknown {
    let row: unknown;
    try {
      row = Array.isArray(params) ? this.statement.get(...params) : params === undefined ? this.statement.get() : this.statement.get(params);
    } catch (error) {
      throw coded(error);
    }
    return row === undefined ? undefined : plain(row);
  }

  all(params?: Params): unknown[] {
    let rows: unknown[];
    try {
      rows = Array.isArray(params) ? this.statement.all(...params) : params === undefined ? this.statement.all() : this.statement.all(params);
    } catch (error) {
      throw coded(error);
    }
    return rows.map(plain);
  }

  *iterate(params?: Params): IterableIterator<unknown> {
    try {
      for (const row of Array.isArray(params) ? this.statement.iterate(...params) : params === undefined ? this.statement.iterate() : this.statement.iterate(params)) yield plain(row);
    } catch (error) {
      throw coded(error);
    }
  }
}

class Database implements DriverDatabase {
  constructor(private readonly db: BuiltinDatabase) {}

  get isOpen(): boolean {
    return this.db.isOpen;
  }

  get inTransaction(): boolean {
    return this.db.isTransaction;
  }

  prepare(sql: string): DriverStatement {
    try {
      return new Statement(this.db.prepare(sql));
    } catch (error) {
      throw coded(error);
    }
  }

  exec(sql: string): void {
    try {
      this.db.exec(sql);
    } catch (error) {
      throw coded(error);
    }
  }

  close(): void {
    if (this.db.isOpen) this.db.close();
  }
}

let loaded: BuiltinModule | null | undefined;

/**
 * `node:sqlite`, or null where this Node.js has none (20, or 22 before 22.13 without its flag).
 * Node.js 22 announces the module with an ExperimentalWarning on stderr, which would land in a
 * hook's output or a command's: exactly that warning is held back while it loads, and no other.
 */
export function builtinSqlite(): BuiltinModule | null {
  if (loaded !== undefined) return loaded;
  const emitWarning = process.emitWarning;
  process.emitWarning = function (this: NodeJS.Process, warning: string | Error, ...rest: unknown[]): void {
    const type = typeof rest[0] === 'string' ? rest[0] : ((rest[0] as { type?: unknown } | undefined)?.type ?? (warning instanceof Error ? warning.name : undefined));
    const message = typeof warning === 'string' ? warning : warning.message;
    if (type === 'ExperimentalWarning' && /^SQLite is an experimental feature/.test(message)) return;
    (emitWarning as (...args: unknown[]) => void).call(process, warning, ...rest);
  } as typeof process.emitWarning;
  try {
    loaded = (process.getBuiltinModule('node:sqlite') as BuiltinModule | undefined) ?? null;
  } catch {
    loaded = null;
  } finally {
    process.emitWarning = emitWarning;
  }
  return loaded;
}

export const builtinDriver: SqliteDriver = {
  name: 'builtin',
  open(path: string, options: OpenOptions): DriverDatabase {
    const sqlite = builtinSqlite();
    if (sqlite === null) throw new Error(`Node.js ${process.versions.node} has no built-in SQLite (node:sqlite needs Node.js 22.13 or later)`);
    try {
      return new Database(new sqlite.DatabaseSync(path, { timeout: options.timeoutMs, ...(options.readonly ? { readOnly: true } : {}) }));
    } catch (error) {
      throw coded(error);
    }
  },
};
