/** The outbox on PostgreSQL: events queued in their sends' and publishes' transactions, taken with SKIP LOCKED under a lease, settled. */
import { timeOrderedId } from '../../model/ids.js';
import type { MessageRecord, OutboundIntake, OutboxRecord, OutletRecord } from '../../model/records.js';
import type { OutboxCounts, OutboxPort } from '../ports/outbox.js';
import { MESSAGE_FIELDS, OUTBOX_FIELDS, selectList } from '../shared/columns.js';
import { INTAKE_ROUND, intakeMessageIds, intakeText, LANE_LOOKAHEAD, outboxRows, parseIntake } from '../shared/outbox-intake.js';
import type { PostgresPool, Query } from './pool.js';

const COLUMNS = selectList(OUTBOX_FIELDS);
const MESSAGE_COLUMNS = selectList(MESSAGE_FIELDS);
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

/** A transaction's events, inside it: one intake row for them all. */
export async function intakeWith(query: Query, entries: OutboundIntake[]): Promise<void> {
  if (entries.length > 0) await query('INSERT INTO outbox_intake (intake_id, events) VALUES ($1, $2)', [timeOrderedId(), intakeText(entries)]);
}

/**
 * The intake made into outbox rows, a round at a time, before the outbox is read or taken from (and
 * before a prune). Rows another process is making already are skipped: they appear when it commits,
 * and its NOTIFY says so.
 */
export async function expandIntake(pool: PostgresPool, rounds = Number.POSITIVE_INFINITY): Promise<void> {
  // Most reads find it empty: answered without a transaction.
  for (let round = 0; round < rounds && (await pool.one('SELECT 1 AS found FROM outbox_intake LIMIT 1')) !== undefined; round++) {
    const made = await pool.transaction([], async (query) => {
      const rows = (
        await query(
          `DELETE FROM outbox_intake WHERE intake_id IN (SELECT intake_id FROM outbox_intake ORDER BY intake_id LIMIT $1 FOR UPDATE SKIP LOCKED)
           RETURNING intake_id AS "intakeId", events`,
          [INTAKE_ROUND],
        )
      ).rows as Array<{ intakeId: string; events: string }>;
      if (rows.length === 0) return 0;
      rows.sort((a, b) => (a.intakeId < b.intakeId ? -1 : 1));
      const live = new Set((await outletsWith(query)).map((outlet) => outlet.name));
      const entries = rows.flatMap((row) => parseIntake(row.events));
      const found = (await query(`SELECT ${MESSAGE_COLUMNS} FROM messages WHERE message_id = ANY($1::text[])`, [intakeMessageIds(entries)])).rows as MessageRecord[];
      await queueWith(query, outboxRows(entries, live, new Map(found.map((record) => [record.messageId, record]))));
      return rows.length;
    });
    if (made === 0) return;
  }
}

