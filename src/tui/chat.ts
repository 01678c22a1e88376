/**
 * `agent-bus chat`: the human's seat on the bus. node:readline keeps the line
 * being typed intact: mail arriving is printed above it and the prompt is
 * redrawn with the text and cursor where they were. Arrival is event-driven
 * (file-system events on the database's folder and SQLite's data_version).
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import readline from 'node:readline';
import type { Bus } from '../core/bus.js';
import { busPaths } from '../core/paths.js';
import { registrationsFor } from '../core/roster.js';
import type { Env } from '../core/settings.js';
import type { MessageView } from '../core/views.js';
import { renderRoster } from '../cli/commands/agents.js';
import { clockTime, oneLine, padStyled, printable, shortThread } from '../cli/format.js';
import type { Style } from '../cli/style.js';
import { eachChange, folderWaiter } from '../core/store-changes.js';
import { parseSubscriptions, receives } from '../core/notices.js';
import { StatusLine, statusText, type Terminal } from './status-line.js';

/** The fallback when no file-system event comes. */
const POLL_MS = 2000;

export const COMMANDS = ['/to', '/agents', '/thread', '/history', '/clear', '/help', '/quit', '/exit'];
const HELP = [
  '@<name> <body>     mail one agent',
  '/to <name|*|all>   set where plain text goes',
  '/agents            the agents on the bus, with unread counts',
  '/thread <id>       reprint a thread (an 8-character prefix is enough)',
  '/history [N]       the last N sends (default 10)',
  '/clear             clear the screen',
  '/help, /quit, /exit',
  'plain text         mail the current target',
].join('\n');

export interface ChatOptions {
  bus: Bus;
  name: string;
  env: Env;
  cwd: string;
  input: NodeJS.ReadableStream;
  output: Terminal;
  style: Style;
}

/** Send rows with the names in aligned columns, as in the spec's "recent activity". */
function sendLines(messages: MessageView[], style: Style): string {
  const width = (pick: (message: MessageView) => string): number => Math.max(0, ...messages.map((message) => [...printable(pick(message))].length));
  const fromWidth = width((message) => message.from);
  const toWidth = width((message) => message.to);
  return messages
    .map((message) => {
      const from = padStyled(style.agent(message.from), printable(message.from), fromWidth);
      const to = padStyled(style.agent(message.to), printable(message.to), toWidth);
      return `  ${style.dim(clockTime(message.sent_at))}  ${from} → ${to}  ${oneLine(message.body)} ${style.dim(`[${shortThread(message.thread_id)}]`)}`;
    })
    .join('\n');
}

