/** Following what is stored on SQLite: a message's position is its rowid. */
import { lazy } from '../shared/lazy.js';
import type { FollowPort, PositionedMessage } from '../ports/follow.js';
import { MESSAGE_FIELDS, selectList } from '../shared/columns.js';
import type { SqliteConnection } from './driver.js';

const MESSAGE_COLUMNS = lazy(() => selectList(MESSAGE_FIELDS));

export function sqliteFollow(db: SqliteConnection): FollowPort {
  return {
    async lastPosition() {
      return db.get<{ position: number | null }>('SELECT MAX(rowid) AS position FROM messages')?.position ?? 0;
    },

    async messagesByPosition(after, also, limit) {
      if (limit <= 0) return [];
      return db.all<PositionedMessage>(
        `SELECT rowid AS position, ${MESSAGE_COLUMNS()} FROM messages
         WHERE rowid > ? OR rowid IN (SELECT value FROM json_each(?)) ORDER BY rowid LIMIT ?`,
        [after, JSON.stringify(also), limit],
      );
    },
  };
}
