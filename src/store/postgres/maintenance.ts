/** Keeping a PostgreSQL store from growing for ever: prune, maintenance turns, a quick check. */
import type { MaintenancePort } from '../ports/maintenance.js';
import { TABLES } from '../ports/tables.js';
import { expandIntake } from './outbox.js';
import type { PostgresPool } from './pool.js';
import { TARGET_VERSION } from './schema.js';

export function postgresMaintenance(pool: PostgresPool): MaintenancePort {
  return {
    async prune(input) {
      // Events queued for integrations out name their messages: made into the outbox before any message goes.
      if (!input.dryRun) await expandIntake(pool);
      // What goes is QUERIES.md's "Pruning".
      return pool.transaction(
        [],
        async (query) => {
          const count = async (sql: string, params: unknown[]): Promise<number> => ((await query(sql, params)).rows[0]?.n as number | undefined) ?? 0;
          // Threads wholly read and wholly older: a reply sent meanwhile (unread, newer) is never among them.
          const threads = (
            await query('SELECT thread_id FROM messages GROUP BY thread_id HAVING MAX(sent_at) < $1 AND COUNT(*) FILTER (WHERE read_at IS NULL) = 0', [input.mailBefore])
          ).rows.map((row) => row.thread_id as string);
          const inThreads = 'thread_id = ANY($1::text[]) AND read_at IS NOT NULL AND sent_at < $2';
          const threadParams = [threads, input.mailBefore];
          const orphanReceipts = 'notice_id IN (SELECT notice_id FROM notices WHERE expires_at <= $1) OR NOT EXISTS (SELECT 1 FROM notices n WHERE n.notice_id = notice_receipts.notice_id)';
          const endedSessions = 'ended_at IS NOT NULL AND ended_at < $1';
          const endedSpawns = "state = 'exited' AND ended_at < $1";
          if (input.dryRun) {
            return {
              threads: threads.length,
              messages: await count(`SELECT COUNT(*)::int AS n FROM messages WHERE ${inThreads}`, threadParams),
              notices: await count('SELECT COUNT(*)::int AS n FROM notices WHERE expires_at <= $1', [input.now]),
              receipts: await count(`SELECT COUNT(*)::int AS n FROM notice_receipts WHERE ${orphanReceipts}`, [input.now]),
              sessions: await count(`SELECT COUNT(*)::int AS n FROM sessions WHERE ${endedSessions}`, [input.sessionsEndedBefore]),
              spawns: await count(`SELECT COUNT(*)::int AS n FROM spawns WHERE ${endedSpawns}`, [input.mailBefore]),
            };
          }
          const messages = (await query(`DELETE FROM messages WHERE ${inThreads}`, threadParams)).rowCount ?? 0;
          // The index keeps no key to messages (schema step 18): its rows for mail gone go too, and any an
          // indexer wrote for a message deleted under it.
          if (messages > 0) await query('DELETE FROM message_search s WHERE NOT EXISTS (SELECT 1 FROM messages m WHERE m.seq = s.seq)');
          const receipts = (await query(`DELETE FROM notice_receipts WHERE ${orphanReceipts}`, [input.now])).rowCount ?? 0;
          const notices = (await query('DELETE FROM notices WHERE expires_at <= $1', [input.now])).rowCount ?? 0;
          const sessions = (await query(`DELETE FROM sessions WHERE ${endedSessions}`, [input.sessionsEndedBefore])).rowCount ?? 0;
          const spawns = (await query(`DELETE FROM spawns WHERE ${endedSpawns}`, [input.mailBefore])).rowCount ?? 0;
          return { messages, threads: threads.length, notices, receipts, sessions, spawns };
        },
        !input.dryRun,
      );
    },

    /** Plain deletes leave dead rows that autovacuum reclaims on its own. */
    async reclaimSpace() {
      return null;
    },

    async startMaintenanceRun(task, now, notSince) {
      return (
        (await pool.writeAlone(
          `INSERT INTO maintenance (task, last_run_at) VALUES ($1, $2)
           ON CONFLICT (task) DO UPDATE SET last_run_at = excluded.last_run_at WHERE maintenance.last_run_at < $3`,
          [task, now, notSince],
          false,
        )) > 0
      );
    },

    /**
     * PostgreSQL keeps its own pages whole; what a quick check can tell is that every table of
     * the model is there and readable.
     */
    async integrity() {
      const version = (await pool.one<{ version: number }>('SELECT version FROM agent_bus_schema'))?.version ?? 0;
      const problems: string[] = [];
      for (const table of TABLES) {
        try {
          await pool.read(`SELECT 1 FROM ${table.name} LIMIT 1`);
        } catch (error) {
          problems.push(`table ${table.name}: ${(error as Error).message}`);
        }
      }
      return { engine: 'postgres', schemaVersion: version, targetVersion: TARGET_VERSION, problems };
    },
  };
}
