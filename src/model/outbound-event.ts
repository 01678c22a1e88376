/**
 * What receivers of an outbound mail or task event get of the message it is about. Made when the
 * event is taken from the outbox's intake, from the message as stored: the intake names the message
 * rather than copying it, so a send pays for its body once.
 */
import type { MessageRecord } from './records.js';

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
