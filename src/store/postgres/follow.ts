/** Following what is stored on PostgreSQL: a message's position is its seq. */
import type { FollowPort, PositionedMessage } from '../ports/follow.js';
import { MESSAGE_FIELDS, selectList } from '../shared/columns.js';
import type { PostgresPool } from './pool.js';

const MESSAGE_COLUMNS = selectList(MESSAGE_FIELDS);

export function postgresFollow(pool: PostgresPool): FollowPort {
  return {
    async lastPosition() {
      return Number((await pool.one<{ position: string | null }>('SELECT MAX(seq) AS position FROM messages'))?.position ?? 0);
    },

    async messagesByPosition(after, also, limit) {
      if (limit <= 0) return [];
      const rows = await pool.read<PositionedMessage & { position: string }>(
        `SELECT seq AS position, ${MESSAGE_COLUMNS} FROM messages WHERE seq > $1 OR seq = ANY($2::bigint[]) ORDER BY seq LIMIT $3`,
        [after, also, limit],
      );
      return rows.map((row) => ({ ...row, position: Number(row.position) }));
    },
  };
}
