import { statfsSync } from 'node:fs';

/**
 * Errors the bus raises for bad input or an unusable store. Each carries the
 * exit code the CLI maps it to, so every surface reports failures the same way.
 */
export class BusError extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode = 1) {
    super(message);
    this.name = new.target.name;
    this.exitCode = exitCode;
  }
}

/** A name that breaks one of the naming rules; the message says which. */
export class InvalidNameError extends BusError {}

/** Input that is not a name but still unusable: an empty body, a bad limit, a body over the size cap. */
export class InvalidInputError extends BusError {}

/** A send to a name nobody holds. Nothing was written. */
export class UnknownRecipientError extends BusError {
  readonly to: string;
  constructor(to: string, message: string) {
    super(message, 1);
    this.to = to;
  }
}

/** The database was written by a newer, incompatible agent-bus. */
export class SchemaTooNewError extends BusError {
  constructor(message: string) {
    super(message, 3);
  }
}

/** The database file cannot be opened or is not a database. */
export class StoreUnavailableError extends BusError {}

/**
 * Whether an error says the store cannot be used at all. By name, not by class: each CLI
 * bundle (and the PostgreSQL engine's) carries its own copy of these classes.
 */
export function isStoreUnavailable(error: unknown): boolean {
  return error instanceof Error && (error instanceof StoreUnavailableError || error.name === 'StoreUnavailableError');
}

/**
 * Whether an error is one of the bus's own. Each command is bundled on its own, with its own
 * copy of the error classes, so errors are recognised by shape rather than by `instanceof`.
 */
export function isBusError(error: unknown): error is BusError {
  return error instanceof Error && typeof (error as Partial<BusError>).exitCode === 'number';
}

/**
 * What a store's error means in words, when it is one a user can act on: a full disk, a database
 * that is read-only, one locked past the wait. In each case the transaction that met it rolled
 * back, so nothing was written. SQLite's codes, and PostgreSQL's for the same.
 */
export function storeProblem(error: unknown, folder: string | null = null): string | null {
  const code = error instanceof Error ? String((error as { code?: unknown }).code ?? '') : '';
  // A disk with no room shows as SQLITE_FULL when a write needs more, and as an I/O error when the
  // shared-memory file cannot grow: the folder's free space tells which.
  const full = code.startsWith('SQLITE_FULL') || code === '53100' || (code.startsWith('SQLITE_IOERR') && folder !== null && noRoomIn(folder));
  if (full) return 'the disk holding the bus is full: nothing was written and nothing was sent; free some space and try again';
  if (code.startsWith('SQLITE_READONLY') || code === '25006') {
    return 'the bus database is read-only: nothing was written and nothing was sent; check who may write the database, its folder and its -wal and -shm files';
  }
  if (code.startsWith('SQLITE_BUSY') || code === '55P03') return 'the bus database stayed locked by another process for longer than this one waits (AGENT_BUS_BUSY_TIMEOUT, 30 seconds unless set): nothing was written and nothing was sent; try again';
  return null;
}

/** Whether the file system holding `folder` has (next to) no room left. */
function noRoomIn(folder: string): boolean {
  try {
    const stats = statfsSync(folder);
    return stats.bavail * stats.bsize < 1024 * 1024;
  } catch {
    return false;
  }
}
