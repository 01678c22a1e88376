/**
 * The inbox on PostgreSQL: a read or a lease holds its repo's inbox lock and row locks on the copies it
 * claims, so a claim is decided exactly once across processes; an empty inbox is answered without either.
 */
import { readRecord } from '../../model/receipts.js';
import type { MessageRecord } from '../../model/records.js';
import type { FanoutCopy, InboxDecision, InboxPort, InboxQuery, InboxSelection, LeaseOutcome } from '../ports/inbox.js';
import { FANOUT_COPY_FIELDS, MESSAGE_FIELDS, selectList } from '../shared/columns.js';
import { INBOX_FILTERS, inboxFilterOf, inboxParties, inboxSelect, inboxUnion, midTurnLook, nothingRead, type InboxFilter, type InboxPlaceholders } from '../shared/inbox.js';
import { LOCK, notifySql, type PostgresPool, type Query } from './pool.js';

const MESSAGE_COLUMNS = selectList(MESSAGE_FIELDS);
const FANOUT_COPY_COLUMNS = selectList(FANOUT_COPY_FIELDS);

/** $1 now, $2 the reader, $3 its repo, $4 its shared address (sessions), $5 shared or the reader, $6 the bare repo name; $7 the limit. */
const AT: InboxPlaceholders = { me: '$2', repo: '$3', shared: '$4', sharedOrMe: '$5', bareRepo: '$6' };
const INBOX = Object.fromEntries(INBOX_FILTERS.map((filter) => [filter, inboxSelect(AT, { now: '$1', filter, limit: '$7' })])) as Record<InboxFilter, string>;
const ANY_MAIL = Object.fromEntries(INBOX_FILTERS.map((filter) => [filter, inboxSelect(AT, { now: '$1', filter, limit: '1' })])) as Record<InboxFilter, string>;
/** $1 the name, $2 its repo, $3 and $4 the range of its session addresses. */
const MID_TURN_AT = { name: '$1', repo: '$2', sessionsFrom: '$3', sessionsTo: '$4' };
const MID_TURN = { urgent: midTurnLook(MID_TURN_AT, true), any: midTurnLook(MID_TURN_AT, false) };
/** Every unread row, leased or not: $1 the reader, … $5 the bare repo name. */
const PENDING = `SELECT COUNT(*)::int AS n FROM (${inboxUnion({ me: '$1', repo: '$2', shared: '$3', sharedOrMe: '$4', bareRepo: '$5' }, { includeLeased: true })}) x`;

/** Mark copies ($3) read at $1 by $2, and delivered where they were not yet; a copy read already keeps its receipt. */
const MARK_READ = `UPDATE messages SET read_at = $1, read_via = $2,
    delivered_via = CASE WHEN delivered_at IS NULL THEN $2 ELSE delivered_via END, delivered_at = COALESCE(delivered_at, $1)
  WHERE message_id = ANY($3::text[]) AND read_at IS NULL`;

function partiesParams(query: InboxQuery): unknown[] {
  const { me, repo, shared, sharedOrMe, bareRepo } = inboxParties(query.reader);
  return [query.now, me, repo, shared, sharedOrMe, bareRepo];
}

/** Select under the repo's inbox lock, lock the copies, decide once, claim. */
async function selectAndClaim(query: Query, input: InboxSelection): Promise<InboxDecision> {
  const { reader } = input.query;
  const rows = (await query(INBOX[inboxFilterOf(input.query)], [...partiesParams(input.query), input.query.limit])).rows as MessageRecord[];
  const fanouts = [...new Set(rows.map((row) => row.fanoutId).filter((id): id is string => id !== null))];
  const copies =
    fanouts.length === 0
      ? []
      : ((await query(`SELECT ${FANOUT_COPY_COLUMNS} FROM messages WHERE fanout_id = ANY($1::text[]) AND to_group = $2 ORDER BY message_id FOR UPDATE`, [fanouts, reader.repo]))
          .rows as FanoutCopy[]);
  const decision = input.decide(rows, copies);
  if (decision.claims.length > 0) {
    await query('UPDATE messages SET claimed_by = $1 WHERE fanout_id = ANY($2::text[]) AND to_group = $3 AND claimed_by IS NULL', [reader.name, decision.claims, reader.repo]);
  }
  return decision;
}

