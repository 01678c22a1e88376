/**
 * SQLite's change feed: file-system events in the database's folder (its WAL
 * grows at every commit) say when to look, and SQLite's data_version, which
 * moves when another connection commits, with the rows this connection has
 * changed itself (a hub's own writes wake the waits it serves), says whether
 * anything changed. The waiting loop polls slowly where no events come.
 */
import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import type { ChangeFeed, ChangesPort } from '../ports/changes.js';
import type { SqliteConnection } from './driver.js';

export function sqliteChangeFeed(db: string, dataVersion: () => number): ChangeFeed {
  let wakeUp: (() => void) | null = null;
  let watcher: FSWatcher | null = null;
  const name = basename(db);
  try {
    watcher = watch(dirname(db), { persistent: false }, (_event, file) => {
      if (file === null || String(file).startsWith(name)) wakeUp?.();
    });
    watcher.on('error', () => undefined);
  } catch {
    watcher = null; // No file-system events here: the poll alone.
  }
  return {
    version: async () => dataVersion(),
    wait: (ms) =>
      new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => done(false), ms);
        function done(byEvent: boolean): void {
          clearTimeout(timer);
          wakeUp = null;
          resolve(byEvent);
        }
        wakeUp = () => done(true);
      }),
    interrupt: () => wakeUp?.(),
    close: async () => watcher?.close(),
  };
}

export function sqliteChanges(db: SqliteConnection, location: string): ChangesPort {
  return {
    // Both only grow: their sum moves whenever either does.
    changes: () => sqliteChangeFeed(location, () => (db.pragma('data_version') as number) + (db.get<{ n: number }>('SELECT total_changes() AS n')?.n ?? 0)),
  };
}
