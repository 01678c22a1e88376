/** The inbox on SQLite: reads and leases answer an empty inbox without the write lock; the rest is one BEGIN IMMEDIATE. */
import { lazy } from '../shared/lazy.js';
import { readRecord, type ReceiptWay } from '../../model/receipts.js';
import type { MessageRecord } from '../../model/records.js';
import type { FanoutCopy, InboxDecision, InboxPort, InboxQuery, InboxSelection, ReaderIdentity, LeaseOutcome } from '../ports/inbox.js';
import { FANOUT_COPY_FIELDS, MESSAGE_FIELDS, selectList } from '../shared/columns.js';
import { INBOX_FILTERS, inboxFilterOf, inboxParties, inboxSelect, inboxUnion, midTurnLook, nothingRead, type InboxFilter, type InboxPlaceholders } from '../shared/inbox.js';
import type { Params, SqliteConnection } from './driver.js';

const MESSAGE_COLUMNS = lazy(() => selectList(MESSAGE_FIELDS));
const FANOUT_COPY_COLUMNS = lazy(() => selectList(FANOUT_COPY_FIELDS));

const AT: InboxPlaceholders = { me: '@me', repo: '@repo', shared: '@shared', sharedOrMe: '@sharedOrMe', bareRepo: '@bareRepo' };
const INBOX = lazy(() => Object.fromEntries(INBOX_FILTERS.map((filter) => [filter, inboxSelect(AT, { now: '@now', filter, limit: '@limit' })])) as Record<InboxFilter, string>);
const MID_TURN_AT = { name: '@name', repo: '@repo', sessionsFrom: '@sessionsFrom', sessionsTo: '@sessionsTo' };
const MID_TURN = lazy(() => ({ urgent: midTurnLook(MID_TURN_AT, true), any: midTurnLook(MID_TURN_AT, false) }));
const PENDING = lazy(() => `SELECT COUNT(*) AS n FROM (${inboxUnion(AT, { includeLeased: true })})`);

/** Mark a copy (@id) read at @now by @via, and delivered where it was not yet (a first delivery keeps its time and way). */
const MARK_READ = `UPDATE messages SET read_at = @now, read_via = @via,
    delivered_via = CASE WHEN delivered_at IS NULL THEN @via ELSE delivered_via END, delivered_at = COALESCE(delivered_at, @now)
  WHERE message_id = @id AND read_at IS NULL`;

function selectInbox(db: SqliteConnection, query: InboxQuery, limit = query.limit): MessageRecord[] {
  return db.all<MessageRecord>(INBOX()[inboxFilterOf(query)], { ...inboxParties(query.reader), now: query.now, limit });
}

/** Every copy, in the reader's repo, of the fan-outs among `rows`. */
function copiesOf(db: SqliteConnection, rows: MessageRecord[], repo: string): FanoutCopy[] {
  const fanouts = [...new Set(rows.map((row) => row.fanoutId).filter((id): id is string => id !== null))];
  const copies: FanoutCopy[] = [];
  for (const fanout of fanouts) copies.push(...db.all<FanoutCopy>(`SELECT ${FANOUT_COPY_COLUMNS()} FROM messages WHERE fanout_id = ? AND to_group = ?`, [fanout, repo]));
  return copies;
}

/** Select, decide once, claim: the part of a read and a lease that is the same. */
function selectAndClaim(db: SqliteConnection, input: InboxSelection): InboxDecision {
  const rows = selectInbox(db, input.query);
  const { reader } = input.query;
  const decision = input.decide(rows, copiesOf(db, rows, reader.repo));
  for (const fanout of decision.claims) {
    db.run('UPDATE messages SET claimed_by = @me WHERE fanout_id = @fanout AND to_group = @repo AND claimed_by IS NULL', { me: reader.name, fanout, repo: reader.repo });
  }
  return decision;
}

/** Mark rows read and delivered by `via`, and the copies their read settles read. */
function markRead(db: SqliteConnection, ids: string[], now: string, via: ReceiptWay): void {
  for (const id of ids) db.run(MARK_READ, { now, via, id });
}

/** Whether a read or a lease would find anything: most find nothing, and answer without the write lock. */
function anyMail(db: SqliteConnection, query: InboxQuery): boolean {
  return query.limit > 0 && selectInbox(db, query, 1).length > 0;
}

