/** Waking on PostgreSQL: an agent's lock serializes the count of its wakes. */
import type { WakePort } from '../ports/wake.js';
import { LOCK, type PostgresPool } from './pool.js';

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

    async setWatcher(session, token, pid, now, agent) {
      await pool.transaction(
        [],
        (query) =>
          query(
            `INSERT INTO watchers (session, token, pid, started_at, agent) VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (session) DO UPDATE SET token = excluded.token, pid = excluded.pid, started_at = excluded.started_at, agent = excluded.agent`,
            [session, token, pid, now, agent],
          ),
        false,
      );
    },

    async watchers() {
      return pool.read<{ agent: string; pid: number }>('SELECT agent, pid FROM watchers WHERE agent IS NOT NULL ORDER BY session');
    },

    async isWatcher(session, token) {
      return (await pool.one<{ token: string }>('SELECT token FROM watchers WHERE session = $1', [session]))?.token === token;
    },

    async clearWatcher(session, token) {
      await pool.writeAlone('DELETE FROM watchers WHERE session = $1 AND token = $2', [session, token], false);
    },
  };
}