export function postgresInbox(pool: PostgresPool): InboxPort {
  /** Whether a read or a lease would find anything: most find nothing, and answer without a transaction or a lock. */
  const anyMail = async (query: InboxQuery): Promise<boolean> =>
    query.limit > 0 && (await pool.read(ANY_MAIL[inboxFilterOf(query)], partiesParams(query))).length > 0;

  return {
    async peekInbox(query) {
      if (query.limit <= 0) return [];
      return pool.read<MessageRecord>(INBOX[inboxFilterOf(query)], [...partiesParams(query), query.limit]);
    },

    async readInbox(input) {
      if (!(await anyMail(input.query))) return nothingRead();
      return pool.transaction([[LOCK.inbox, input.query.reader.repo]], async (query) => {
        const decision = await selectAndClaim(query, input);
        const now = input.query.now;
        await query(MARK_READ, [now, input.via, [...decision.rows.map((row) => row.messageId), ...decision.settle]]);
        return { messages: decision.rows.map((row) => readRecord(row, now, input.via)), decision };
      });
    },

    async leaseInbox(input): Promise<LeaseOutcome> {
      if (!(await anyMail(input.query))) return { ...nothingRead(), lease: input.lease };
      return pool.transaction([[LOCK.inbox, input.query.reader.repo]], async (query) => {
        const decision = await selectAndClaim(query, input);
        if (decision.rows.length > 0) {
          await query('UPDATE messages SET lease_until = $1 WHERE message_id = ANY($2::text[])', [input.lease, decision.rows.map((row) => row.messageId)]);
        }
        return { messages: decision.rows, decision, lease: input.lease };
      });
    },

    async releaseLeases(reader, held) {
      if (held.messageIds.length === 0) return;
      await pool.transaction([[LOCK.inbox, reader.repo]], async (query) => {
        // Claims first: which fan-outs the lease holds is read from its leased rows.
        if (held.claims.length > 0) {
          await query(
            `UPDATE messages SET claimed_by = NULL WHERE fanout_id = ANY($1::text[]) AND to_group = $2 AND claimed_by = $3 AND read_at IS NULL
               AND fanout_id IN (SELECT fanout_id FROM messages WHERE message_id = ANY($4::text[]) AND lease_until = $5)`,
            [held.claims, reader.repo, reader.name, held.messageIds, held.lease],
          );
        }
        await query('UPDATE messages SET lease_until = NULL WHERE message_id = ANY($1::text[]) AND read_at IS NULL AND lease_until = $2', [held.messageIds, held.lease]);
      });
    },

    async markDelivered(shown, now, via) {
      if (shown.messageIds.length === 0) return [];
      const { me, shared, bareRepo } = inboxParties(shown.reader);
      // One statement, one round trip: the rows still under the lease, then the copies they settle, then the NOTIFY.
      const rows = await pool.read<MessageRecord & { settled?: unknown; notified?: unknown }>(
        `WITH marked AS (
           ${MARK_READ} AND lease_until = $4 AND to_agent IN ($5, $6, $7)
           RETURNING ${MESSAGE_COLUMNS}
         ), settled AS (
           UPDATE messages SET read_at = $1, read_via = $2,
               delivered_via = CASE WHEN delivered_at IS NULL THEN $2 ELSE delivered_via END, delivered_at = COALESCE(delivered_at, $1)
            WHERE message_id = ANY($8::text[]) AND read_at IS NULL AND to_agent = $6 AND fanout_id IN (SELECT "fanoutId" FROM marked)
           RETURNING 1
         )
         SELECT marked.*, (SELECT COUNT(*) FROM settled) AS settled, ${notifySql()} AS notified
           FROM marked ORDER BY "sentAt", "messageId"`,
        [now, via, shown.messageIds, shown.lease, me, shared, bareRepo, shown.settle],
      );
      return rows.map(({ settled: _settled, notified: _notified, ...row }) => row);
    },

    async pendingCount(reader) {
      const { me, repo, shared, sharedOrMe, bareRepo } = inboxParties(reader);
      return (await pool.one<{ n: number }>(PENDING, [me, repo, shared, sharedOrMe, bareRepo]))?.n ?? 0;
    },

    async midTurnMailMayWait({ name, repo, urgentOnly }) {
      return (await pool.read(urgentOnly ? MID_TURN.urgent : MID_TURN.any, [name, repo, `${name}-`, `${name}.`])).length > 0;
    },

    async fanoutCopies(fanoutId, repo) {
      return pool.read<FanoutCopy & { leased: boolean }>(
        `SELECT ${FANOUT_COPY_COLUMNS}, lease_until IS NOT NULL AS leased FROM messages WHERE fanout_id = $1 AND to_group = $2 ORDER BY message_id`,
        [fanoutId, repo],
      );
    },
  };
}
