/** The words a hook shows the model: the new mail since its last turn, and why it may not stop yet. */
import type { MessageView } from '../core/views.js';

export const REPO_LEGEND =
  '(A message to everyone in a repo is handled by the first agent there to see it. You saw these first, so they are yours.)';
export const FYI_HEADER = 'For your information only — a repo-mate already has these; act only if one concerns your own work:';
export const STOP_HEADER = 'Pending messages from peers — handle them before stopping:';

function audience(message: MessageView, reader: string, readerClientAddress: string | null): string {
  if (message.kind === 'broadcast') return ' to everyone on the bus';
  if (message.kind === 'group') return ` to everyone in ${message.addressed_to ?? message.to}`;
  if (readerClientAddress !== null && message.to === readerClientAddress && reader !== readerClientAddress) return ` to any ${readerClientAddress} session`;
  return '';
}

/** A body's later lines indented under its first, so no body can pass for another message. */
export function indentBody(body: string): string {
  return body.replace(/\r\n?/g, '\n').split('\n').join('\n  ');
}

function line(message: MessageView, reader: string, readerClientAddress: string | null): string {
  return `- from ${message.from}${audience(message, reader, readerClientAddress)} at ${message.sent_at} (thread ${message.thread_id}): ${indentBody(message.body)}`;
}

function isFyi(message: MessageView, reader: string): boolean {
  return message.claimed_by !== null && message.claimed_by !== reader;
}

function actionableBlock(messages: MessageView[], reader: string, readerClientAddress: string | null): string[] {
  const lines = messages.map((message) => line(message, reader, readerClientAddress));
  if (messages.some((message) => message.kind === 'group')) lines.push(REPO_LEGEND);
  return lines;
}

/** The prompt hook's context, or null when there is no mail. */
export function promptContext(messages: MessageView[], reader: string, readerClientAddress: string | null): string | null {
  if (messages.length === 0) return null;
  const mine = messages.filter((message) => !isFyi(message, reader));
  const fyi = messages.filter((message) => isFyi(message, reader));
  const lines = [`[agent-bus] ${messages.length} new message(s) since last turn:`, ...actionableBlock(mine, reader, readerClientAddress)];
  if (fyi.length > 0) {
    lines.push(FYI_HEADER, ...fyi.map((message) => `${line(message, reader, readerClientAddress)} [already picked up by ${message.claimed_by}]`));
  }
  return lines.join('\n');
}

/** The pre-tool hook's mail, or null when there is none: read now, between tool calls, and acted on if it bears on the work. */
export function midTurnContext(messages: MessageView[], reader: string, readerClientAddress: string | null): string | null {
  if (messages.length === 0) return null;
  const urgent = messages.every((message) => message.urgent);
  return [
    `[agent-bus] ${messages.length} ${urgent ? 'urgent ' : ''}message(s) arrived during this turn; read them before your next step:`,
    ...actionableBlock(messages, reader, readerClientAddress),
  ].join('\n');
}

/** What a stop hook says of the tasks an agent took and has not closed, or null when there are none. */
export function heldTasksReminder(tasks: Array<{ id: string; title: string }>): string | null {
  if (tasks.length === 0) return null;
  return [
    `[agent-bus] You hold ${tasks.length === 1 ? 'a task' : `${tasks.length} tasks`} you took and have not closed:`,
    ...tasks.map((task) => `- ${task.id}: ${task.title}`),
    'Close each before you stop: complete_task(id, result) when it is finished, or fail_task(id, reason) if it cannot be (agent-bus task done ID --result … / task fail ID --reason …).',
  ].join('\n');
}

/** The stop hook's reason, or null when nothing needs this agent. */
export function stopReason(messages: MessageView[], reader: string, readerClientAddress: string | null): string | null {
  const mine = messages.filter((message) => !isFyi(message, reader));
  if (mine.length === 0) return null;
  return [STOP_HEADER, ...actionableBlock(mine, reader, readerClientAddress)].join('\n');
}

/** The line a stop hook that counts the turns it starts adds to its reason: which turn in a row this one is. */
export function keptLine(turn: number, limit: number): string {
  return `[agent-bus] kept working for mail: ${turn} of ${limit} turns in a row.`;
}
