/**
 * A lock among processes made of a SQLite file's write lock: the audit log's
 * appenders hold it for the few microseconds of one write. SQLite takes it with
 * an fcntl lock, which the kernel lets go when its holder dies, so a process
 * killed while holding it never wedges the others (a lock file would need
 * stale-lock guessing). Nothing but SQLite's header page is ever written to the file.
 */
import { closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { connectSqlite, type ConnectOptions } from './driver.js';

/** How long an appender waits for the lock: every holder holds it for one write. */
const WAIT_MS = 10_000;

export interface FileLock {
  hold(work: () => void): void;
  close(): void;
}

export function sqliteFileLock(path: string, options: Pick<ConnectOptions, 'driver' | 'requireBundle'> = {}): FileLock {
  if (!existsSync(path)) {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    try {
      closeSync(openSync(path, 'wx', 0o600));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  // Rollback journal (the default): BEGIN IMMEDIATE takes the file's reserved lock, and with
  // nothing written no journal file is ever made beside it.
  const db = connectSqlite(path, { ...options, timeoutMs: WAIT_MS });
  const begin = db.prepare('BEGIN IMMEDIATE');
  const commit = db.prepare('COMMIT');
  return {
    hold(work: () => void): void {
      begin.run();
      try {
        work();
      } finally {
        commit.run();
      }
    },
    close(): void {
      db.close();
    },
  };
}
