/**
 * `agent-bus chat`: the human's seat on the bus. node:readline keeps the line
 * being typed intact: mail arriving is printed above it and the prompt is
 * redrawn with the text and cursor where they were. Arrival is event-driven
 * (file-system events on the database's folder and SQLite's data_version).
 */
import { appendFileSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { constants, homedir } from 'node:os';
import { join } from 'node:path';
import readline from 'node:readline';
import type { Bus } from '../core/bus.js';
import { busPaths } from '../core/paths.js';
import { registrationsFor } from '../core/roster.js';
import type { Env } from '../core/settings.js';
import { renderRoster } from '../cli/commands/agents.js';
import { printable, shortThread } from '../cli/format.js';
import type { Style } from '../cli/style.js';
import { eachChange, folderWaiter } from '../core/store-changes.js';
import { parseSubscriptions, receives } from '../core/notices.js';
import { StatusLine, statusText, type Terminal } from './status-line.js';
import { BRACKETED_PASTE_OFF, BRACKETED_PASTE_ON, PasteGuard, restoreMarks } from './paste.js';
import { arrivalLine, groupSends, noticeLine, sendLines, type SendRow } from './chat-render.js';
import { takeSeat } from './seat.js';
import { controlJob } from './job-control.js';

/** The fallback when no file-system event comes. */
const POLL_MS = 2000;
/** Mail is taken this many messages at a time, until none is left. */
const INBOX_BATCH = 100;
const MAX_HISTORY = 1000;
const HISTORY_LINES = 500;

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

export interface ChatOptions {
  bus: Bus;
  name: string;
  env: Env;
  cwd: string;
  input: NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?(mode: boolean): unknown };
  output: Terminal;
  style: Style;
}

/** The newest `count` sends, a fan-out counted once. */
async function recentSends(bus: Bus, count: number): Promise<SendRow[]> {
  for (let fetch = count * 4; ; fetch *= 4) {
    const messages = await bus.recentMessages(fetch);
    const rows = groupSends(messages);
    if (rows.length > count) return rows.slice(rows.length - count);
    if (messages.length < fetch) return rows;
  }
}

/** The newest lines of the history file, newest first; a file grown past twice that is cut back to them. */
function loadHistory(path: string): string[] {
  let lines: string[];
  try {
    lines = readFileSync(path, 'utf8').split('\n').filter(Boolean);
  } catch {
    return [];
  }
  const kept = lines.slice(-HISTORY_LINES);
  if (lines.length > 2 * HISTORY_LINES) {
    try {
      writeFileSync(`${path}.tmp`, `${kept.join('\n')}\n`, { mode: 0o600 });
      renameSync(`${path}.tmp`, path);
    } catch {
      // Kept whole: cutting it back is tidiness, not a need.
    }
  }
  return kept.reverse();
}

