/** Mail on SQLite: sends in batches, one write transaction each; threads and the newest mail read back. */
import type { MessageRecord } from '../../model/records.js';
import type { MailPort, SendInput } from '../ports/mail.js';
import { MESSAGE_FIELDS, selectList } from '../shared/columns.js';
import { prefixEnd } from '../shared/ranges.js';
import { PlanRefused, planSend, SendQueue, type SendOutcome } from '../shared/send-queue.js';
import type { SqliteConnection } from './driver.js';
import { outletsNow, queueNow } from './outbox.js';
import { candidates, registerNow } from './roster.js';

const MESSAGE_COLUMNS = selectList(MESSAGE_FIELDS);

function sendNow(db: SqliteConnection, input: SendInput): MessageRecord[] {
  registerNow(db, input.register, input.sentAt);
  const records = planSend(input, candidates(db, input.roster));
  for (const record of records) {
    db.run(
      `INSERT INTO messages (message_id, from_agent, to_agent, body, thread_id, sent_at, addressed_to, fanout_id, to_group, priority, task_id, task_state)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [record.messageId, record.fromAgent, record.toAgent, record.body, record.threadId, record.sentAt, record.addressedTo, record.fanoutId, record.toGroup, record.priority, record.taskId, record.taskState],
    );
  }
  if (input.outbound !== undefined && records.length > 0) {
    const outlets = outletsNow(db);
    if (outlets.length > 0) queueNow(db, input.outbound(records, outlets));
  }
  return records;
}

export function sqliteMail(db: SqliteConnection): MailPort {
  // One send as a savepoint, so a send that fails after writing (its registration) undoes only itself.
  const sendOne = db.savepoint((input: SendInput) => sendNow(db, input));
  const queue = new SendQueue({
    // Once the turn's I/O callbacks have run, so a hub's requests that arrived together go together.
    schedule: (flush) => setImmediate(flush),
    write: (batch) =>
      db.immediate(() => {
        const outcomes: SendOutcome[] = [];
        for (const input of batch) {
          try {
            outcomes.push({ records: input.register.length > 0 ? sendOne(input) : sendNow(db, input) });
          } catch (error) {
            if (error instanceof PlanRefused) outcomes.push({ error: error.reason });
            else if (input.register.length > 0) outcomes.push({ error });
            else throw error;
          }
        }
        return outcomes;
      }),
  });

  return {
    send: (input) => queue.send(input),

    async thread(threadId, limit) {
      if (limit <= 0) return [];
      return db.all<MessageRecord>(`SELECT ${MESSAGE_COLUMNS} FROM messages WHERE thread_id = ? ORDER BY sent_at, message_id LIMIT ?`, [threadId, limit]);
    },

    async threadIdsStartingWith(prefix, limit) {
      if (limit <= 0) return [];
      // A range rather than LIKE, so the thread index answers it whatever the prefix holds.
      const rows = db.all<{ thread_id: string }>('SELECT DISTINCT thread_id FROM messages WHERE thread_id >= ? AND thread_id < ? ORDER BY thread_id LIMIT ?', [
        prefix,
        prefixEnd(prefix),
        limit,
      ]);
      return rows.map((row) => row.thread_id);
    },

    async recentMessages(limit) {
      if (limit <= 0) return [];
      // Insertion order: the newest rows without an index on sent_at that every send would pay for.
      return db
        .all<MessageRecord & { seq?: number }>(`SELECT * FROM (SELECT ${MESSAGE_COLUMNS}, rowid AS seq FROM messages ORDER BY rowid DESC LIMIT ?) ORDER BY seq`, [limit])
        .map(({ seq: _seq, ...message }) => message);
    },
  };
}
