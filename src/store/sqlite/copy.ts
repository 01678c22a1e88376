/** Moving a bus between engines, on SQLite: whole tables out and in. */
import type { CopyPort } from '../ports/copy.js';
import type { TableRow } from '../ports/tables.js';
import type { SqliteConnection } from './driver.js';

export function sqliteCopy(db: SqliteConnection): CopyPort {
  return {
    async *exportRows(table, batch) {
      // Messages in the order they were written: the newest stay newest in the copy.
      const order = table.name === 'messages' ? 'rowid' : table.key.join(', ');
      let rows: TableRow[] = [];
      for (const row of db.iterate<TableRow>(`SELECT ${table.columns.join(', ')} FROM ${table.name} ORDER BY ${order}`)) {
        rows.push(row);
        if (rows.length >= batch) {
          yield rows;
          rows = [];
        }
      }
      if (rows.length > 0) yield rows;
    },

    async importRows(table, rows) {
      if (rows.length === 0) return;
      const insert = db.statement(`INSERT INTO ${table.name} (${table.columns.join(', ')}) VALUES (${table.columns.map(() => '?').join(', ')})`);
      db.immediate(() => {
        for (const row of rows) insert.run(table.columns.map((column) => row[column] ?? null));
      });
    },

    async countRows(table) {
      return db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table.name}`)?.n ?? 0;
    },
  };
}
