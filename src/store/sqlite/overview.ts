/** The dashboard's reads on SQLite: each from the rowid order or an index. */
import type { MessageGlance, OverviewPort, ThreadCount } from '../ports/overview.js';
import { GLANCE_CHARS, MAIL_PAIRS } from '../ports/overview.js';
import type { SqliteConnection } from './driver.js';

export function sqliteOverview(db: SqliteConnection): OverviewPort {
  return {
    async glancesBefore(before, limit) {
      if (limit <= 0) return [];
      return db.all<MessageGlance>(
        `SELECT rowid AS position, thread_id AS "threadId", from_agent AS "fromAgent", to_agent AS "toAgent", addressed_to AS "addressedTo",
           sent_at AS "sentAt", substr(body, 1, ${GLANCE_CHARS}) AS preview
           FROM messages WHERE rowid < ? ORDER BY rowid DESC LIMIT ?`,
        [before ?? Number.MAX_SAFE_INTEGER, limit],
      );
    },

    async threadCounts(threadIds) {
      if (threadIds.length === 0) return [];
      return db.all<ThreadCount>(
        `SELECT thread_id AS "threadId", COUNT(DISTINCT COALESCE(fanout_id, message_id)) AS sends, COUNT(*) AS copies,
           SUM(read_at IS NULL) AS unread, MIN(sent_at) AS "firstSentAt", MAX(sent_at) AS "lastSentAt", MAX(rowid) AS "lastPosition"
           FROM messages WHERE thread_id IN (SELECT value FROM json_each(?)) GROUP BY thread_id`,
        [JSON.stringify(threadIds)],
      );
    },

    async mailSince(since) {
      return db.readMostly(() => {
        // The newest message older than the window, read back from the newest: the window lies past it.
        const edge = db.get<{ position: number }>('SELECT rowid AS position FROM messages WHERE sent_at < ? ORDER BY rowid DESC LIMIT 1', [since])?.position ?? 0;
        const window = `FROM messages WHERE rowid > @edge AND sent_at >= @since`;
        const hours = db.all<{ hour: string; sends: number }>(
          `SELECT substr(sent_at, 1, 13) AS hour, COUNT(DISTINCT COALESCE(fanout_id, message_id)) AS sends ${window} GROUP BY hour ORDER BY hour`,
          { edge, since },
        );
        const pairs = db.all<{ from: string; to: string; sends: number }>(
          `SELECT from_agent AS "from", COALESCE(addressed_to, to_agent) AS "to", COUNT(DISTINCT COALESCE(fanout_id, message_id)) AS sends
             ${window} GROUP BY from_agent, COALESCE(addressed_to, to_agent) ORDER BY sends DESC, "from", "to" LIMIT ${MAIL_PAIRS}`,
          { edge, since },
        );
        return { hours, pairs };
      });
    },
  };
}
