/** Mail on PostgreSQL: sends in batches, each batch one transaction and one INSERT where it can. */
import { timeOrderedId } from '../../model/ids.js';
import type { AgentRecord, MessageRecord, OutboundIntake, OutletRecord } from '../../model/records.js';
import type { MailPort, SendInput } from '../ports/mail.js';
import { MESSAGE_FIELDS, selectList } from '../shared/columns.js';
import { intakeText } from '../shared/outbox-intake.js';
import { firstDistinct, idRanges } from '../shared/ranges.js';
import { PlanRefused, planSend, SendQueue, type SendOutcome } from '../shared/send-queue.js';
import type { PostgresPool, Query } from './pool.js';
import { outletsWith } from './outbox.js';
import { candidates, registerWith } from './roster.js';

const MESSAGE_COLUMNS = selectList(MESSAGE_FIELDS);

/** Read the roster rows the send's address needs (or the batch's earlier read of them) and plan it: the rows it writes. */
async function planWith(query: Query, input: SendInput, seen: Map<string, AgentRecord[]>): Promise<MessageRecord[]> {
  const key = JSON.stringify(input.roster);
  let rows = seen.get(key);
  if (rows === undefined) {
    rows = await candidates(query, input.roster);
    seen.set(key, rows);
  }
  return planSend(input, rows);
}

/**
 * One statement for any number of rows (a whole fan-out, or a whole batch of sends), and for the
 * intake row of the events they queue: one round trip.
 */
async function insertMessages(query: Query, records: MessageRecord[], intake: OutboundIntake[] = []): Promise<void> {
  if (records.length === 0 && intake.length === 0) return;
  const column = <K extends keyof MessageRecord>(key: K): Array<MessageRecord[K]> => records.map((record) => record[key]);
  const intakeParams = intake.length === 0 ? [] : [timeOrderedId(), intakeText(intake)];
  await query(
    `${intake.length === 0 ? '' : 'WITH intake AS (INSERT INTO outbox_intake (intake_id, events) VALUES ($13, $14)) '}
     INSERT INTO messages (message_id, from_agent, to_agent, body, thread_id, sent_at, addressed_to, fanout_id, to_group, priority, task_id, task_state)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[])`,
    [column('messageId'), column('fromAgent'), column('toAgent'), column('body'), column('threadId'), column('sentAt'), column('addressedTo'), column('fanoutId'), column('toGroup'), column('priority'), column('taskId'), column('taskState'), ...intakeParams],
  );
}

/** The events a send queues for the outbound integrations (read once per batch, and only when a send asks). */
class OutboundEvents {
  private outlets: OutletRecord[] | null = null;
  readonly pending: OutboundIntake[] = [];

  constructor(private readonly query: Query) {}

  async add(input: SendInput, records: MessageRecord[]): Promise<void> {
    if (input.outbound === undefined || records.length === 0) return;
    this.outlets ??= await outletsWith(this.query);
    if (this.outlets.length > 0) this.pending.push(...input.outbound(records, this.outlets));
  }
}

/** A batch of sends in one transaction, each in a savepoint where it registers its speaker. */
async function writeBatch(query: Query, batch: SendInput[]): Promise<SendOutcome[]> {
  const outcomes: SendOutcome[] = [];
  const outbound = new OutboundEvents(query);
  // The roster rows each kind of address reads, once per batch, until a send registers someone.
  const seen = new Map<string, AgentRecord[]>();
  const pending: MessageRecord[] = [];
  for (const input of batch) {
    if (input.register.length === 0) {
      // Nothing written before the plan: a refusal needs no undoing. Its rows join the batch's one INSERT.
      try {
        const records = await planWith(query, input, seen);
        pending.push(...records);
        await outbound.add(input, records);
        outcomes.push({ records });
      } catch (error) {
        if (!(error instanceof PlanRefused)) throw error;
        outcomes.push({ error: error.reason });
      }
      continue;
    }
    // A send that registers its speaker runs in a savepoint: a refusal undoes the registration too.
    await insertMessages(query, pending.splice(0));
    seen.clear();
    await query('SAVEPOINT send');
    try {
      await registerWith(query, input.register, input.sentAt);
      const records = await planWith(query, input, new Map());
      const queued = outbound.pending.length;
      await outbound.add(input, records);
      // Queued inside the savepoint, so a send undone takes its events with it.
      await insertMessages(query, records, outbound.pending.splice(queued));
      await query('RELEASE SAVEPOINT send');
      outcomes.push({ records });
    } catch (error) {
      await query('ROLLBACK TO SAVEPOINT send');
      outcomes.push({ error: error instanceof PlanRefused ? error.reason : error });
    }
  }
  await insertMessages(query, pending, outbound.pending);
  return outcomes;
}

/** `committed`: called after each batch of sends has committed (the search index's background round follows them). */
export function postgresMail(pool: PostgresPool, committed: () => void): MailPort {
  const queue = new SendQueue({
    // After this tick's other sends have been queued.
    schedule: (flush) => queueMicrotask(flush),
    write: (batch) => pool.transaction([], (query) => writeBatch(query, batch)),
    failure: (error) => pool.translate(error),
    committed,
  });

  return {
    send: (input) => queue.send(input),

    async thread(threadId, limit) {
      if (limit <= 0) return [];
      return pool.read<MessageRecord>(`SELECT ${MESSAGE_COLUMNS} FROM messages WHERE thread_id = $1 ORDER BY sent_at, message_id LIMIT $2`, [threadId, limit]);
    },

    async threadIdsNamed(lookup, limit) {
      if (limit <= 0) return [];
      const found: string[] = [];
      for (const { from, to } of idRanges(lookup, 'thread_id', false)) {
        const rows = await pool.read<{ thread_id: string }>('SELECT DISTINCT thread_id FROM messages WHERE thread_id >= $1 AND thread_id < $2 ORDER BY thread_id LIMIT $3', [from, to, limit]);
        found.push(...rows.map((row) => row.thread_id));
      }
      return firstDistinct(found, limit);
    },

    async recentMessages(limit) {
      if (limit <= 0) return [];
      const rows = await pool.read<MessageRecord & { seq?: string }>(`SELECT * FROM (SELECT ${MESSAGE_COLUMNS}, seq FROM messages ORDER BY seq DESC LIMIT $1) x ORDER BY seq`, [limit]);
      return rows.map(({ seq: _seq, ...message }) => message);
    },
  };
}
