/**
 * Where the core writes its audit rows, once each operation has committed: one `append` per
 * operation (a single write of the whole batch), `flush` where a reader must see the rows before
 * the operation returns. The audit log (audit/log.ts) is one; a test may hand in another.
 */
import type { AuditRow } from '../audit/record.js';

export interface AuditSink {
  append(rows: readonly AuditRow[]): void;
  flush(): void;
  close(): void;
}
