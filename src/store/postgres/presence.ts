/** Presence on PostgreSQL: a hook's note is read first, and written only when the state moves. */
import type { PresenceRecord } from '../../model/records.js';
import type { PresencePort, PresenceWatch } from '../ports/presence.js';
import type { PostgresPool } from './pool.js';

export function postgresPresence(pool: PostgresPool): PresencePort {
  return {
    async notePresence({ name, state, since }) {
      if ((await pool.one<{ state: string }>('SELECT state FROM presence WHERE name = $1', [name]))?.state === state) return false;
      return pool.transaction([], async (query) => {
        const result = await query(
          'INSERT INTO presence (name, state, since) VALUES ($1, $2, $3) ON CONFLICT (name) DO UPDATE SET state = excluded.state, since = excluded.since WHERE presence.state <> excluded.state',
          [name, state, since],
        );
        return (result.rowCount ?? 0) > 0;
      });
    },

    async presence() {
      return pool.read<PresenceRecord>('SELECT name, state, since FROM presence ORDER BY name');
    },

    async presenceOf(name) {
      return (await pool.one<PresenceRecord>('SELECT name, state, since FROM presence WHERE name = $1', [name])) ?? null;
    },

    async namesIn(state) {
      return (await pool.read<{ name: string }>('SELECT name FROM presence WHERE state = $1', [state])).map((row) => row.name);
    },

    async addPresenceWatch({ watcher, name, state, createdAt }) {
      await pool.transaction([], (query) => query('INSERT INTO presence_watches (watcher, name, state, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING', [watcher, name, state, createdAt]));
    },

    async presenceWatches() {
      return pool.read<PresenceWatch>('SELECT watcher, name, state, created_at AS "createdAt" FROM presence_watches ORDER BY created_at, watcher');
    },

    async removePresenceWatch({ watcher, name, state }) {
      return pool.transaction([], async (query) => ((await query('DELETE FROM presence_watches WHERE watcher = $1 AND name = $2 AND state = $3', [watcher, name, state])).rowCount ?? 0) > 0);
    },
  };
}
