/** Waking on SQLite: the rate limit's count, and the watchers. */
import type { WakePort, WatcherRow } from '../ports/wake.js';
import type { SqliteConnection } from './driver.js';

const WATCHER_COLUMNS = "session, agent, pid, COALESCE(way, 'watch') AS way, note, started_at AS startedAt";

export function sqliteWake(db: SqliteConnection): WakePort {
  return {
    async countWake(agent, now, since, allow) {
      return db.immediate(() => {
        db.run('DELETE FROM wakes WHERE woken_at < ?', [since]);
        const recent = db.get<{ n: number }>('SELECT COUNT(*) AS n FROM wakes WHERE agent = ?', [agent])?.n ?? 0;
        if (!allow(recent)) return false;
        db.run('INSERT INTO wakes (agent, woken_at) VALUES (?, ?)', [agent, now]);
        return true;
      });
    },

    async setWatcher(session, token, pid, now, agent, way) {
      db.immediate(() =>
        db.run(
          `INSERT INTO watchers (session, token, pid, started_at, agent, way, note) VALUES (?, ?, ?, ?, ?, ?, NULL)
           ON CONFLICT(session) DO UPDATE SET token = excluded.token, pid = excluded.pid, started_at = excluded.started_at, agent = excluded.agent, way = excluded.way, note = NULL`,
          [session, token, pid, now, agent, way],
        ),
      );
    },

    async watchers() {
      return db.all<WatcherRow>(`SELECT ${WATCHER_COLUMNS} FROM watchers WHERE agent IS NOT NULL ORDER BY session`);
    },

    async watcherOf(session) {
      return db.get<WatcherRow>(`SELECT ${WATCHER_COLUMNS} FROM watchers WHERE session = ? AND agent IS NOT NULL`, [session]) ?? null;
    },

    async noteWatcher(session, token, way, note) {
      db.immediate(() => db.run('UPDATE watchers SET way = ?, note = ? WHERE session = ? AND token = ?', [way, note, session, token]));
    },

    async isWatcher(session, token) {
      return db.get<{ token: string }>('SELECT token FROM watchers WHERE session = ?', [session])?.token === token;
    },

    async clearWatcher(session, token) {
      db.immediate(() => db.run('DELETE FROM watchers WHERE session = ? AND token = ?', [session, token]));
    },
  };
}
