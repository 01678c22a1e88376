/** Mail on SQLite: sends in batches, one write transaction each; threads and the newest mail read back. */
import { lazy } from '../shared/lazy.js';
import type { MessageRecord } from '../../model/records.js';
import type { MailPort, SendInput } from '../ports/mail.js';
import { MESSAGE_FIELDS, selectList } from '../shared/columns.js';
import { firstDistinct, idRanges } from '../shared/ranges.js';
import { PlanRefused, planSend, SendQueue, type SendOutcome } from '../shared/send-queue.js';
import type { SqliteConnection } from './driver.js';
import { BatchOutbound, intakeNow } from './outbox.js';
import { candidates, registerNow } from './roster.js';

const MESSAGE_COLUMNS = lazy(() => selectList(MESSAGE_FIELDS));

function sendNow(db: SqliteConnection, input: SendInput, outbound: BatchOutbound): MessageRecord[] {
  registerNow(db, input.register, input.sentAt);
  const records = planSend(input, candidates(db, input.roster));
  for (const record of records) {
    db.run(
      `INSERT INTO messages (message_id, from_agent, to_agent, body, thread_id, sent_at, addressed_to, fanout_id, to_group, priority, task_id, task_state)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [record.messageId, record.fromAgent, record.toAgent, record.body, record.threadId, record.sentAt, record.addressedTo, record.fanoutId, record.toGroup, record.priority, record.taskId, record.taskState],
    );
  }
  outbound.add(input, records);
  return records;
}

export function sqliteMail(db: SqliteConnection): MailPort {
  // One send as a savepoint, so a send that fails after writing (its registration) undoes only itself.
  const sendOne = db.savepoint(({ input, outbound }: { input: SendInput; outbound: BatchOutbound }) => sendNow(db, input, outbound));
  const queue = new SendQueue({
    // Once the turn's I/O callbacks have run, so a hub's requests that arrived together go together.
    schedule: (flush) => setImmediate(flush),
    write: (batch) =>
      db.immediate(() => {
        const outcomes: SendOutcome[] = [];
        const outbound = new BatchOutbound(db);
        for (const input of batch) {
          const queued = outbound.pending.length;
          try {
            outcomes.push({ records: input.register.length > 0 ? sendOne({ input, outbound }) : sendNow(db, input, outbound) });
          } catch (error) {
            // A send undone takes its events with it: they are written with the batch's, at its end.
            outbound.pending.length = queued;
            if (error instanceof PlanRefused) outcomes.push({ error: error.reason });
            else if (input.register.length > 0) outcomes.push({ error });
            else throw error;
          }
        }
        intakeNow(db, outbound.pending);
        return outcomes;
      }),
  });

  return {
    send: (input) => queue.send(input),

    async thread(threadId, limit) {
      if (limit <= 0) return [];
      return db.all<MessageRecord>(`SELECT ${MESSAGE_COLUMNS()} FROM messages WHERE thread_id = ? ORDER BY sent_at, message_id LIMIT ?`, [threadId, limit]);
    },

    async threadIdsNamed(lookup, limit) {
      if (limit <= 0) return [];
      // Ranges rather than LIKE, so the thread index answers them whatever the prefix holds.
      const found = idRanges(lookup, 'thread_id', false).flatMap(({ from, to }) =>
        db.all<{ thread_id: string }>('SELECT DISTINCT thread_id FROM messages WHERE thread_id >= ? AND thread_id < ? ORDER BY thread_id LIMIT ?', [from, to, limit]),
      );
      return firstDistinct(found.map((row) => row.thread_id), limit);
    },

    async recentMessages(limit) {
      if (limit <= 0) return [];
      // Insertion order: the newest rows without an index on sent_at that every send would pay for.
      return db
        .all<MessageRecord & { seq?: number }>(`SELECT * FROM (SELECT ${MESSAGE_COLUMNS()}, rowid AS seq FROM messages ORDER BY rowid DESC LIMIT ?) ORDER BY seq`, [limit])
        .map(({ seq: _seq, ...message }) => message);
    },
  };
}