export async function runChat(options: ChatOptions): Promise<number> {
  const { bus, name, env, output, style } = options;
  await bus.register(registrationsFor(name, options.cwd, false));
  let target = '*';
  const paths = busPaths(env);
  const historyPath = join(paths.folder, 'chat_history');
  const history = loadHistory(historyPath);

  const completer = (line: string, callback: (error: Error | null, result: [string[], string]) => void): void => {
    const words = line.split(/\s+/);
    const word = words.at(-1) ?? '';
    void bus.agents().then(
      (agents) => {
        const names = agents.map((agent) => agent.name);
        const repos = [...new Set(agents.map((agent) => agent.group))];
        let pool: string[];
        if (words.length === 1 && word.startsWith('/')) pool = COMMANDS;
        else if (words.length === 1 && word.startsWith('@')) pool = names.map((agent) => `@${agent}`);
        else if (words.length === 2 && words[0] === '/to') pool = ['*', 'all', ...repos, ...names.filter((agent) => !repos.includes(agent))];
        else pool = names;
        callback(null, [pool.filter((candidate) => candidate.startsWith(word)), word]);
      },
      () => callback(null, [[], word]),
    );
  };

  // Everything goes through the status line's stream, so every redraw repaints it.
  const screen = new StatusLine(output, (columns) => {
    const status = statusText(printable(`${name} → ${target}`), columns);
    return `${' '.repeat(status.padding)}${style.bold(status.text)}${style.dim(status.hint)}`;
  });
  const keys = new PasteGuard(options.input);
  const terminal = Boolean(output.isTTY);
  if (terminal) output.write(BRACKETED_PASTE_ON);
  // Give the terminal back as it was however the process ends.
  let release = (): void => undefined;
  const restore = (): void => {
    release();
    screen.dispose();
    if (terminal) output.write(BRACKETED_PASTE_OFF);
  };
  process.once('exit', restore);
  const rl = readline.createInterface({ input: keys, output: screen, completer, history, historySize: HISTORY_LINES, terminal: true });
  const job = controlJob(rl, {
    release: () => {
      screen.suspend();
      if (terminal) output.write(BRACKETED_PASTE_OFF);
      keys.setRawMode(false);
    },
    retake: () => {
      // The window may have changed size while the chat was stopped (no SIGWINCH reaches a stopped job).
      (output as { _refreshSize?: () => void })._refreshSize?.();
      // Whatever was written meanwhile stays: the prompt comes back on a line of its own below it.
      output.write(`\r\n${'\n'.repeat(redrawRise(0))}`);
      screen.resume();
      if (terminal) output.write(BRACKETED_PASTE_ON);
      keys.setRawMode(true);
      rl.prompt(true);
      waiter.interrupt();
    },
  });
  const setPrompt = (): void => rl.setPrompt(`[${name} → ${target}] `);
  const say = (text: string): void => {
    // Above the line being typed: erase it (all its rows, when it wraps), print,
    // and redraw it as it was. readline's redraw first moves up by the rows it
    // last knew the cursor to be below the line's start (`prevRows`, stale
    // after pasted text, which it writes without a redraw), so that many
    // newlines follow the text.
    const rows = rl.getCursorPos().rows;
    readline.moveCursor(screen, 0, -rows);
    readline.cursorTo(screen, 0);
    readline.clearScreenDown(screen);
    screen.write(`${text}\n${'\n'.repeat(redrawRise(rows))}`);
    rl.prompt(true);
  };
  /** How far up readline's next redraw will move before drawing. */
  const redrawRise = (fallback: number): number => {
    const known = (rl as unknown as { prevRows?: unknown }).prevRows;
    return typeof known === 'number' ? known : fallback;
  };
  /** Each problem once, not at every look. */
  const told = new Set<string>();
  const sayOnce = (text: string): void => {
    if (told.has(text)) return;
    told.add(text);
    say(text);
  };

  screen.write(`agent-bus chat — connected as '${printable(name)}' (default → ${target}). /help for commands.\n`);
  const agents = await bus.agents();
  screen.write(`agents on the bus (${agents.length}):\n${renderRoster(agents, style, env.HOME ?? homedir(), name)}`);
  const recent = await recentSends(bus, 10);
  screen.write(`recent activity (last ${recent.length} sends):\n${recent.length > 0 ? sendLines(recent, style) : '  (no sends yet)'}\n`);
  const seat = takeSeat(paths.folder, name);
  release = seat.release;
  if (seat.others.length > 0) {
    screen.write(`[chat] another chat is connected as '${printable(name)}' (pid ${seat.others.join(', ')}): mail to you goes to whichever reads it first\n`);
  }
  setPrompt();
  rl.prompt();

  const remember = (line: string): void => {
    try {
      appendFileSync(historyPath, `${line}\n`, { mode: 0o600 });
    } catch (error) {
      sayOnce(`[chat] history is not being saved: ${printable((error as Error).message)}`);
    }
  };

  // The database this chat opened; a file removed or replaced under it is said, not silently written past.
  const opened = statSync(paths.db, { throwIfNoEntry: false });
  const checkDatabase = (): void => {
    if (!opened) return;
    const now = statSync(paths.db, { throwIfNoEntry: false });
    if (!now || now.ino !== opened.ino || now.dev !== opened.dev) {
      sayOnce(`[chat] the database ${printable(paths.db)} was removed or replaced; quit and start the chat again to reconnect`);
    }
  };

  const subscriptions = parseSubscriptions(env);
  const noticed = new Set<string>();
  const deliver = async (): Promise<void> => {
    for (;;) {
      const mail = await bus.readInbox({ reader: name, markRead: true, deliver: true, limit: INBOX_BATCH });
      for (const message of mail) say(arrivalLine(message, name, style));
      if (mail.length < INBOX_BATCH) break;
    }
    // Live critical and alert notices for this seat's subscriptions, each shown once.
    for (const notice of await bus.notices.list()) {
      if (notice.severity === 'info' || noticed.has(notice.notice_id) || !receives(subscriptions, notice.channel)) continue;
      noticed.add(notice.notice_id);
      say(noticeLine(notice, style));
    }
  };

  const send = async (to: string, body: string): Promise<void> => {
    if (body.trim() === '') {
      say('[chat] nothing to send: the message is empty');
      return;
    }
    try {
      const result = await bus.send({ from: name, to, body, register: registrationsFor(name, options.cwd, false) });
      if (result.recipients.length === 0) say('[chat] nobody to deliver to — message dropped');
      else if (result.kind === 'direct') say(`[chat] sent → ${printable(to)} (id ${shortThread(result.thread_id)})`);
      else say(`[chat] ${result.kind === 'broadcast' ? 'broadcast' : `to ${printable(to)}`} → ${result.recipients.map(printable).join(', ')} (${result.recipients.length} msg)`);
    } catch (error) {
      // Not put back on the line by itself: what was typed since would be spliced into it.
      say(`[chat] not sent: ${printable((error as Error).message)} (Up brings the line back)`);
    }
  };

  const retarget = async (wanted: string): Promise<void> => {
    const next = wanted === 'all' ? '*' : wanted;
    const roster = await bus.agents();
    const known = next === '*' || roster.some((agent) => agent.name === next || agent.group === next);
    if (!known) {
      say(`[chat] no agent '${printable(next)}' on the bus; /agents lists them`);
      return;
    }
    target = next;
    setPrompt();
    say(`[chat] target → ${printable(target)}`);
  };

  const showThread = async (prefix: string): Promise<void> => {
    const ids = await bus.threadIdsStartingWith(prefix, 6);
    const [only] = ids;
    if (only === undefined) say(`[chat] no thread starting '${printable(prefix)}'`);
    else if (ids.length > 1) {
      // Each cut as short as tells it from the others, and never under 8 characters.
      let cut = Math.max(8, prefix.length + 1);
      while (cut < 64 && new Set(ids.map((id) => id.slice(0, cut))).size < ids.length) cut++;
      const shown = ids.slice(0, 5).map((id) => printable(id.slice(0, cut)));
      say(`[chat] '${printable(prefix)}' starts more than one thread (${shown.join(', ')}${ids.length > 5 ? ', …' : ''}); type more of it`);
    } else say(sendLines(groupSends(await bus.thread(only, 500)), style, true));
  };

  /** Runs one line; false when the chat should end. */
  const handle = async (line: string): Promise<boolean> => {
    const text = line.trim();
    if (text === '') return true;
    remember(text);
    // A pasted line break ends the first word too: '@alpha␤body' is mail to alpha, '/quit␤…' no quit.
    const command = text.split(/[\s␤]/)[0] ?? '';
    const argument = text.slice(command.length).trim();
    if (command.startsWith('/')) {
      if (!COMMANDS.includes(command)) {
        say(`[chat] unknown command '${printable(command)}'; /help lists them`);
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
        screen.write('\u001b[2J\u001b[H');
        rl.prompt(true);
        return true;
      case '/agents':
        say(renderRoster(await bus.agents(), style, env.HOME ?? homedir(), name).trimEnd());
        return true;
      case '/to':
        if (argument === '') say(`[chat] target is ${printable(target)}; /to <name|*|all> changes it`);
        else await retarget(argument);
        return true;
      case '/thread':
        if (argument === '') say('[chat] /thread <id or 8-character prefix>');
        else await showThread(argument);
        return true;
      case '/history': {
        const count = argument === '' ? 10 : /^\d+$/.test(argument) ? Number(argument) : Number.NaN;
        if (!(count >= 1 && count <= MAX_HISTORY)) say(`[chat] /history [N], N a whole number from 1 to ${MAX_HISTORY}`);
        else {
          const rows = await recentSends(bus, count);
          say(rows.length > 0 ? sendLines(rows, style) : '(no sends yet)');
        }
        return true;
      }
    }
    if (command.startsWith('@')) {
      const to = command.slice(1);
      if (to === '') say('[chat] @<name> <body>');
      else await send(to, restoreMarks(text.slice(command.length + 1)));
    } else await send(target, restoreMarks(text));
    return true;
  };

  const waiter = folderWaiter(paths.db);
  let closed = false;
  /** A change seen while stopped: its mail is taken when the chat has the terminal again. */
  let missed = false;
  const loop = eachChange({ changeCounter: () => bus.store.changeCounter(), waiter, pollMs: POLL_MS, stopped: () => closed }, async (changed) => {
    if (job.away) {
      missed ||= changed;
      return undefined;
    }
    checkDatabase();
    if (changed || missed) {
      missed = false;
      await deliver().catch((error: unknown) => sayOnce(`[chat] cannot read the bus: ${printable((error as Error).message)}`));
    }
    return undefined;
  });

  let endedBy: NodeJS.Signals | null = null;
  const end = (signal: NodeJS.Signals) => (): void => {
    endedBy = signal;
    rl.close();
  };
  const signals: Array<[NodeJS.Signals, () => void]> = [
    ['SIGTERM', end('SIGTERM')],
    ['SIGHUP', end('SIGHUP')],
  ];
  for (const [signal, listener] of signals) process.on(signal, listener);

  await new Promise<void>((resolve) => {
    let queue = Promise.resolve(true);
    rl.on('line', (line) => {
      queue = queue.then(async (open) => {
        if (!open) return false;
        const keep = await handle(line).catch((error: unknown) => {
          say(`[chat] ${printable((error as Error).message)}`);
          return true;
        });
        if (!keep) rl.close();
        else rl.prompt(true);
        return keep;
      });
    });
    rl.on('close', () => resolve());
    // Ctrl-C clears what is typed; on an empty line it quits.
    rl.on('SIGINT', () => {
      if (rl.line === '') rl.close();
      else {
        rl.write(null, { ctrl: true, name: 'e' });
        rl.write(null, { ctrl: true, name: 'u' });
      }
    });
  });
  closed = true;
  for (const [signal, listener] of signals) process.removeListener(signal, listener);
  job.dispose();
  waiter.interrupt();
  waiter.close();
  await loop;
  keys.detach();
  process.removeListener('exit', restore);
  restore();
  output.write('\n');
  // Ended by a signal: the exit status says which, as a shell expects (128 + its number).
  return endedBy === null ? 0 : 128 + constants.signals[endedBy];
}
