/** Notices on PostgreSQL: a session's lock serializes its deliveries, a channel's its publishes. */
import type { NoticeCandidate, NoticeRecord, Severity } from '../../model/notices.js';
import type { ChannelCount, DueNoticesQuery, NoticeListing, NoticesPort } from '../ports/notices.js';
import { columnList, NOTICE_FIELDS, selectList, valuesList } from '../shared/columns.js';
import { isCriticalOnly, severityRankSql } from '../shared/notices.js';
import { LOCK, type PostgresPool, type Query } from './pool.js';
import { intakeWith, outletsWith } from './outbox.js';

const NOTICE_COLUMNS = selectList(NOTICE_FIELDS, 'n');
const SEVERITY_RANK = severityRankSql('n.severity');

/** Store a notice (inside the caller's transaction). */
export async function insertNotice(query: Query, notice: NoticeRecord): Promise<void> {
  await query(
    `INSERT INTO notices (${columnList(NOTICE_FIELDS)}) VALUES (${valuesList(NOTICE_FIELDS, (_, index) => `$${index + 1}`)})`,
    Object.keys(NOTICE_FIELDS).map((field) => notice[field as keyof NoticeRecord]),
  );
}

/** Remove notices and their receipts (inside the caller's transaction). */
export async function deleteNotices(query: Query, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await query('DELETE FROM notice_receipts WHERE notice_id = ANY($1::text[])', [ids]);
  await query('DELETE FROM notices WHERE notice_id = ANY($1::text[])', [ids]);
}

/** A channel's notices, oldest first. */
export async function channelNotices(query: Query, channel: string | null): Promise<NoticeRecord[]> {
  return (await query(`SELECT ${NOTICE_COLUMNS} FROM notices n WHERE n.channel IS NOT DISTINCT FROM $1 ORDER BY n.created_at, n.notice_id`, [channel])).rows as NoticeRecord[];
}

/** The due query (QUERIES.md): $1 session, $2 now, then the channels and the ids also due, when the query needs them. */
function dueFrom(query: DueNoticesQuery): { sql: string; params: unknown[] } {
  const params: unknown[] = [query.session, query.now];
  const criticalOnly = isCriticalOnly(query);
  let severity = 'TRUE';
  if (criticalOnly && (query.alsoIds?.length ?? 0) > 0) {
    params.push(query.alsoIds);
    severity = `(n.severity = 'critical' OR n.notice_id = ANY($${params.length}::text[]))`;
  } else if (criticalOnly) severity = "n.severity = 'critical'";
  const live = `n.expires_at > $2 AND ${severity}`;
  let candidates = `SELECT n.* FROM notices n WHERE ${live}`;
  if (!query.all) {
    params.push(query.channels);
    candidates = `SELECT n.* FROM notices n WHERE n.channel IS NULL AND ${live}
       UNION ALL
       SELECT n.* FROM notices n WHERE n.channel = ANY($${params.length}::text[]) AND ${live}`;
  }
  return {
    sql: `FROM (${candidates}) n
      LEFT JOIN notice_receipts r ON r.notice_id = n.notice_id AND r.session = $1
      WHERE r.acknowledged_at IS NULL AND NOT (n.severity = 'info' AND r.delivered_at IS NOT NULL)`,
    params,
  };
}