export function sqliteInbox(db: SqliteConnection): InboxPort {
  return {
    async peekInbox(query) {
      return query.limit <= 0 ? [] : selectInbox(db, query);
    },

    async readInbox(input) {
      if (!anyMail(db, input.query)) return nothingRead();
      return db.immediate(() => {
        const decision = selectAndClaim(db, input);
        const now = input.query.now;
        markRead(db, [...decision.rows.map((row) => row.messageId), ...decision.settle], now, input.via);
        return { messages: decision.rows.map((row) => readRecord(row, now, input.via)), decision };
      });
    },

    async leaseInbox(input): Promise<LeaseOutcome> {
      if (!anyMail(db, input.query)) return { ...nothingRead(), lease: input.lease };
      return db.immediate(() => {
        const decision = selectAndClaim(db, input);
        for (const row of decision.rows) db.run('UPDATE messages SET lease_until = ? WHERE message_id = ?', [input.lease, row.messageId]);
        return { messages: decision.rows, decision, lease: input.lease };
      });
    },

    async releaseLeases(reader: ReaderIdentity, held) {
      if (held.messageIds.length === 0) return;
      const ids = JSON.stringify(held.messageIds);
      db.immediate(() => {
        // Claims first: which fan-outs the lease holds is read from its leased rows.
        for (const fanout of held.claims) {
          db.run(
            `UPDATE messages SET claimed_by = NULL WHERE fanout_id = @fanout AND to_group = @repo AND claimed_by = @me AND read_at IS NULL
               AND EXISTS (SELECT 1 FROM messages t WHERE t.message_id IN (SELECT value FROM json_each(@ids)) AND t.lease_until = @lease AND t.fanout_id = @fanout)`,
            { fanout, repo: reader.repo, me: reader.name, ids, lease: held.lease },
          );
        }
        for (const id of held.messageIds) db.run('UPDATE messages SET lease_until = NULL WHERE message_id = ? AND read_at IS NULL AND lease_until = ?', [id, held.lease]);
      });
    },

    async markDelivered(shown, now, via) {
      if (shown.messageIds.length === 0) return [];
      const { me, shared, bareRepo } = inboxParties(shown.reader);
      const params: Params = { now, via, lease: shown.lease, ids: JSON.stringify(shown.messageIds), me, shared, bareRepo };
      return db.immediate(() => {
        const marked = db
          .all<{ id: string }>(
            `SELECT message_id AS id FROM messages
              WHERE message_id IN (SELECT value FROM json_each(@ids)) AND read_at IS NULL AND lease_until = @lease AND to_agent IN (@me, @shared, @bareRepo)`,
            params,
          )
          .map((row) => row.id);
        if (marked.length === 0) return [];
        markRead(db, marked, now, via);
        for (const id of shown.settle) {
          db.run(`${MARK_READ} AND to_agent = @shared AND fanout_id IN (SELECT fanout_id FROM messages WHERE message_id IN (SELECT value FROM json_each(@marked)))`, {
            now,
            via,
            id,
            shared,
            marked: JSON.stringify(marked),
          });
        }
        return db.all<MessageRecord>(`SELECT ${MESSAGE_COLUMNS()} FROM messages WHERE message_id IN (SELECT value FROM json_each(?)) ORDER BY sent_at, message_id`, [JSON.stringify(marked)]);
      });
    },

    async pendingCount(reader) {
      return db.get<{ n: number }>(PENDING(), { ...inboxParties(reader) })?.n ?? 0;
    },

    async midTurnMailMayWait({ name, repo, urgentOnly }) {
      return db.get(urgentOnly ? MID_TURN().urgent : MID_TURN().any, { name, repo, sessionsFrom: `${name}-`, sessionsTo: `${name}.` }) !== undefined;
    },

    async fanoutCopies(fanoutId, repo) {
      return db
        .all<FanoutCopy & { leased: number }>(`SELECT ${FANOUT_COPY_COLUMNS()}, lease_until IS NOT NULL AS leased FROM messages WHERE fanout_id = ? AND to_group = ?`, [fanoutId, repo])
        .map((copy) => ({ ...copy, leased: Boolean(copy.leased) }));
    },
  };
}
