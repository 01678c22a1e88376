/**
 * What a line typed in the chat does: a command, mail to one agent (`@name`),
 * or mail to the current target. Every outcome, good or bad, is one line said
 * back; bad input sends nothing.
 */
import { homedir } from 'node:os';
import { renderRoster } from '../render/roster.js';
import { printable, shortIdText } from '../render/format.js';
import type { Style } from '../render/style.js';
import type { BusClient } from '../client/bus-client.js';
import { nobodyReachedNote } from '../core/addressing.js';
import type { Env } from '../model/settings.js';
import type { AgentView } from '../core/views.js';
import { groupSends, sendLines, type SendRow } from './chat-render.js';
import { NEWLINE_MARK, restoreMarks } from './paste.js';
import { quoted } from '../model/quote.js';
import { isBusError } from '../model/errors.js';
import type { SendResult } from '../core/mail-ops.js';

const MAX_HISTORY = 1000;

export const COMMANDS = ['/to', '/agents', '/thread', '/history', '/clear', '/help', '/quit', '/exit'];
const TAKES_NO_ARGUMENT = new Set(['/agents', '/clear', '/help', '/quit', '/exit']);
const HELP = [
  '@<name> <body>     mail one agent',
  '/to <name|*|all>   set where plain text goes',
  '/agents            the agents on the bus, with unread counts',
  '/thread <id>       reprint a thread (an 8-character prefix is enough)',
  `/history [N]       the last N sends (default 10, at most ${MAX_HISTORY})`,
  '/clear             clear the screen',
  '/help, /quit, /exit',
  'plain text         mail the current target',
  'Pasted text is one message, its line breaks shown as ␤. Ctrl-C clears the line, or quits on an empty one.',
].join('\n');

/** What the commands need of the chat around them. */
export interface ChatSeat {
  client: BusClient;
  name: string;
  env: Env;
  style: Style;
  /** Print above the line being typed. */
  say(text: string): void;
  /** Follow a send's receipts: its ticks are said as they move. */
  follow(result: SendResult, to: string): void;
  target(): string;
  setTarget(target: string): void;
  clearScreen(): void;
}

/** The newest `count` sends, a fan-out counted once. */
export async function recentSends(client: BusClient, count: number): Promise<SendRow[]> {
  for (let fetch = count * 4; ; fetch *= 4) {
    const messages = await client.recentMessages(fetch);
    const rows = groupSends(messages);
    if (rows.length > count) return rows.slice(rows.length - count);
    if (messages.length < fetch) return rows;
  }
}

/** Tab completion: commands, `@` names, `/to` targets, else names. */
export function completions(line: string, agents: AgentView[]): [string[], string] {
  const words = line.split(/\s+/);
  const word = words.at(-1) ?? '';
  const names = agents.map((agent) => agent.name);
  const repos = [...new Set(agents.map((agent) => agent.group))];
  let pool: string[];
  if (words.length === 1 && word.startsWith('/')) pool = COMMANDS;
  else if (words.length === 1 && word.startsWith('@')) pool = names.map((agent) => `@${agent}`);
  else if (words.length === 2 && words[0] === '/to') pool = ['*', 'all', ...repos, ...names.filter((agent) => !repos.includes(agent))];
  else pool = names;
  return [pool.filter((candidate) => candidate.startsWith(word)), word];
}

async function send(seat: ChatSeat, to: string, body: string): Promise<void> {
  const { say } = seat;
  if (body.trim() === '') {
    say('[chat] nothing to send: the message is empty');
    return;
  }
  try {
    const { result } = await seat.client.send({ to, body });
    if (result.recipients.length === 0) {
      say(`[chat] ${printable(nobodyReachedNote(result.kind, to))}`);
      return;
    }
    if (result.kind === 'direct') say(`[chat] sent → ${printable(to)} (id ${shortIdText(result.thread_id)}) ✓`);
    else say(`[chat] ${result.kind === 'broadcast' ? 'broadcast' : `to ${printable(to)}`} → ${result.recipients.map(printable).join(', ')} (${result.recipients.length} msg) ✓`);
    seat.follow(result, result.kind === 'broadcast' ? 'all' : to);
  } catch (error) {
    // Not put back on the line by itself: what was typed since would be spliced into it.
    say(`[chat] not sent: ${printable((error as Error).message)} (Up brings the line back)`);
  }
}

async function retarget(seat: ChatSeat, wanted: string): Promise<void> {
  const next = wanted === 'all' ? '*' : wanted;
  const roster = await seat.client.agents();
  if (next !== '*' && !roster.some((agent) => agent.name === next || agent.group === next)) {
    seat.say(`[chat] no agent ${quoted(next)} on the bus; /agents lists them`);
    return;
  }
  seat.setTarget(next);
  seat.say(`[chat] target → ${printable(next)}`);
}

/** `/thread ID`: a thread by its id as shown, the start of one, or one of its messages' ids. */
async function showThread(seat: ChatSeat, given: string): Promise<void> {
  let messages;
  try {
    messages = await seat.client.thread(given, 500);
  } catch (error) {
    // No such thread, or a start several share: the bus's own words, on the chat's line.
    if (!isBusError(error)) throw error;
    seat.say(`[chat] ${printable(error.message)}`);
    return;
  }
  seat.say(sendLines(groupSends(messages), seat.style, true));
}

async function showHistory(seat: ChatSeat, argument: string): Promise<void> {
  const count = argument === '' ? 10 : /^\d+$/.test(argument) ? Number(argument) : Number.NaN;
  if (!(count >= 1 && count <= MAX_HISTORY)) {
    seat.say(`[chat] /history [N], N a whole number from 1 to ${MAX_HISTORY}`);
    return;
  }
  const rows = await recentSends(seat.client, count);
  seat.say(rows.length > 0 ? sendLines(rows, seat.style) : '(no sends yet)');
}

/** Run one typed line (already trimmed, not empty); false when the chat should end. */
export async function runLine(seat: ChatSeat, text: string): Promise<boolean> {
  const { say } = seat;
  // A pasted line break ends the first word too: '@alpha␤body' is mail to alpha, '/quit␤…' no quit.
  const command = text.split(new RegExp(`[\\s${NEWLINE_MARK}]`))[0] ?? '';
  const argument = text.slice(command.length).trim();
  if (command.startsWith('/')) {
    if (!COMMANDS.includes(command)) {
      say(`[chat] unknown command ${quoted(command)}; /help lists them`);
      return true;
    }
    if (TAKES_NO_ARGUMENT.has(command) && argument !== '') {
      say(`[chat] ${command} takes nothing after it`);
      return true;
    }
  }
  switch (command) {
    case '/quit':
    case '/exit':
      return false;
    case '/help':
      say(HELP);
      return true;
    case '/clear':
      seat.clearScreen();
      return true;
    case '/agents':
      say(renderRoster(await seat.client.agents(), seat.style, seat.env.HOME ?? homedir(), seat.name).trimEnd());
      return true;
    case '/to':
      if (argument === '') say(`[chat] target is ${printable(seat.target())}; /to <name|*|all> changes it`);
      else await retarget(seat, argument);
      return true;
    case '/thread':
      if (argument === '') say('[chat] /thread <id or 8-character prefix>');
      else await showThread(seat, argument);
      return true;
    case '/history':
      await showHistory(seat, argument);
      return true;
  }
  if (command.startsWith('@')) {
    const to = command.slice(1);
    if (to === '') say('[chat] @<name> <body>');
    else await send(seat, to, restoreMarks(text.slice(command.length + 1)));
  } else await send(seat, seat.target(), restoreMarks(text));
  return true;
}