export function postgresNotices(pool: PostgresPool): NoticesPort {
  return {
    async publishNotice(input) {
      return pool.transaction([[LOCK.channel, input.notice.channel ?? '']], async (query) => {
        const expired = (await query(`SELECT ${NOTICE_COLUMNS} FROM notices n WHERE n.expires_at <= $1 ORDER BY n.created_at, n.notice_id`, [input.expireBefore])).rows as NoticeRecord[];
        await deleteNotices(query, expired.map((notice) => notice.noticeId));
        await insertNotice(query, input.notice);
        const evicted = input.evict(await channelNotices(query, input.notice.channel));
        await deleteNotices(query, evicted.map((notice) => notice.noticeId));
        if (input.outbound !== undefined) {
          const outlets = await outletsWith(query);
          if (outlets.length > 0) await intakeWith(query, input.outbound(input.notice, outlets));
        }
        return { evicted, expired };
      });
    },

    async deliverNotices(input) {
      const { query: due } = input;
      const from = dueFrom(due);
      // Most hooks find nothing due: one statement (a transaction of its own) says so, and decides.
      const counts = await pool.read<{ severity: Severity; n: number }>(`SELECT n.severity, COUNT(*)::int AS n ${from.sql} GROUP BY n.severity`, from.params);
      if (counts.length === 0) return input.decide([], { critical: 0, alert: 0, info: 0 });
      return pool.transaction(
        [[LOCK.notices, due.session]],
        async (query) => {
          const totalDue: Record<Severity, number> = { critical: 0, alert: 0, info: 0 };
          const counted = (await query(`SELECT n.severity, COUNT(*)::int AS n ${from.sql} GROUP BY n.severity`, from.params)).rows as Array<{ severity: Severity; n: number }>;
          for (const { severity, n } of counted) totalDue[severity] = n;
          const limit = input.readLimit(totalDue);
          const rows =
            limit > 0 && totalDue.critical + totalDue.alert + totalDue.info > 0
              ? ((
                  await query(
                    `SELECT ${NOTICE_COLUMNS}, r.delivered_at AS "deliveredAt" ${from.sql}
                     ORDER BY ${SEVERITY_RANK}, n.priority DESC, n.created_at, n.notice_id LIMIT $${from.params.length + 1}`,
                    [...from.params, limit],
                  )
                ).rows as NoticeCandidate[])
              : [];
          const selection = input.decide(rows, totalDue);
          if (selection.receipts.length > 0) {
            await query(
              `INSERT INTO notice_receipts (notice_id, session, delivered_at) SELECT id, $2, $3 FROM unnest($1::text[]) AS r(id)
               ON CONFLICT (notice_id, session) DO UPDATE SET delivered_at = COALESCE(notice_receipts.delivered_at, excluded.delivered_at)`,
              [selection.receipts, due.session, due.now],
            );
          }
          return selection;
        },
        false,
      );
    },

    async anyNoticeDue(query) {
      const from = dueFrom(query);
      return (await pool.read(`SELECT 1 ${from.sql} LIMIT 1`, from.params)).length > 0;
    },

    async notices(filter) {
      const conditions: string[] = [];
      const params: unknown[] = [];
      if (!filter.includeExpired) {
        params.push(filter.now);
        conditions.push(`n.expires_at > $${params.length}`);
      }
      if (filter.channel !== undefined) {
        params.push(filter.channel);
        conditions.push(`n.channel IS NOT DISTINCT FROM $${params.length}`);
      }
      return pool.read<NoticeListing>(
        `SELECT ${NOTICE_COLUMNS},
           (SELECT COUNT(*)::int FROM notice_receipts r WHERE r.notice_id = n.notice_id AND r.delivered_at IS NOT NULL) AS "deliveredTo",
           (SELECT COUNT(*)::int FROM notice_receipts r WHERE r.notice_id = n.notice_id AND r.acknowledged_at IS NOT NULL) AS "acknowledgedBy"
         FROM notices n ${conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : ''}
         ORDER BY n.channel IS NOT NULL, n.channel, ${SEVERITY_RANK}, n.priority DESC, n.created_at`,
        params,
      );
    },

    async channelCounts(now) {
      return pool.read<ChannelCount>(
        `SELECT n.channel, COUNT(*)::int AS total, (COUNT(*) FILTER (WHERE n.severity = 'critical'))::int AS critical,
                (COUNT(*) FILTER (WHERE n.severity = 'alert'))::int AS alert, (COUNT(*) FILTER (WHERE n.severity = 'info'))::int AS info,
                MAX(n.expires_at) AS "lastExpiry"
           FROM notices n WHERE n.expires_at > $1 GROUP BY n.channel ORDER BY n.channel IS NOT NULL, n.channel`,
        [now],
      );
    },

    async acknowledgeNotice(noticeId, session, now) {
      return pool.transaction([[LOCK.notices, session]], async (query) => {
        const notice = ((await query(`SELECT ${NOTICE_COLUMNS} FROM notices n WHERE n.notice_id = $1`, [noticeId])).rows[0] as NoticeRecord | undefined) ?? null;
        if (notice === null) return null;
        await query(
          `INSERT INTO notice_receipts (notice_id, session, acknowledged_at) VALUES ($1, $2, $3)
           ON CONFLICT (notice_id, session) DO UPDATE SET acknowledged_at = COALESCE(notice_receipts.acknowledged_at, excluded.acknowledged_at)`,
          [noticeId, session, now],
        );
        return notice;
      });
    },

    async clearNotices(target) {
      return pool.transaction([], async (query) => {
        let removed: NoticeRecord[];
        if (target.kind === 'id') removed = (await query(`SELECT ${NOTICE_COLUMNS} FROM notices n WHERE n.notice_id = $1`, [target.noticeId])).rows as NoticeRecord[];
        else if (target.kind === 'channel') removed = await channelNotices(query, target.channel);
        else removed = (await query(`SELECT ${NOTICE_COLUMNS} FROM notices n ORDER BY n.created_at, n.notice_id`)).rows as NoticeRecord[];
        await deleteNotices(query, removed.map((notice) => notice.noticeId));
        return removed;
      });
    },
  };
}
