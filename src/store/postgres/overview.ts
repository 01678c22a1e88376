/** The dashboard's reads on PostgreSQL: each from the seq order or an index. */
import type { MessageGlance, OverviewPort, ThreadCount } from '../ports/overview.js';
import { GLANCE_CHARS, MAIL_PAIRS } from '../ports/overview.js';
import type { PostgresPool } from './pool.js';

export function postgresOverview(pool: PostgresPool): OverviewPort {
  return {
    async glancesBefore(before, limit) {
      if (limit <= 0) return [];
      const rows = await pool.read<MessageGlance & { position: string }>(
        `SELECT seq AS position, thread_id AS "threadId", from_agent AS "fromAgent", to_agent AS "toAgent", addressed_to AS "addressedTo",
           sent_at AS "sentAt", left(body, ${GLANCE_CHARS}) AS preview
           FROM messages WHERE seq < $1 ORDER BY seq DESC LIMIT $2`,
        [before ?? Number.MAX_SAFE_INTEGER, limit],
      );
      return rows.map((row) => ({ ...row, position: Number(row.position) }));
    },

    async threadCounts(threadIds) {
      if (threadIds.length === 0) return [];
      const rows = await pool.read<Record<keyof ThreadCount, string>>(
        `SELECT thread_id AS "threadId", COUNT(DISTINCT COALESCE(fanout_id, message_id)) AS sends, COUNT(*) AS copies,
           COUNT(*) FILTER (WHERE read_at IS NULL) AS unread, MIN(sent_at) AS "firstSentAt", MAX(sent_at) AS "lastSentAt", MAX(seq) AS "lastPosition"
           FROM messages WHERE thread_id = ANY($1::text[]) GROUP BY thread_id`,
        [threadIds],
      );
      return rows.map((row) => ({ ...row, sends: Number(row.sends), copies: Number(row.copies), unread: Number(row.unread), lastPosition: Number(row.lastPosition) }));
    },

    async mailSince(since) {
      // One statement, so both answers see one snapshot.
      const rows = await pool.read<{ kind: 'hour' | 'pair'; a: string; b: string | null; sends: string }>(
        `WITH edge AS (SELECT COALESCE((SELECT seq FROM messages WHERE sent_at < $1 ORDER BY seq DESC LIMIT 1), 0) AS seq),
              win AS (SELECT sent_at, from_agent, COALESCE(addressed_to, to_agent) AS target, COALESCE(fanout_id, message_id) AS send_id
                        FROM messages WHERE seq > (SELECT seq FROM edge) AND sent_at >= $1)
         (SELECT 'hour' AS kind, left(sent_at, 13) AS a, NULL AS b, COUNT(DISTINCT send_id) AS sends FROM win GROUP BY left(sent_at, 13))
         UNION ALL
         (SELECT 'pair', from_agent, target, COUNT(DISTINCT send_id) AS sends FROM win GROUP BY from_agent, target
           ORDER BY sends DESC, from_agent, target LIMIT ${MAIL_PAIRS})`,
        [since],
      );
      const hours = rows.filter((row) => row.kind === 'hour').map((row) => ({ hour: row.a, sends: Number(row.sends) }));
      hours.sort((left, right) => (left.hour < right.hour ? -1 : 1));
      const pairs = rows.filter((row) => row.kind === 'pair').map((row) => ({ from: row.a, to: row.b ?? '', sends: Number(row.sends) }));
      return { hours, pairs };
    },
  };
}
