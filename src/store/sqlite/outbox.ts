/** The outbox on SQLite: events queued in their sends' and publishes' transactions, taken under a lease, settled. */
import { lazy } from '../shared/lazy.js';
import { timeOrderedId } from '../../model/ids.js';
import type { MessageRecord, OutboundIntake, OutboxRecord, OutletRecord } from '../../model/records.js';
import type { SendInput } from '../ports/mail.js';
import type { OutboxCounts, OutboxPort } from '../ports/outbox.js';
import { columnList, MESSAGE_FIELDS, OUTBOX_FIELDS, selectList, valuesList } from '../shared/columns.js';
import { INTAKE_ROUND, intakeMessageIds, intakeText, LANE_LOOKAHEAD, outboxRows, parseIntake } from '../shared/outbox-intake.js';
import type { SqliteConnection } from './driver.js';

const COLUMNS = lazy(() => selectList(OUTBOX_FIELDS));
const MESSAGE_COLUMNS = lazy(() => selectList(MESSAGE_FIELDS));
const INSERT_SQL = lazy(() => `INSERT INTO integration_outbox (${columnList(OUTBOX_FIELDS)}) VALUES (${valuesList(OUTBOX_FIELDS, (field) => `@${field}`)})`);

/** The outbound integrations, inside the caller's transaction: what a send's or a publish's outbound rule reads. */
export function outletsNow(db: SqliteConnection): OutletRecord[] {
  return db.all<OutletRecord>('SELECT name, on_event AS "on", channel FROM integrations WHERE on_event IS NOT NULL');
}

export function queueNow(db: SqliteConnection, entries: OutboxRecord[]): void {
  for (const entry of entries) db.run(INSERT_SQL(), { ...entry });
}

/** A transaction's events, inside it: one intake row for them all. */
export function intakeNow(db: SqliteConnection, entries: OutboundIntake[]): void {
  if (entries.length > 0) db.run('INSERT INTO outbox_intake (intake_id, events) VALUES (?, ?)', [timeOrderedId(), intakeText(entries)]);
}

/** The events a batch of sends queues: the outbound integrations read once, when a send first asks. */
export class BatchOutbound {
  private outlets: OutletRecord[] | null = null;
  readonly pending: OutboundIntake[] = [];

  constructor(private readonly db: SqliteConnection) {}

  add(input: SendInput, records: MessageRecord[]): void {
    if (input.outbound === undefined || records.length === 0) return;
    this.outlets ??= outletsNow(this.db);
    if (this.outlets.length > 0) this.pending.push(...input.outbound(records, this.outlets));
  }
}

/** The intake made into outbox rows, a round at a time, before the outbox is read or taken from (and before a prune). */
export function expandIntake(db: SqliteConnection, rounds = Number.POSITIVE_INFINITY): void {
  // Most reads find it empty: answered without the write lock.
  for (let round = 0; round < rounds && db.get('SELECT 1 AS found FROM outbox_intake LIMIT 1') !== undefined; round++) {
    db.immediate(() => {
      const rows = db.all<{ intakeId: string; events: string }>('SELECT intake_id AS "intakeId", events FROM outbox_intake ORDER BY intake_id LIMIT ?', [INTAKE_ROUND]);
      const live = new Set(outletsNow(db).map((outlet) => outlet.name));
      const entries = rows.flatMap((row) => parseIntake(row.events));
      const messages = new Map(
        db
          .all<MessageRecord>(`SELECT ${MESSAGE_COLUMNS()} FROM messages WHERE message_id IN (SELECT value FROM json_each(?))`, [JSON.stringify(intakeMessageIds(entries))])
          .map((record) => [record.messageId, record]),
      );
      queueNow(db, outboxRows(entries, live, messages));
      for (const row of rows) db.run('DELETE FROM outbox_intake WHERE intake_id = ?', [row.intakeId]);
    });
  }
}