export async function runChat(options: ChatOptions): Promise<number> {
  const { bus, name, env, output, style } = options;
  await bus.register(registrationsFor(name, options.cwd, false));
  let target = '*';
  const historyPath = join(busPaths(env).folder, 'chat_history');
  let history: string[] = [];
  try {
    history = readFileSync(historyPath, 'utf8').split('\n').filter(Boolean).reverse().slice(0, 500);
  } catch {
    history = [];
  }
  const names = async (): Promise<string[]> => (await bus.agents()).map((agent) => agent.name);
  let known = await names();
  const completer = (line: string): [string[], string] => {
    const word = line.split(/\s+/).at(-1) ?? '';
    const pool = word.startsWith('/') ? COMMANDS : word.startsWith('@') ? known.map((agent) => `@${agent}`) : known;
    const hits = pool.filter((candidate) => candidate.startsWith(word));
    return [hits, word];
  };
  // Everything goes through the status line's stream, so every redraw repaints it.
  const screen = new StatusLine(output, (columns) => {
    const status = statusText(`${name} → ${target}`, columns);
    return `${' '.repeat(status.padding)}${style.bold(printable(status.text))}${style.dim(status.hint)}`;
  });
  // Give the terminal its whole height back however the process ends.
  const restore = (): void => screen.dispose();
  process.once('exit', restore);
  const rl = readline.createInterface({ input: options.input, output: screen, completer, history, historySize: 500, terminal: true });
  const setPrompt = (): void => rl.setPrompt(`[${name} → ${target}] `);
  const say = (text: string): void => {
    // Above the line being typed: erase it (all its rows, when it wraps), print,
    // and redraw it as it was. readline's redraw first moves up by the rows it
    // last knew the cursor to be below the line's start (`prevRows`, stale
    // after pasted text, which it writes without a redraw), so that many
    // newlines follow the text.
    const rows = rl.getCursorPos().rows;
    const known = (rl as unknown as { prevRows?: unknown }).prevRows;
    readline.moveCursor(screen, 0, -rows);
    readline.cursorTo(screen, 0);
    readline.clearScreenDown(screen);
    screen.write(`${text}\n${'\n'.repeat(typeof known === 'number' ? known : rows)}`);
    rl.prompt(true);
  };

  screen.write(`agent-bus chat — connected as '${printable(name)}' (default → ${target}). /help for commands.\n`);
  const agents = await bus.agents();
  screen.write(`agents on the bus (${agents.length}):\n${renderRoster(agents, style, env.HOME ?? homedir(), name)}`);
  const recent = await bus.recentMessages(10);
  screen.write(`recent activity (last ${recent.length} sends):\n${sendLines(recent, style)}${recent.length > 0 ? '\n' : ''}`);
  setPrompt();
  rl.prompt();

  const subscriptions = parseSubscriptions(env);
  const noticed = new Set<string>();
  const deliver = async (): Promise<void> => {
    const mail = await bus.readInbox({ reader: name, markRead: true, deliver: true, limit: 100 });
    for (const message of mail) say(`<${style.agent(message.from)} → ${style.agent(name)}> ${style.dim(`[${shortThread(message.thread_id)}]`)} ${printable(message.body)}`);
    // Live critical and alert notices for this seat's subscriptions, each shown once.
    for (const notice of await bus.notices.list()) {
      if (notice.severity === 'info' || noticed.has(notice.notice_id) || !receives(subscriptions, notice.channel)) continue;
      noticed.add(notice.notice_id);
      const label = notice.severity === 'critical' ? style.bold(style.warn('[CRITICAL]')) : style.warn('[ALERT]');
      say(`${label} ${notice.channel === null ? 'global' : `#${printable(notice.channel)}`} from ${printable(notice.source)}: ${printable(notice.message)}`);
    }
  };

  const send = async (to: string, body: string): Promise<void> => {
    if (body.trim() === '') {
      say("[chat] nothing to send: the message is empty");
      return;
    }
    try {
      const result = await bus.send({ from: name, to, body, register: registrationsFor(name, options.cwd, false) });
      if (result.recipients.length === 0) say('[chat] nobody to deliver to — message dropped');
      else if (result.kind === 'direct') say(`[chat] sent → ${printable(to)} (id ${shortThread(result.message_ids[0] ?? '')})`);
      else say(`[chat] ${result.kind === 'broadcast' ? 'broadcast' : `to ${printable(to)}`} → ${result.recipients.map(printable).join(', ')} (${result.recipients.length} msg)`);
    } catch (error) {
      say(`[chat] not sent: ${(error as Error).message}`);
    }
  };

  const handle = async (line: string): Promise<boolean> => {
    const text = line.trim();
    if (text !== '') appendFileSync(historyPath, `${text.replace(/\n/g, ' ')}\n`, { mode: 0o600 });
    if (text === '') return true;
    if (text === '/quit' || text === '/exit') return false;
    if (text === '/help') say(HELP);
    else if (text === '/clear') {
      screen.write('\u001b[2J\u001b[H');
      rl.prompt(true);
    } else if (text === '/agents') {
      known = await names();
      say(renderRoster(await bus.agents(), style, env.HOME ?? homedir(), name).trimEnd());
    } else if (text.startsWith('/to')) {
      const next = text.slice(3).trim();
      if (next === '') say(`[chat] target is ${target}; /to <name|*|all> changes it`);
      else {
        const wanted = next === 'all' ? '*' : next;
        known = await names();
        const repos = new Set(known.map((agent) => agent.split('/')[0]));
        if (wanted !== '*' && !known.includes(wanted) && !repos.has(wanted)) say(`[chat] no agent '${printable(wanted)}' on the bus; /agents lists them`);
        else {
          target = wanted;
          setPrompt();
          say(`[chat] target → ${target}`);
        }
      }
    } else if (text.startsWith('/thread')) {
      const prefix = text.slice(7).trim();
      if (prefix === '') say('[chat] /thread <id or 8-character prefix>');
      else {
        const match = (await bus.recentMessages(1000)).find((message) => message.thread_id.startsWith(prefix));
        if (!match) say(`[chat] no thread starting '${printable(prefix)}'`);
        else say(sendLines(await bus.thread(match.thread_id, 200), style));
      }
    } else if (text.startsWith('/history')) {
      const count = Number(text.slice(8).trim() || 10);
      if (!Number.isInteger(count) || count < 1) say('[chat] /history [N], N a whole number ≥ 1');
      else say(sendLines(await bus.recentMessages(count), style) || '(no sends yet)');
    } else if (text.startsWith('/')) say(`[chat] unknown command '${printable(text.split(/\s+/)[0] ?? '')}'; /help lists them`);
    else if (text.startsWith('@')) {
      const space = text.indexOf(' ');
      const to = text.slice(1, space < 0 ? undefined : space);
      const body = space < 0 ? '' : text.slice(space + 1);
      if (to === '') say('[chat] @<name> <body>');
      else await send(to, body);
    } else await send(target, text);
    return true;
  };

  const waiter = folderWaiter(busPaths(env).db);
  let closed = false;
  const loop = eachChange({ changeCounter: () => bus.store.changeCounter(), waiter, pollMs: POLL_MS, stopped: () => closed }, async (changed) => {
    if (changed) await deliver().catch(() => undefined);
    return undefined;
  });

  await new Promise<void>((resolve) => {
    let queue = Promise.resolve(true);
    rl.on('line', (line) => {
      queue = queue.then(async (open) => {
        if (!open) return false;
        const keep = await handle(line);
        if (!keep) rl.close();
        else rl.prompt(true);
        return keep;
      });
    });
    rl.on('close', () => resolve());
    rl.on('SIGINT', () => rl.close());
  });
  closed = true;
  waiter.interrupt();
  waiter.close();
  await loop;
  process.removeListener('exit', restore);
  screen.dispose();
  output.write('\n');
  return 0;
}
