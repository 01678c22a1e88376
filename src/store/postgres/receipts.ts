/** Receipts on PostgreSQL. */
import type { ReceiptRecord } from '../../model/receipts.js';
import type { ReceiptsPort } from '../ports/receipts.js';
import { RECEIPT_FIELDS, selectList } from '../shared/columns.js';
import { firstDistinct, ID_TAIL_FROM, idRanges, prefixEnd } from '../shared/ranges.js';
import type { PostgresPool } from './pool.js';

const RECEIPT_COLUMNS = selectList(RECEIPT_FIELDS);

export function postgresReceipts(pool: PostgresPool): ReceiptsPort {
  return {
    async recordDelivered(messageIds, now, via) {
      if (messageIds.length === 0) return [];
      // Most shows find every copy delivered already: answer those without a write (and its NOTIFY).
      const pending = await pool.read<{ id: string }>('SELECT message_id AS id FROM messages WHERE message_id = ANY($1::text[]) AND delivered_at IS NULL', [messageIds]);
      if (pending.length === 0) return [];
      return pool.transaction([], async (query) => {
        const marked = await query('UPDATE messages SET delivered_at = $1, delivered_via = $2 WHERE message_id = ANY($3::text[]) AND delivered_at IS NULL RETURNING message_id', [now, via, messageIds]);
        return (marked.rows as Array<{ message_id: string }>).map((row) => row.message_id).sort();
      });
    },

    async receipts(id) {
      const own = await pool.one<{ fanoutId: string | null }>('SELECT fanout_id AS "fanoutId" FROM messages WHERE message_id = $1', [id]);
      if (own !== undefined && own.fanoutId === null) return pool.read<ReceiptRecord>(`SELECT ${RECEIPT_COLUMNS} FROM messages WHERE message_id = $1`, [id]);
      return pool.read<ReceiptRecord>(`SELECT ${RECEIPT_COLUMNS} FROM messages WHERE fanout_id = $1 ORDER BY to_agent, message_id`, [own?.fanoutId ?? id]);
    },

    async sendIdsNamed(lookup, limit) {
      if (limit <= 0) return [];
      // Ranges rather than LIKE, so the key, the short form's index and the fan-out index answer whatever the start holds.
      const queries = [
        ...idRanges(lookup, 'message_id', false).map((range) => ({ range, select: 'COALESCE(fanout_id, message_id)' })),
        // A start of a copy's short form: no index holds it (one would cost every send a random page), so a scan.
        ...(lookup.tail === null ? [] : [{ range: { expression: `substr(message_id, ${ID_TAIL_FROM})`, from: lookup.tail, to: prefixEnd(lookup.tail) }, select: 'COALESCE(fanout_id, message_id)' }]),
        ...idRanges(lookup, 'fanout_id', false).map((range) => ({ range, select: 'fanout_id' })),
      ];
      const found: string[] = [];
      for (const { range, select } of queries) {
        const rows = await pool.read<{ id: string }>(
          `SELECT DISTINCT ${select} AS id FROM messages WHERE ${range.expression} >= $1 AND ${range.expression} < $2 ORDER BY id LIMIT $3`,
          [range.from, range.to, limit],
        );
        found.push(...rows.map((row) => row.id));
      }
      return firstDistinct(found, limit);
    },
  };
}
