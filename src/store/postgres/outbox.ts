/** The outbox on PostgreSQL: events queued in their sends' and publishes' transactions, taken with SKIP LOCKED under a lease, settled. */
import type { OutboxRecord, OutletRecord } from '../../model/records.js';
import type { OutboxCounts, OutboxPort } from '../ports/outbox.js';
import { OUTBOX_FIELDS, selectList } from '../shared/columns.js';
import type { PostgresPool, Query } from './pool.js';

const COLUMNS = selectList(OUTBOX_FIELDS);
const FIELDS = Object.keys(OUTBOX_FIELDS) as Array<keyof OutboxRecord>;
const TYPES: Partial<Record<keyof OutboxRecord, string>> = { attempts: 'int', lastStatus: 'int' };

/** The outbound integrations, inside the caller's transaction: what a send's or a publish's outbound rule reads. */
export async function outletsWith(query: Query): Promise<OutletRecord[]> {
  return (await query('SELECT name, on_event AS "on", channel FROM integrations WHERE on_event IS NOT NULL')).rows as OutletRecord[];
}

/** One statement for any number of events. */
export async function queueWith(query: Query, entries: OutboxRecord[]): Promise<void> {
  if (entries.length === 0) return;
  const arrays = FIELDS.map((field) => entries.map((entry) => entry[field]));
  const casts = FIELDS.map((field, index) => `$${index + 1}::${TYPES[field] ?? 'text'}[]`);
  await query(`INSERT INTO integration_outbox (${FIELDS.map((field) => OUTBOX_FIELDS[field]).join(', ')}) SELECT * FROM unnest(${casts.join(', ')})`, arrays);
}

export function postgresOutbox(pool: PostgresPool): OutboxPort {
  return {
    async queueOutbound(entries) {
      if (entries.length > 0) await pool.transaction([], (query) => queueWith(query, entries));
    },

    async claimOutbox(now, leaseUntil, limit) {
      if (limit <= 0) return [];
      const rows = await pool.read<OutboxRecord>(
        `UPDATE integration_outbox SET lease_until = $2, attempts = attempts + 1
         WHERE event_id IN (
           SELECT event_id FROM integration_outbox
           WHERE state = 'queued' AND next_at <= $1 AND (lease_until IS NULL OR lease_until <= $1)
           ORDER BY next_at, event_id LIMIT $3 FOR UPDATE SKIP LOCKED)
         RETURNING ${COLUMNS}`,
        [now, leaseUntil, limit],
      );
      return rows.sort((a, b) => (a.nextAt < b.nextAt ? -1 : a.nextAt > b.nextAt ? 1 : a.eventId < b.eventId ? -1 : 1));
    },

    async finishOutbox(eventId, outcome, forgetBefore) {
      return pool.transaction([], async (query) => {
        const found = (await query(`SELECT message_id AS "messageId" FROM integration_outbox WHERE event_id = $1 AND state = 'queued' FOR UPDATE`, [eventId])).rows as Array<{ messageId: string | null }>;
        const row = found[0];
        if (row === undefined) return false;
        if (outcome.state === 'queued') {
          await query('UPDATE integration_outbox SET next_at = $2, lease_until = NULL, last_status = $3, last_error = $4 WHERE event_id = $1', [eventId, outcome.nextAt, outcome.status, outcome.error]);
          return true;
        }
        const error = outcome.state === 'failed' ? outcome.error : null;
        await query('UPDATE integration_outbox SET state = $2, lease_until = NULL, last_status = $3, last_error = $4, finished_at = $5 WHERE event_id = $1', [eventId, outcome.state, outcome.status, error, outcome.at]);
        if (outcome.state === 'delivered') {
          if (row.messageId !== null) await query("UPDATE messages SET delivered_at = $1, delivered_via = 'webhook' WHERE message_id = $2 AND delivered_at IS NULL", [outcome.at, row.messageId]);
          await query("DELETE FROM integration_outbox WHERE state = 'delivered' AND finished_at < $1", [forgetBefore]);
        }
        return true;
      });
    },

    async outbox(filter) {
      if (filter.limit <= 0) return [];
      return pool.read<OutboxRecord>(
        `SELECT ${COLUMNS} FROM integration_outbox
         WHERE ($1::text IS NULL OR integration = $1) AND ($2::text IS NULL OR state = $2)
         ORDER BY created_at DESC, event_id DESC LIMIT $3`,
        [filter.integration ?? null, filter.state ?? null, filter.limit],
      );
    },

    async outboxCounts() {
      return pool.read<OutboxCounts>(
        `SELECT integration,
                COUNT(*) FILTER (WHERE state = 'queued')::int AS queued, COUNT(*) FILTER (WHERE state = 'failed')::int AS failed,
                COUNT(*) FILTER (WHERE state = 'delivered')::int AS delivered,
                MAX(finished_at) FILTER (WHERE state = 'delivered') AS "lastDeliveredAt"
         FROM integration_outbox GROUP BY integration ORDER BY integration`,
      );
    },

    async retryOutbox(eventId, now) {
      return (
        (await pool.writeAlone(
          `UPDATE integration_outbox SET state = 'queued', attempts = 0, next_at = $2, lease_until = NULL, finished_at = NULL
           WHERE event_id = $1 AND state IN ('queued', 'failed')`,
          [eventId, now],
        )) > 0
      );
    },

    async nextOutboxDue() {
      return (await pool.one<{ at: string | null }>("SELECT MIN(GREATEST(next_at, COALESCE(lease_until, next_at))) AS at FROM integration_outbox WHERE state = 'queued'"))?.at ?? null;
    },

    async holdWorkerLease(name, holder, now, until, replacing = null) {
      const current = await pool.one<{ holder: string; until: string }>('SELECT holder, until FROM worker_leases WHERE name = $1', [name]);
      if (current !== undefined && current.holder !== holder && current.holder !== replacing && current.until > now) return false;
      return (
        (await pool.writeAlone(
          `INSERT INTO worker_leases (name, holder, until) VALUES ($1, $2, $3)
           ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, until = excluded.until
           WHERE worker_leases.holder = excluded.holder OR worker_leases.until <= $4 OR worker_leases.holder = $5::text`,
          [name, holder, until, now, replacing],
          false,
        )) > 0
      );
    },

    async workerLease(name) {
      return (await pool.one<{ holder: string; until: string }>('SELECT holder, until FROM worker_leases WHERE name = $1', [name])) ?? null;
    },

    async releaseWorkerLease(name, holder) {
      await pool.writeAlone('DELETE FROM worker_leases WHERE name = $1 AND holder = $2', [name, holder], false);
    },
  };
}
