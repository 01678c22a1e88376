/** Waking on PostgreSQL: an agent's lock serializes the count of its wakes. */
import type { WakePort, WatcherRow } from '../ports/wake.js';
import { LOCK, type PostgresPool } from './pool.js';

const WATCHER_COLUMNS = `session, agent, pid, COALESCE(way, 'watch') AS way, note, started_at AS "startedAt"`;

export function postgresWake(pool: PostgresPool): WakePort {
  return {
    async countWake(agent, now, since, allow) {
      return pool.transaction(
        [[LOCK.wakes, agent]],
        async (query) => {
          await query('DELETE FROM wakes WHERE woken_at < $1', [since]);
          const recent = ((await query('SELECT COUNT(*)::int AS n FROM wakes WHERE agent = $1', [agent])).rows[0]?.n as number | undefined) ?? 0;
          if (!allow(recent)) return false;
          await query('INSERT INTO wakes (agent, woken_at) VALUES ($1, $2)', [agent, now]);
          return true;
        },
        false,
      );
    },

    async setWatcher(session, token, pid, now, agent, way) {
      await pool.transaction(
        [],
        (query) =>
          query(
            `INSERT INTO watchers (session, token, pid, started_at, agent, way, note) VALUES ($1, $2, $3, $4, $5, $6, NULL)
             ON CONFLICT (session) DO UPDATE SET token = excluded.token, pid = excluded.pid, started_at = excluded.started_at, agent = excluded.agent, way = excluded.way, note = NULL`,
            [session, token, pid, now, agent, way],
          ),
        false,
      );
    },

    async watchers() {
      return pool.read<WatcherRow>(`SELECT ${WATCHER_COLUMNS} FROM watchers WHERE agent IS NOT NULL ORDER BY session`);
    },

    async watcherOf(session) {
      return (await pool.one<WatcherRow>(`SELECT ${WATCHER_COLUMNS} FROM watchers WHERE session = $1 AND agent IS NOT NULL`, [session])) ?? null;
    },

    async noteWatcher(session, token, way, note) {
      await pool.writeAlone('UPDATE watchers SET way = $1, note = $2 WHERE session = $3 AND token = $4', [way, note, session, token], false);
    },

    async isWatcher(session, token) {
      return (await pool.one<{ token: string }>('SELECT token FROM watchers WHERE session = $1', [session]))?.token === token;
    },

    async clearWatcher(session, token) {
      await pool.writeAlone('DELETE FROM watchers WHERE session = $1 AND token = $2', [session, token], false);
    },
  };
}
