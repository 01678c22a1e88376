/**
 * An outbound event as it is queued: a fresh outbox row, and what receivers of a mail or task event
 * get of the message it is about. That is made when the event is taken from the outbox's intake, from
 * the message as stored: the intake names the message rather than copying it, so a send pays for its
 * body once.
 */
import { timeOrderedId } from './ids.js';
import type { MessageRecord, OutboxRecord } from './records.js';

/** An event queued for one integration, due at once, never tried: with an event id of its own. */
export function queuedRow(integration: string, event: string, messageId: string | null, payload: string, createdAt: string): OutboxRecord {
  return {
    eventId: timeOrderedId(),
    integration,
    event,
    messageId,
    payload,
    createdAt,
    state: 'queued',
    attempts: 0,
    nextAt: createdAt,
    leaseUntil: null,
    lastStatus: null,
    lastError: null,
    finishedAt: null,
  };
}

export function messageEventData(record: MessageRecord, event: 'mail' | 'task'): Record<string, unknown> {
  const data: Record<string, unknown> = {
    message_id: record.messageId,
    from: record.fromAgent,
    to: record.toAgent,
    addressed_to: record.addressedTo,
    body: record.body,
    thread_id: record.threadId,
    sent_at: record.sentAt,
    urgent: record.priority === 'urgent',
  };
  if (event === 'task') {
    data.task_id = record.taskId;
    data.task_state = record.taskState;
  }
  return data;
}
