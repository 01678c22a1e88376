/** Presence on SQLite: a hook's note is read first, and written only when the state moves. */
import type { PresenceRecord } from '../../model/records.js';
import type { PresencePort, PresenceWatch } from '../ports/presence.js';
import type { SqliteConnection } from './driver.js';

export function sqlitePresence(db: SqliteConnection): PresencePort {
  return {
    async notePresence({ name, state, since }) {
      // Most turns find the state as it was: answered without the write lock.
      if (db.get<{ state: string }>('SELECT state FROM presence WHERE name = ?', [name])?.state === state) return false;
      return db.immediate(
        () =>
          db.run('INSERT INTO presence (name, state, since) VALUES (@name, @state, @since) ON CONFLICT (name) DO UPDATE SET state = excluded.state, since = excluded.since WHERE presence.state <> excluded.state', {
            name,
            state,
            since,
          }).changes > 0,
      );
    },

    async presence() {
      return db.all<PresenceRecord>('SELECT name, state, since FROM presence ORDER BY name');
    },

    async presenceOf(name) {
      return db.get<PresenceRecord>('SELECT name, state, since FROM presence WHERE name = ?', [name]) ?? null;
    },

    async namesIn(state) {
      return db.all<{ name: string }>('SELECT name FROM presence WHERE state = ?', [state]).map((row) => row.name);
    },

    async addPresenceWatch(watch) {
      db.immediate(() => db.run('INSERT OR IGNORE INTO presence_watches (watcher, name, state, created_at) VALUES (@watcher, @name, @state, @createdAt)', { ...watch }));
    },

    async presenceWatches() {
      return db.all<PresenceWatch>('SELECT watcher, name, state, created_at AS "createdAt" FROM presence_watches ORDER BY created_at, watcher');
    },

    async removePresenceWatch({ watcher, name, state }) {
      return db.immediate(() => db.run('DELETE FROM presence_watches WHERE watcher = ? AND name = ? AND state = ?', [watcher, name, state]).changes > 0);
    },
  };
}
