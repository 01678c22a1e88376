/**
 * Moving a whole bus from one store to another (`agent-bus store copy`), as a
 * user who outgrows one machine moves from SQLite to PostgreSQL: every table
 * of the shared model, rows as they are, into a target that holds nothing yet;
 * then each table's rows are counted on both sides.
 */
import { BusError } from '../model/errors.js';
import type { Store } from '../store/ports.js';
import { TABLES } from '../store/ports.js';

/** Rows read and written at a time. */
const BATCH = 1000;

export interface CopyReport {
  from: string;
  to: string;
  /** Rows copied, table by table, in the order copied. */
  tables: Array<{ table: string; rows: number }>;
}

export async function copyBus(from: Store, to: Store, progress: (table: string, rows: number, done: boolean) => void = () => undefined): Promise<CopyReport> {
  if (from.location === to.location) throw new BusError(`store copy: the source and the target are the same store (${from.location})`);
  const held: string[] = [];
  for (const table of TABLES) {
    const count = await to.countRows(table);
    if (count > 0) held.push(`${table.name}: ${count}`);
  }
  if (held.length > 0) {
    throw new BusError(`store copy: the target ${to.location} already holds a bus (${held.join(', ')}); copy into an empty database. Nothing was copied.`);
  }
  const report: CopyReport = { from: from.location, to: to.location, tables: [] };
  for (const table of TABLES) {
    let copied = 0;
    for await (const rows of from.exportRows(table, BATCH)) {
      await to.importRows(table, rows);
      copied += rows.length;
      progress(table.name, copied, false);
    }
    progress(table.name, copied, true);
    report.tables.push({ table: table.name, rows: copied });
  }
  // Nothing lost, nothing doubled: both sides hold the same count of every table.
  for (const table of TABLES) {
    const [source, target] = [await from.countRows(table), await to.countRows(table)];
    if (source !== target) throw new BusError(`store copy: ${table.name} has ${source} rows in ${from.location} but ${target} in ${to.location} after the copy; the target is incomplete`);
  }
  // The copied mail is searchable at once, not at the first search.
  await to.indexForSearch();
  return report;
}
