/** Moving a whole bus between engines (`agent-bus store copy`), table by table of the shared model (tables.ts). */
import type { TableModel, TableRow } from './tables.js';
import type { AttemptsOf } from './attempts.js';

export interface CopyPort {
  /** A table's rows in batches, in its order (messages in the order they were written). */
  exportRows(table: TableModel, batch: number): AsyncGenerator<TableRow[]>;
  /** Insert rows as they are, in one transaction per call. */
  importRows(table: TableModel, rows: TableRow[]): Promise<void>;
  countRows(table: TableModel): Promise<number>;
}

export const COPY_ATTEMPTS = {
  exportRows: 'retryable',
  // Run again, the rows' keys are taken already.
  importRows: 'once',
  countRows: 'retryable',
} as const satisfies AttemptsOf<CopyPort>;
