/**
 * Ids as the page shows them: short, in the one form the whole bus uses (model/short-id.ts), which
 * every command and tool takes back. The full id stays in the API's answers and in the page's data
 * attributes.
 */
import { shortId as shortFormOf } from '../model/short-id.js';
import type { Message, Task } from './types.js';

/** An id's short form; nothing for no id. */
export function shortId(id: string | null | undefined): string {
  return id === null || id === undefined ? '' : shortFormOf(id);
}

/** A task's id as shown. */
export function taskRef(task: Pick<Task, 'id'>): string {
  return shortId(task.id);
}

/** A message's id as shown. */
export function messageRef(message: Pick<Message, 'message_id'>): string {
  return shortId(message.message_id);
}

/** A thread's id as shown. */
export function threadRef(threadId: string): string {
  return shortId(threadId);
}