export function sqliteOutbox(db: SqliteConnection): OutboxPort {
  return {
    async queueOutbound(entries) {
      if (entries.length > 0) db.immediate(() => queueNow(db, entries));
    },

    async claimOutbox(now, leaseUntil, limit, busy = []) {
      if (limit <= 0) return [];
      // A round at a time: a backlog is made into rows over several claims, never all at once in one.
      expandIntake(db, 1);
      return db
        .immediate(() => {
          const lanes = db.all<{ name: string }>('SELECT name FROM integrations WHERE on_event IS NOT NULL AND (held_until IS NULL OR held_until <= ?) ORDER BY name', [now]);
          return lanes
            .filter((lane) => !busy.includes(lane.name))
            .flatMap((lane) =>
            db.all<OutboxRecord>(
              `UPDATE integration_outbox SET lease_until = @leaseUntil, attempts = attempts + 1
               WHERE event_id IN (
                 SELECT event_id FROM integration_outbox
                 WHERE integration = @integration AND state = 'queued' AND next_at <= @now AND (lease_until IS NULL OR lease_until <= @now)
                 ORDER BY next_at, event_id LIMIT @limit)
               RETURNING ${COLUMNS()}`,
              { integration: lane.name, now, leaseUntil, limit },
            ),
          );
        })
        .sort((a, b) => (a.nextAt < b.nextAt ? -1 : a.nextAt > b.nextAt ? 1 : a.eventId < b.eventId ? -1 : 1));
    },

    async finishOutbox(eventId, outcome, forgetBefore) {
      return db.immediate(() => {
        const row = db.get<{ integration: string; messageId: string | null }>(
          `SELECT integration, message_id AS "messageId" FROM integration_outbox WHERE event_id = ? AND state = 'queued'`,
          [eventId],
        );
        if (row === undefined) return false;
        if (outcome.state === 'queued') {
          db.run('UPDATE integration_outbox SET next_at = ?, lease_until = NULL, last_status = ?, last_error = ? WHERE event_id = ?', [outcome.nextAt, outcome.status, outcome.error, eventId]);
          db.run('UPDATE integrations SET held_until = ? WHERE name = ? AND (held_until IS NULL OR held_until < ?)', [outcome.nextAt, row.integration, outcome.nextAt]);
          return true;
        }
        const error = outcome.state === 'failed' ? outcome.error : null;
        db.run('UPDATE integration_outbox SET state = ?, lease_until = NULL, last_status = ?, last_error = ?, finished_at = ? WHERE event_id = ?', [outcome.state, outcome.status, error, outcome.at, eventId]);
        if (outcome.state === 'delivered') {
          db.run('UPDATE integrations SET held_until = NULL WHERE name = ? AND held_until IS NOT NULL', [row.integration]);
          if (row.messageId !== null) db.run("UPDATE messages SET delivered_at = ?, delivered_via = 'webhook' WHERE message_id = ? AND delivered_at IS NULL", [outcome.at, row.messageId]);
          db.run("DELETE FROM integration_outbox WHERE state = 'delivered' AND finished_at < ?", [forgetBefore]);
        }
        return true;
      });
    },

    async outbox(filter) {
      if (filter.limit <= 0) return [];
      expandIntake(db);
      return db.all<OutboxRecord>(
        `SELECT ${COLUMNS()} FROM integration_outbox
         WHERE (@integration IS NULL OR integration = @integration) AND (@state IS NULL OR state = @state)
         ORDER BY created_at DESC, event_id DESC LIMIT @limit`,
        { integration: filter.integration ?? null, state: filter.state ?? null, limit: filter.limit },
      );
    },

    async outboxCounts() {
      expandIntake(db);
      return db.all<OutboxCounts>(
        `SELECT integration,
                SUM(state = 'queued') AS queued, SUM(state = 'failed') AS failed, SUM(state = 'delivered') AS delivered,
                MAX(CASE WHEN state = 'delivered' THEN finished_at END) AS "lastDeliveredAt"
         FROM integration_outbox GROUP BY integration ORDER BY integration`,
      );
    },

    async retryOutbox(eventId, now) {
      return db.immediate(() => {
        const row = db.get<{ integration: string }>("SELECT integration FROM integration_outbox WHERE event_id = ? AND state IN ('queued', 'failed')", [eventId]);
        if (row === undefined) return false;
        db.run("UPDATE integration_outbox SET state = 'queued', attempts = 0, next_at = ?, lease_until = NULL, finished_at = NULL WHERE event_id = ?", [now, eventId]);
        db.run('UPDATE integrations SET held_until = NULL WHERE name = ?', [row.integration]);
        return true;
      });
    },

    async nextOutboxDue(busy = []) {
      // Each lane's earliest events through its index, rather than every queued event: a backlog costs this nothing.
      // Events still in the intake are due once any integration is free (a claim makes them into rows).
      return (
        db.get<{ at: string | null }>(
          `SELECT MIN(at) AS at FROM (
             SELECT MAX(COALESCE(i.held_until, ''), (
                      SELECT MIN(MAX(next_at, COALESCE(lease_until, next_at))) FROM (
                        SELECT next_at, lease_until FROM integration_outbox o
                        WHERE o.integration = i.name AND o.state = 'queued' ORDER BY o.next_at LIMIT @lookahead))) AS at
             FROM integrations i WHERE i.on_event IS NOT NULL AND i.name NOT IN (SELECT value FROM json_each(@busy))
             UNION ALL
             SELECT MIN(COALESCE(i.held_until, i.created_at)) FROM integrations i
             WHERE i.on_event IS NOT NULL AND i.name NOT IN (SELECT value FROM json_each(@busy)) AND EXISTS (SELECT 1 FROM outbox_intake))`,
          { lookahead: LANE_LOOKAHEAD, busy: JSON.stringify(busy) },
        )?.at ?? null
      );
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

    async releaseAttemptLeases() {
      return db.immediate(() => db.run("UPDATE integration_outbox SET lease_until = NULL WHERE state = 'queued' AND lease_until IS NOT NULL").changes);
    },

    async workerLease(name) {
      return db.get<{ holder: string; until: string }>('SELECT holder, until FROM worker_leases WHERE name = ?', [name]) ?? null;
    },

    async releaseWorkerLease(name, holder) {
      db.immediate(() => db.run('DELETE FROM worker_leases WHERE name = ? AND holder = ?', [name, holder]));
    },
  };
}
