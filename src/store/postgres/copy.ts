/** Moving a bus between engines, on PostgreSQL: tables read in key order by pages, written a few hundred rows a statement. */
import type { CopyPort } from '../ports/copy.js';
import type { TableRow } from '../ports/tables.js';
import type { PostgresPool } from './pool.js';

export function postgresCopy(pool: PostgresPool): CopyPort {
  return {
    async *exportRows(table, batch) {
      // Messages in the order they were written (seq); every other table in its key's order.
      const key = table.name === 'messages' ? ['seq'] : table.key;
      const columns = table.name === 'messages' ? [...table.columns, 'seq'] : table.columns;
      let after: unknown[] | null = null;
      for (;;) {
        const params: unknown[] = after === null ? [] : [...after];
        const where = after === null ? '' : `WHERE (${key.join(', ')}) > (${key.map((_, index) => `$${index + 1}`).join(', ')})`;
        params.push(batch);
        const rows = await pool.read<TableRow>(`SELECT ${columns.join(', ')} FROM ${table.name} ${where} ORDER BY ${key.join(', ')} LIMIT $${params.length}`, params);
        if (rows.length === 0) return;
        const last = rows[rows.length - 1] as TableRow;
        after = key.map((column) => last[column]);
        if (table.name === 'messages') for (const row of rows) delete row.seq;
        yield rows;
        if (rows.length < batch) return;
      }
    },

    async importRows(table, rows) {
      if (rows.length === 0) return;
      await pool.transaction([], async (query) => {
        // A statement per few hundred rows keeps under the protocol's 65,535 parameters.
        const perStatement = Math.max(1, Math.floor(30_000 / table.columns.length));
        for (let start = 0; start < rows.length; start += perStatement) {
          const slice = rows.slice(start, start + perStatement);
          const params: unknown[] = [];
          const values = slice.map(
            (row) =>
              `(${table.columns
                .map((column) => {
                  params.push(row[column] ?? null);
                  return `$${params.length}`;
                })
                .join(', ')})`,
          );
          await query(`INSERT INTO ${table.name} (${table.columns.join(', ')}) VALUES ${values.join(', ')}`, params);
        }
      });
    },

    async countRows(table) {
      return (await pool.one<{ n: number }>(`SELECT COUNT(*)::int AS n FROM ${table.name}`))?.n ?? 0;
    },
  };
}
