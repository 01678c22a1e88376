/** The outbox on SQLite: events queued in their sends' and publishes' transactions, taken under a lease, settled. */
import type { OutboxRecord, OutletRecord } from '../../model/records.js';
import type { OutboxCounts, OutboxPort } from '../ports/outbox.js';
import { columnList, OUTBOX_FIELDS, selectList, valuesList } from '../shared/columns.js';
import type { SqliteConnection } from './driver.js';

const COLUMNS = selectList(OUTBOX_FIELDS);
const INSERT = `INSERT INTO integration_outbox (${columnList(OUTBOX_FIELDS)}) VALUES (${valuesList(OUTBOX_FIELDS, (field) => `@${field}`)})`;

/** The outbound integrations, inside the caller's transaction: what a send's or a publish's outbound rule reads. */
export function outletsNow(db: SqliteConnection): OutletRecord[] {
  return db.all<OutletRecord>('SELECT name, on_event AS "on", channel FROM integrations WHERE on_event IS NOT NULL');
}

export function queueNow(db: SqliteConnection, entries: OutboxRecord[]): void {
  for (const entry of entries) db.run(INSERT, { ...entry });
}

export function sqliteOutbox(db: SqliteConnection): OutboxPort {
  return {
    async queueOutbound(entries) {
      if (entries.length > 0) db.immediate(() => queueNow(db, entries));
    },

    async claimOutbox(now, leaseUntil, limit) {
      if (limit <= 0) return [];
      return db.immediate(() =>
        db.all<OutboxRecord>(
          `UPDATE integration_outbox SET lease_until = @leaseUntil, attempts = attempts + 1
           WHERE event_id IN (
             SELECT event_id FROM integration_outbox
             WHERE state = 'queued' AND next_at <= @now AND (lease_until IS NULL OR lease_until <= @now)
             ORDER BY next_at, event_id LIMIT @limit)
           RETURNING ${COLUMNS}`,
          { now, leaseUntil, limit },
        ),
      ).sort((a, b) => (a.nextAt < b.nextAt ? -1 : a.nextAt > b.nextAt ? 1 : a.eventId < b.eventId ? -1 : 1));
    },

    async finishOutbox(eventId, outcome, forgetBefore) {
      return db.immediate(() => {
        const row = db.get<{ messageId: string | null }>(`SELECT message_id AS "messageId" FROM integration_outbox WHERE event_id = ? AND state = 'queued'`, [eventId]);
        if (row === undefined) return false;
        if (outcome.state === 'queued') {
          db.run('UPDATE integration_outbox SET next_at = ?, lease_until = NULL, last_status = ?, last_error = ? WHERE event_id = ?', [outcome.nextAt, outcome.status, outcome.error, eventId]);
          return true;
        }
        const error = outcome.state === 'failed' ? outcome.error : null;
        db.run('UPDATE integration_outbox SET state = ?, lease_until = NULL, last_status = ?, last_error = ?, finished_at = ? WHERE event_id = ?', [outcome.state, outcome.status, error, outcome.at, eventId]);
        if (outcome.state === 'delivered') {
          if (row.messageId !== null) db.run("UPDATE messages SET delivered_at = ?, delivered_via = 'webhook' WHERE message_id = ? AND delivered_at IS NULL", [outcome.at, row.messageId]);
          db.run("DELETE FROM integration_outbox WHERE state = 'delivered' AND finished_at < ?", [forgetBefore]);
        }
        return true;
      });
    },

    async outbox(filter) {
      if (filter.limit <= 0) return [];
      return db.all<OutboxRecord>(
        `SELECT ${COLUMNS} FROM integration_outbox
         WHERE (@integration IS NULL OR integration = @integration) AND (@state IS NULL OR state = @state)
         ORDER BY created_at DESC, event_id DESC LIMIT @limit`,
        { integration: filter.integration ?? null, state: filter.state ?? null, limit: filter.limit },
      );
    },

    async outboxCounts() {
      return db.all<OutboxCounts>(
        `SELECT integration,
                SUM(state = 'queued') AS queued, SUM(state = 'failed') AS failed, SUM(state = 'delivered') AS delivered,
                MAX(CASE WHEN state = 'delivered' THEN finished_at END) AS "lastDeliveredAt"
         FROM integration_outbox GROUP BY integration ORDER BY integration`,
      );
    },

    async retryOutbox(eventId, now) {
      return db.immediate(
        () =>
          db.run(
            `UPDATE integration_outbox SET state = 'queued', attempts = 0, next_at = ?, lease_until = NULL, finished_at = NULL
             WHERE event_id = ? AND state IN ('queued', 'failed')`,
            [now, eventId],
          ).changes > 0,
      );
    },

    async nextOutboxDue() {
      return db.get<{ at: string | null }>("SELECT MIN(MAX(next_at, COALESCE(lease_until, next_at))) AS at FROM integration_outbox WHERE state = 'queued'")?.at ?? null;
    },

    async holdWorkerLease(name, holder, now, until, replacing = null) {
      // Most asks find another holder's lease running: answered without the write lock.
      const current = db.get<{ holder: string; until: string }>('SELECT holder, until FROM worker_leases WHERE name = ?', [name]);
      if (current !== undefined && current.holder !== holder && current.holder !== replacing && current.until > now) return false;
      return db.immediate(
        () =>
          db.run(
            `INSERT INTO worker_leases (name, holder, until) VALUES (@name, @holder, @until)
             ON CONFLICT(name) DO UPDATE SET holder = excluded.holder, until = excluded.until
             WHERE worker_leases.holder = excluded.holder OR worker_leases.until <= @now OR worker_leases.holder = @replacing`,
            { name, holder, until, now, replacing },
          ).changes > 0,
      );
    },

    async workerLease(name) {
      return db.get<{ holder: string; until: string }>('SELECT holder, until FROM worker_leases WHERE name = ?', [name]) ?? null;
    },

    async releaseWorkerLease(name, holder) {
      db.immediate(() => db.run('DELETE FROM worker_leases WHERE name = ? AND holder = ?', [name, holder]));
    },
  };
}
