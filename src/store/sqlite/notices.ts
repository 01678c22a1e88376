/** Notices on SQLite. */
import { lazy } from '../shared/lazy.js';
import type { NoticeCandidate, NoticeRecord, Severity } from '../../model/notices.js';
import type { ChannelCount, DueNoticesQuery, NoticeListing, NoticesPort } from '../ports/notices.js';
import { columnList, NOTICE_FIELDS, selectList, valuesList } from '../shared/columns.js';
import { isCriticalOnly, severityRankSql } from '../shared/notices.js';
import type { Params, SqliteConnection } from './driver.js';
import { intakeNow, outletsNow } from './outbox.js';

const NOTICE_COLUMNS = lazy(() => selectList(NOTICE_FIELDS, 'n'));
const SEVERITY_RANK = lazy(() => severityRankSql('n.severity'));

/** Store a notice (inside the caller's transaction). */
export function insertNotice(db: SqliteConnection, notice: NoticeRecord): void {
  db.run(`INSERT INTO notices (${columnList(NOTICE_FIELDS)}) VALUES (${valuesList(NOTICE_FIELDS, (field) => `@${field}`)})`, { ...notice });
}

/** Remove a notice and its receipts (inside the caller's transaction). */
export function deleteNotice(db: SqliteConnection, noticeId: string): void {
  db.run('DELETE FROM notice_receipts WHERE notice_id = ?', [noticeId]);
  db.run('DELETE FROM notices WHERE notice_id = ?', [noticeId]);
}

/** A channel's notices, oldest first. */
export function channelNotices(db: SqliteConnection, channel: string | null): NoticeRecord[] {
  return db.all<NoticeRecord>(`SELECT ${NOTICE_COLUMNS()} FROM notices n WHERE n.channel IS ? ORDER BY n.created_at, n.notice_id`, [channel]);
}

// What is due for one session (QUERIES.md, "Notices due to a session"). Candidates are read channel by
// channel through the channel index (a channel holds a few dozen notices, the store maybe thousands);
// before a tool call, with every channel, only criticals, through the severity index.
function dueWhere(criticalOnly: boolean, all: boolean, withAlso = false): string {
  const critical = withAlso ? "(n.severity = 'critical' OR n.notice_id IN (SELECT value FROM json_each(@also)))" : "n.severity = 'critical'";
  const severity = criticalOnly ? critical : '1';
  const live = `n.expires_at > @now AND ${severity}`;
  const candidates = all
    ? `SELECT * FROM notices n WHERE ${live}`
    : `SELECT n.* FROM notices n WHERE n.channel IS NULL AND ${live}
       UNION ALL
       SELECT n.* FROM json_each(@channels) c CROSS JOIN notices n ON n.channel = c.value WHERE ${live}`;
  return `FROM (${candidates}) n
    LEFT JOIN notice_receipts r ON r.notice_id = n.notice_id AND r.session = @session
    WHERE r.acknowledged_at IS NULL AND NOT (n.severity = 'info' AND r.delivered_at IS NOT NULL)`;
}

function due(query: DueNoticesQuery): { from: string; params: Params } {
  const criticalOnly = isCriticalOnly(query);
  const params: Record<string, string | number | null> = { session: query.session, now: query.now };
  if (!query.all) params.channels = JSON.stringify(query.channels);
  const withAlso = criticalOnly && (query.alsoIds?.length ?? 0) > 0;
  if (withAlso) params.also = JSON.stringify(query.alsoIds);
  return { from: dueWhere(criticalOnly, query.all, withAlso), params };
}

function countDue(db: SqliteConnection, query: DueNoticesQuery): Record<Severity, number> {
  const { from, params } = due(query);
  const totalDue: Record<Severity, number> = { critical: 0, alert: 0, info: 0 };
  for (const { severity, n } of db.all<{ severity: Severity; n: number }>(`SELECT n.severity, COUNT(*) AS n ${from} GROUP BY n.severity`, params)) totalDue[severity] = n;
  return totalDue;
}

function readDue(db: SqliteConnection, query: DueNoticesQuery, limit: number): NoticeCandidate[] {
  const { from, params } = due(query);
  return db.all<NoticeCandidate>(
    `SELECT ${NOTICE_COLUMNS()}, r.delivered_at AS "deliveredAt" ${from}
     ORDER BY ${SEVERITY_RANK()}, n.priority DESC, n.created_at, n.notice_id LIMIT @limit`,
    { ...params, limit },
  );
}

