/** Keeping a SQLite store small and whole: prune, incremental vacuum, maintenance turns, a quick check. */
import type { PruneCounts } from '../../model/records.js';
import type { MaintenancePort } from '../ports/maintenance.js';
import type { SqliteConnection } from './driver.js';
import { expandIntake } from './outbox.js';
import { TARGET_VERSION } from './schema.js';

/** PRAGMA auto_vacuum's value for incremental vacuum. */
const INCREMENTAL_VACUUM = 2;

export function sqliteMaintenance(db: SqliteConnection): MaintenancePort {
  return {
    async prune(input) {
      // What goes is QUERIES.md's "Pruning".
      const work = (): PruneCounts => {
        // Threads wholly read and wholly older: a reply sent meanwhile (unread, newer) is never among them.
        const threads = db
          .all<{ thread_id: string }>('SELECT thread_id FROM messages GROUP BY thread_id HAVING MAX(sent_at) < ? AND SUM(read_at IS NULL) = 0', [input.mailBefore])
          .map((row) => row.thread_id);
        const inThreads = 'thread_id IN (SELECT value FROM json_each(?)) AND read_at IS NOT NULL AND sent_at < ?';
        const threadParams = [JSON.stringify(threads), input.mailBefore];
        const expired = 'SELECT notice_id FROM notices WHERE expires_at <= ?';
        const orphanReceipts = `notice_id IN (${expired}) OR notice_id NOT IN (SELECT notice_id FROM notices)`;
        const endedSessions = 'ended_at IS NOT NULL AND ended_at < ?';
        const endedSpawns = "state = 'exited' AND ended_at < ?";
        if (input.dryRun) {
          return {
            threads: threads.length,
            messages: db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM messages WHERE ${inThreads}`, threadParams)?.n ?? 0,
            notices: db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM (${expired})`, [input.now])?.n ?? 0,
            receipts: db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM notice_receipts WHERE ${orphanReceipts}`, [input.now])?.n ?? 0,
            sessions: db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM sessions WHERE ${endedSessions}`, [input.sessionsEndedBefore])?.n ?? 0,
            spawns: db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM spawns WHERE ${endedSpawns}`, [input.mailBefore])?.n ?? 0,
          };
        }
        const messages = db.run(`DELETE FROM messages WHERE ${inThreads}`, threadParams).changes;
        const receipts = db.run(`DELETE FROM notice_receipts WHERE ${orphanReceipts}`, [input.now]).changes;
        const notices = db.run('DELETE FROM notices WHERE expires_at <= ?', [input.now]).changes;
        const sessions = db.run(`DELETE FROM sessions WHERE ${endedSessions}`, [input.sessionsEndedBefore]).changes;
        const spawns = db.run(`DELETE FROM spawns WHERE ${endedSpawns}`, [input.mailBefore]).changes;
        return { messages, threads: threads.length, notices, receipts, sessions, spawns };
      };
      if (input.dryRun) return db.deferred(work);
      // Events queued for integrations out name their messages: made into the outbox before any message goes.
      expandIntake(db);
      return db.immediate(work);
    },

    async reclaimSpace() {
      const size = (): number => (db.pragma('page_count') as number) * (db.pragma('page_size') as number);
      const before = size();
      // A database made before incremental vacuum was set: one full VACUUM switches it over.
      if ((db.pragma('auto_vacuum') as number) !== INCREMENTAL_VACUUM) db.exec('PRAGMA auto_vacuum = INCREMENTAL; VACUUM');
      else db.exec('PRAGMA incremental_vacuum');
      return { before, after: size() };
    },

    async startMaintenanceRun(task, now, notSince) {
      return db.immediate(
        () =>
          db.run(
            `INSERT INTO maintenance (task, last_run_at) VALUES (?, ?)
             ON CONFLICT (task) DO UPDATE SET last_run_at = excluded.last_run_at WHERE maintenance.last_run_at < ?`,
            [task, now, notSince],
          ).changes > 0,
      );
    },

    async integrity() {
      const findings = db.pragmaRows<{ quick_check: string }>('quick_check').map((row) => row.quick_check);
      return {
        engine: 'sqlite',
        schemaVersion: db.pragma('user_version') as number,
        targetVersion: TARGET_VERSION,
        problems: findings.filter((finding) => finding !== 'ok'),
      };
    },
  };
}
