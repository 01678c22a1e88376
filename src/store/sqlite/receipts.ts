/** Receipts on SQLite. */
import type { ReceiptRecord } from '../../model/receipts.js';
import type { ReceiptsPort } from '../ports/receipts.js';
import { RECEIPT_FIELDS, selectList } from '../shared/columns.js';
import { firstDistinct, ID_TAIL_FROM, prefixEnd } from '../shared/ranges.js';
import type { SqliteConnection } from './driver.js';

const RECEIPT_COLUMNS = selectList(RECEIPT_FIELDS);

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
      if (own !== undefined && own.fanoutId === null) return db.all<ReceiptRecord>(`SELECT ${RECEIPT_COLUMNS} FROM messages WHERE message_id = ?`, [id]);
      return db.all<ReceiptRecord>(`SELECT ${RECEIPT_COLUMNS} FROM messages WHERE fanout_id = ? ORDER BY to_agent, message_id`, [own?.fanoutId ?? id]);
    },

    async sendIdsNamed(lookup, limit) {
      if (limit <= 0) return [];
      // Ranges rather than LIKE, so the key, the fan-out index and the short-form index answer whatever the prefix holds.
      const found = lookup.prefixes.flatMap((prefix) =>
        db.all<{ id: string }>(
          `SELECT DISTINCT COALESCE(fanout_id, message_id) AS id FROM messages WHERE message_id >= @from AND message_id < @to
           UNION SELECT fanout_id FROM messages WHERE fanout_id >= @from AND fanout_id < @to
           ORDER BY id LIMIT @limit`,
          { from: prefix, to: prefixEnd(prefix), limit },
        ),
      );
      if (lookup.tail !== null) {
        found.push(
          ...db.all<{ id: string }>(
            `SELECT DISTINCT COALESCE(fanout_id, message_id) AS id FROM messages
             WHERE substr(message_id, ${ID_TAIL_FROM}) >= @from AND substr(message_id, ${ID_TAIL_FROM}) < @to ORDER BY id LIMIT @limit`,
            { from: lookup.tail, to: prefixEnd(lookup.tail), limit },
          ),
        );
      }
      return firstDistinct(found.map((row) => row.id), limit);
    },
  };
}