export function sqliteNotices(db: SqliteConnection): NoticesPort {
  return {
    async publishNotice(input) {
      return db.immediate(() => {
        const notice = input.notice;
        // Expired notices are nobody's any more: they go at the next publish, with their receipts.
        const expired = db.all<NoticeRecord>(`SELECT ${NOTICE_COLUMNS()} FROM notices n WHERE n.expires_at <= ?`, [input.expireBefore]);
        for (const old of expired) deleteNotice(db, old.noticeId);
        insertNotice(db, notice);
        const live = db.all<NoticeRecord>(`SELECT ${NOTICE_COLUMNS()} FROM notices n WHERE n.channel IS @channel`, { channel: notice.channel });
        const evicted = input.evict(live);
        for (const victim of evicted) deleteNotice(db, victim.noticeId);
        if (input.outbound !== undefined) {
          const outlets = outletsNow(db);
          if (outlets.length > 0) intakeNow(db, input.outbound(notice, outlets));
        }
        return { evicted, expired };
      });
    },

    async deliverNotices(input) {
      const { query } = input;
      // Most deliveries write nothing (no info notice shown): they read without the write lock.
      return db.readMostly(() => {
        const totalDue = countDue(db, query);
        const limit = input.readLimit(totalDue);
        const selection = input.decide(limit > 0 && totalDue.critical + totalDue.alert + totalDue.info > 0 ? readDue(db, query, limit) : [], totalDue);
        for (const noticeId of selection.receipts) {
          db.run(
            `INSERT INTO notice_receipts (notice_id, session, delivered_at) VALUES (@id, @session, @now)
             ON CONFLICT(notice_id, session) DO UPDATE SET delivered_at = COALESCE(delivered_at, excluded.delivered_at)`,
            { id: noticeId, session: query.session, now: query.now },
          );
        }
        return selection;
      });
    },

    async anyNoticeDue(query) {
      const { from, params } = due(query);
      return db.all(`SELECT 1 ${from} LIMIT 1`, params).length > 0;
    },

    async notices(filter) {
      const conditions: string[] = [];
      const params: Record<string, string | number | null> = { now: filter.now };
      if (!filter.includeExpired) conditions.push('n.expires_at > @now');
      if (filter.channel !== undefined) {
        conditions.push('n.channel IS @channel');
        params.channel = filter.channel;
      }
      return db.all<NoticeListing>(
        `SELECT ${NOTICE_COLUMNS()},
           (SELECT COUNT(*) FROM notice_receipts r WHERE r.notice_id = n.notice_id AND r.delivered_at IS NOT NULL) AS "deliveredTo",
           (SELECT COUNT(*) FROM notice_receipts r WHERE r.notice_id = n.notice_id AND r.acknowledged_at IS NOT NULL) AS "acknowledgedBy"
         FROM notices n ${conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : ''}
         ORDER BY n.channel IS NOT NULL, n.channel, ${SEVERITY_RANK()}, n.priority DESC, n.created_at`,
        params,
      );
    },

    async channelCounts(now) {
      return db.all<ChannelCount>(
        `SELECT n.channel, COUNT(*) AS total, SUM(n.severity = 'critical') AS critical, SUM(n.severity = 'alert') AS alert,
                SUM(n.severity = 'info') AS info, MAX(n.expires_at) AS "lastExpiry"
           FROM notices n WHERE n.expires_at > ? GROUP BY n.channel ORDER BY n.channel IS NOT NULL, n.channel`,
        [now],
      );
    },

    async acknowledgeNotice(noticeId, session, now) {
      return db.immediate(() => {
        const notice = db.get<NoticeRecord>(`SELECT ${NOTICE_COLUMNS()} FROM notices n WHERE n.notice_id = ?`, [noticeId]) ?? null;
        if (notice === null) return null;
        db.run(
          `INSERT INTO notice_receipts (notice_id, session, acknowledged_at) VALUES (@id, @session, @now)
           ON CONFLICT(notice_id, session) DO UPDATE SET acknowledged_at = COALESCE(acknowledged_at, excluded.acknowledged_at)`,
          { id: noticeId, session, now },
        );
        return notice;
      });
    },

    async clearNotices(target) {
      return db.immediate(() => {
        let removed: NoticeRecord[];
        if (target.kind === 'id') removed = db.all<NoticeRecord>(`SELECT ${NOTICE_COLUMNS()} FROM notices n WHERE n.notice_id = ?`, [target.noticeId]);
        else if (target.kind === 'channel') removed = db.all<NoticeRecord>(`SELECT ${NOTICE_COLUMNS()} FROM notices n WHERE n.channel IS ?`, [target.channel]);
        else removed = db.all<NoticeRecord>(`SELECT ${NOTICE_COLUMNS()} FROM notices n`);
        for (const notice of removed) deleteNotice(db, notice.noticeId);
        return removed;
      });
    },
  };
}
