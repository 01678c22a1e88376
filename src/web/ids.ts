/**
 * Ids as the page shows them: short. Every task, message and thread id the page shows goes through
 * here, so the form shown is decided in one place; the full id stays in the API's answers and in the
 * page's data attributes. A row that carries its own short form (`short_id`) is shown by it.
 */
import type { Message, Task } from './types.js';

/** The first characters of an id. */
export function shortId(id: string | null | undefined): string {
  return id === null || id === undefined ? '' : id.slice(0, 8);
}

/** The short form a row carries, where it carries one; else the start of its id. */
function shortOf(id: string, row: object): string {
  const own = (row as { short_id?: unknown }).short_id;
  return typeof own === 'string' && own !== '' ? own : shortId(id);
}

/** A task's id as shown. */
export function taskRef(task: Pick<Task, 'id'>): string {
  return shortOf(task.id, task);
}

/** A message's id as shown. */
export function messageRef(message: Pick<Message, 'message_id'>): string {
  return shortOf(message.message_id, message);
}

/** A thread's id as shown. */
export function threadRef(threadId: string): string {
  return shortId(threadId);
}
