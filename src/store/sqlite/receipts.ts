/** Receipts on SQLite. */
import { lazy } from '../shared/lazy.js';
import type { ReceiptRecord } from '../../model/receipts.js';
import type { ReceiptsPort } from '../ports/receipts.js';
import { RECEIPT_FIELDS, selectList } from '../shared/columns.js';
import { firstDistinct, ID_TAIL_FROM, idRanges, prefixEnd } from '../shared/ranges.js';
import type { SqliteConnection } from './driver.js';

const RECEIPT_COLUMNS = lazy(() => selectList(RECEIPT_FIELDS));

export function sqliteReceipts(db: SqliteConnection): ReceiptsPort {
  return {
    async recordDelivered(messageIds, now, via) {
      if (messageIds.length === 0) return [];
      // Most shows find every copy delivered already: answer those without taking the write lock.
      const pending = (ids: string[]): string[] =>
        db.all<{ id: string }>('SELECT message_id AS id FROM messages WHERE message_id IN (SELECT value FROM json_each(?)) AND delivered_at IS NULL', [JSON.stringify(ids)]).map((row) => row.id);
      if (pending(messageIds).length === 0) return [];
      return db.immediate(() => {
        const marked = pending(messageIds);
        for (const id of marked) db.run('UPDATE messages SET delivered_at = ?, delivered_via = ? WHERE message_id = ? AND delivered_at IS NULL', [now, via, id]);
        return marked;
      });
    },

    async receipts(id) {
      const own = db.get<{ fanoutId: string | null }>('SELECT fanout_id AS "fanoutId" FROM messages WHERE message_id = ?', [id]);
      if (own !== undefined && own.fanoutId === null) return db.all<ReceiptRecord>(`SELECT ${RECEIPT_COLUMNS()} FROM messages WHERE message_id = ?`, [id]);
      return db.all<ReceiptRecord>(`SELECT ${RECEIPT_COLUMNS()} FROM messages WHERE fanout_id = ? ORDER BY to_agent, message_id`, [own?.fanoutId ?? id]);
    },

    async sendIdsNamed(lookup, limit) {
      if (limit <= 0) return [];
      // Ranges rather than LIKE, so the key and the fan-out index answer whatever the start holds.
      const found = [
        ...idRanges(lookup, 'message_id', false).flatMap(({ expression, from, to }) =>
          db.all<{ id: string }>(`SELECT DISTINCT COALESCE(fanout_id, message_id) AS id FROM messages WHERE ${expression} >= @from AND ${expression} < @to ORDER BY id LIMIT @limit`, { from, to, limit }),
        ),
        // A start of a copy's short form: the key's index scanned (it holds the ids alone), then each copy's send.
        ...(lookup.tail === null
          ? []
          : db
              .all<{ message_id: string }>(`SELECT message_id FROM messages WHERE substr(message_id, ${ID_TAIL_FROM}) >= @from AND substr(message_id, ${ID_TAIL_FROM}) < @to LIMIT @limit`, {
                from: lookup.tail,
                to: prefixEnd(lookup.tail),
                limit,
              })
              .flatMap((row) => db.all<{ id: string }>('SELECT COALESCE(fanout_id, message_id) AS id FROM messages WHERE message_id = ?', [row.message_id]))),
        ...idRanges(lookup, 'fanout_id', false).flatMap(({ expression, from, to }) =>
          db.all<{ id: string }>(`SELECT DISTINCT fanout_id AS id FROM messages WHERE ${expression} >= @from AND ${expression} < @to ORDER BY id LIMIT @limit`, { from, to, limit }),
        ),
      ];
      return firstDistinct(found.map((row) => row.id), limit);
    },
  };
}
