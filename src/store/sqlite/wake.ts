/** Waking on SQLite: the rate limit's count, and the watchers. */
import type { WakePort } from '../ports/wake.js';
import type { SqliteConnection } from './driver.js';

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

    async setWatcher(session, token, pid, now, agent) {
      db.immediate(() =>
        db.run(
          `INSERT INTO watchers (session, token, pid, started_at, agent) VALUES (?, ?, ?, ?, ?)
           ON CONFLICT(session) DO UPDATE SET token = excluded.token, pid = excluded.pid, started_at = excluded.started_at, agent = excluded.agent`,
          [session, token, pid, now, agent],
        ),
      );
    },

    async watchers() {
      return db.all<{ agent: string; pid: number }>('SELECT agent, pid FROM watchers WHERE agent IS NOT NULL');
    },

    async isWatcher(session, token) {
      return db.get<{ token: string }>('SELECT token FROM watchers WHERE session = ?', [session])?.token === token;
    },

    async clearWatcher(session, token) {
      db.immediate(() => db.run('DELETE FROM watchers WHERE session = ? AND token = ?', [session, token]));
    },
  };
}
