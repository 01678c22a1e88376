/** A store's error in words a user can act on, looking at the disk where that tells which it is. */
import { statfsSync } from 'node:fs';
import { settingDefault } from '../model/settings.js';

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
  if (code.startsWith('SQLITE_BUSY') || code === '55P03') return `the bus database stayed locked by another process for longer than this one waits (AGENT_BUS_BUSY_TIMEOUT, ${settingDefault('AGENT_BUS_BUSY_TIMEOUT')} seconds unless set): nothing was written and nothing was sent; try again`;
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