export function postgresOutbox(pool: PostgresPool): OutboxPort {
  return {
    async queueOutbound(entries) {
      if (entries.length > 0) await pool.transaction([], (query) => queueWith(query, entries));
    },

    async claimOutbox(now, leaseUntil, limit, busy = []) {
      if (limit <= 0) return [];
      // A round at a time: a backlog is made into rows over several claims, never all at once in one.
      await expandIntake(pool, 1);
      // Each lane through its index: LATERAL takes up to `limit` of each integration not held.
      const rows = await pool.read<OutboxRecord>(
        `UPDATE integration_outbox SET lease_until = $2, attempts = attempts + 1
         WHERE event_id IN (
           SELECT taken.event_id FROM integrations i
           CROSS JOIN LATERAL (
             SELECT event_id FROM integration_outbox o
             WHERE o.integration = i.name AND o.state = 'queued' AND o.next_at <= $1 AND (o.lease_until IS NULL OR o.lease_until <= $1)
             ORDER BY o.next_at, o.event_id LIMIT $3 FOR UPDATE SKIP LOCKED) taken
           WHERE i.on_event IS NOT NULL AND (i.held_until IS NULL OR i.held_until <= $1) AND NOT (i.name = ANY($4::text[])))
         RETURNING ${COLUMNS}`,
        [now, leaseUntil, limit, [...busy]],
      );
      return rows.sort((a, b) => (a.nextAt < b.nextAt ? -1 : a.nextAt > b.nextAt ? 1 : a.eventId < b.eventId ? -1 : 1));
    },

    async finishOutbox(eventId, outcome, forgetBefore) {
      return pool.transaction([], async (query) => {
        const found = (
          await query(`SELECT integration, message_id AS "messageId" FROM integration_outbox WHERE event_id = $1 AND state = 'queued' FOR UPDATE`, [eventId])
        ).rows as Array<{ integration: string; messageId: string | null }>;
        const row = found[0];
        if (row === undefined) return false;
        if (outcome.state === 'queued') {
          await query('UPDATE integration_outbox SET next_at = $2, lease_until = NULL, last_status = $3, last_error = $4 WHERE event_id = $1', [eventId, outcome.nextAt, outcome.status, outcome.error]);
          await query('UPDATE integrations SET held_until = $2 WHERE name = $1 AND (held_until IS NULL OR held_until < $2)', [row.integration, outcome.nextAt]);
          return true;
        }
        const error = outcome.state === 'failed' ? outcome.error : null;
        await query('UPDATE integration_outbox SET state = $2, lease_until = NULL, last_status = $3, last_error = $4, finished_at = $5 WHERE event_id = $1', [eventId, outcome.state, outcome.status, error, outcome.at]);
        if (outcome.state === 'delivered') {
          await query('UPDATE integrations SET held_until = NULL WHERE name = $1 AND held_until IS NOT NULL', [row.integration]);
          if (row.messageId !== null) await query("UPDATE messages SET delivered_at = $1, delivered_via = 'webhook' WHERE message_id = $2 AND delivered_at IS NULL", [outcome.at, row.messageId]);
          await query("DELETE FROM integration_outbox WHERE state = 'delivered' AND finished_at < $1", [forgetBefore]);
        }
        return true;
      });
    },

    async outbox(filter) {
      if (filter.limit <= 0) return [];
      await expandIntake(pool);
      return pool.read<OutboxRecord>(
        `SELECT ${COLUMNS} FROM integration_outbox
         WHERE ($1::text IS NULL OR integration = $1) AND ($2::text IS NULL OR state = $2)
         ORDER BY created_at DESC, event_id DESC LIMIT $3`,
        [filter.integration ?? null, filter.state ?? null, filter.limit],
      );
    },

    async outboxCounts() {
      await expandIntake(pool);
      return pool.read<OutboxCounts>(
        `SELECT integration,
                COUNT(*) FILTER (WHERE state = 'queued')::int AS queued, COUNT(*) FILTER (WHERE state = 'failed')::int AS failed,
                COUNT(*) FILTER (WHERE state = 'delivered')::int AS delivered,
                MAX(finished_at) FILTER (WHERE state = 'delivered') AS "lastDeliveredAt"
         FROM integration_outbox GROUP BY integration ORDER BY integration`,
      );
    },

    async retryOutbox(eventId, now) {
      return pool.transaction([], async (query) => {
        const retried = (
          await query(
            `UPDATE integration_outbox SET state = 'queued', attempts = 0, next_at = $2, lease_until = NULL, finished_at = NULL
             WHERE event_id = $1 AND state IN ('queued', 'failed') RETURNING integration`,
            [eventId, now],
          )
        ).rows as Array<{ integration: string }>;
        if (retried[0] === undefined) return false;
        await query('UPDATE integrations SET held_until = NULL WHERE name = $1', [retried[0].integration]);
        return true;
      });
    },

    async nextOutboxDue(busy = []) {
      // Each lane's earliest events through its index, rather than every queued event: a backlog costs this nothing.
      // Events still in the intake are due once any integration is free (a claim makes them into rows).
      return (
        (
          await pool.one<{ at: string | null }>(
            `SELECT MIN(at) AS at FROM (
               SELECT GREATEST(COALESCE(i.held_until, lane.due), lane.due) AS at
               FROM integrations i
               CROSS JOIN LATERAL (
                 SELECT MIN(GREATEST(next_at, COALESCE(lease_until, next_at))) AS due FROM (
                   SELECT next_at, lease_until FROM integration_outbox o
                   WHERE o.integration = i.name AND o.state = 'queued' ORDER BY o.next_at LIMIT $1) earliest) lane
               WHERE i.on_event IS NOT NULL AND lane.due IS NOT NULL AND NOT (i.name = ANY($2::text[]))
               UNION ALL
               SELECT MIN(COALESCE(i.held_until, i.created_at)) FROM integrations i
               WHERE i.on_event IS NOT NULL AND NOT (i.name = ANY($2::text[])) AND EXISTS (SELECT 1 FROM outbox_intake)) due`,
            [LANE_LOOKAHEAD, [...busy]],
          )
        )?.at ?? null
      );
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

    async releaseAttemptLeases() {
      return pool.writeAlone("UPDATE integration_outbox SET lease_until = NULL WHERE state = 'queued' AND lease_until IS NOT NULL", []);
    },

    async workerLease(name) {
      return (await pool.one<{ holder: string; until: string }>('SELECT holder, until FROM worker_leases WHERE name = $1', [name])) ?? null;
    },

    async releaseWorkerLease(name, holder) {
      await pool.writeAlone('DELETE FROM worker_leases WHERE name = $1 AND holder = $2', [name, holder], false);
    },
  };
}
