/**
 * `agent-bus chat`: the human's seat on the bus. node:readline keeps the line
 * being typed intact: mail arriving is printed above it and the prompt is
 * redrawn with the text and cursor where they were. Arrival is event-driven
 * (file-system events on the database's folder and SQLite's data_version).
 */
import { statSync } from 'node:fs';
import { constants, homedir } from 'node:os';
import { join } from 'node:path';
import readline from 'node:readline';
import type { BusClient } from '../client/bus-client.js';
import { busPaths } from '../adapters/paths.js';
import type { Env } from '../model/settings.js';
import { renderRoster } from '../render/roster.js';
import { printable } from '../render/format.js';
import type { Style } from '../render/style.js';
import { eachChange } from '../core/store-changes.js';
import { parseSubscriptions, receives } from '../core/subscriptions.js';
import { busDotEnv } from '../adapters/dot-env.js';
import { StatusLine, statusText, type Terminal } from './status-line.js';
import { BRACKETED_PASTE_OFF, BRACKETED_PASTE_ON, PasteGuard } from './paste.js';
import { arrivalLine, noticeLine, sendLines } from './chat-render.js';
import { completions, recentSends, runLine, type ChatSeat } from './chat-commands.js';
import { appendHistory, HISTORY_LINES, loadHistory } from './chat-history.js';
import { takeSeat } from './seat.js';
import { SentReceipts } from './chat-receipts.js';
import { controlJob } from './job-control.js';
import { quoted } from '../model/quote.js';

/** The fallback when no file-system event comes. */
const POLL_MS = 2000;
/** Mail is taken this many messages at a time, until none is left. */
const INBOX_BATCH = 100;

export interface ChatOptions {
  /** The bus, here or at a hub; the seat speaks as its speaker, `name`. */
  client: BusClient;
  name: string;
  env: Env;
  input: NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?(mode: boolean): unknown };
  output: Terminal;
  style: Style;
}

export async function runChat(options: ChatOptions): Promise<number> {
  const { client, name, env, output, style } = options;
  await client.register();
  let target = '*';
  const paths = busPaths(env);
  const historyPath = join(paths.folder, 'chat_history');
  const history = loadHistory(historyPath);

  const completer = (line: string, callback: (error: Error | null, result: [string[], string]) => void): void => {
    // The roster read at each Tab, so agents who joined since the chat started are offered too.
    void client.agents().then(
      (agents) => callback(null, completions(line, agents)),
      () => callback(null, [[], line]),
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
      feed.interrupt();
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

  screen.write(`agent-bus chat — connected as ${quoted(name)} (default → ${target}). /help for commands.\n`);
  const agents = await client.agents();
  screen.write(`agents on the bus (${agents.length}):\n${renderRoster(agents, style, env.HOME ?? homedir(), name)}`);
  const recent = await recentSends(client, 10);
  screen.write(`recent activity (last ${recent.length} sends):\n${recent.length > 0 ? sendLines(recent, style) : '  (no sends yet)'}\n`);
  const taken = takeSeat(paths.folder, name);
  release = taken.release;
  if (taken.others.length > 0) {
    screen.write(`[chat] another chat is connected as ${quoted(name)} (pid ${taken.others.join(', ')}): mail to you goes to whichever reads it first\n`);
  }
  setPrompt();
  rl.prompt();

  const remember = (line: string): void => {
    const failure = appendHistory(historyPath, line);
    if (failure) sayOnce(`[chat] history is not being saved: ${printable(failure.message)}`);
  };

  // The database this chat opened; a file removed or replaced under it is said, not silently written past.
  // Over a hub there is no database here to watch.
  const database = client.location.kind === 'here' ? client.location.database : null;
  const opened = database === null ? undefined : statSync(database, { throwIfNoEntry: false });
  const checkDatabase = (): void => {
    if (!opened) return;
    const now = statSync(database as string, { throwIfNoEntry: false });
    if (!now || now.ino !== opened.ino || now.dev !== opened.dev) {
      sayOnce(`[chat] the database ${printable(database as string)} was removed or replaced; quit and start the chat again to reconnect`);
    }
  };

  const receipts = new SentReceipts(client);
  const subscriptions = parseSubscriptions(env, () => busDotEnv(env));
  const noticed = new Set<string>();
  const deliver = async (): Promise<void> => {
    for (;;) {
      const { messages: mail } = await client.readInbox({ markRead: true, limit: INBOX_BATCH, way: 'chat' });
      for (const message of mail) say(arrivalLine(message, name, style));
      if (mail.length < INBOX_BATCH) break;
    }
    // The chat's own sends that moved on: their ticks.
    if (receipts.size > 0) for (const line of await receipts.look(style)) say(line);
    // Live critical and alert notices for this seat's subscriptions, each shown once.
    for (const notice of await client.notices.list()) {
      if (notice.severity === 'info' || noticed.has(notice.notice_id) || !receives(subscriptions, notice.channel)) continue;
      noticed.add(notice.notice_id);
      say(noticeLine(notice, style));
    }
  };

  const seat: ChatSeat = {
    client,
    name,
    env,
    style,
    say,
    follow: (result, to) => receipts.follow(result, to),
    target: () => target,
    setTarget: (next) => {
      target = next;
      setPrompt();
    },
    clearScreen: () => {
      screen.write('\u001b[2J\u001b[H');
      rl.prompt(true);
    },
  };
  /** Run one line; false when the chat should end. */
  const handle = async (line: string): Promise<boolean> => {
    const text = line.trim();
    if (text === '') return true;
    remember(text);
    return runLine(seat, text);
  };

  const feed = client.changes();
  let closed = false;
  /** A change seen while stopped: its mail is taken when the chat has the terminal again. */
  let missed = false;
  const loop = eachChange({ feed, pollMs: POLL_MS, stopped: () => closed }, async (changed) => {
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
  feed.interrupt();
  await feed.close();
  await loop;
  keys.detach();
  process.removeListener('exit', restore);
  restore();
  output.write('\n');
  // Ended by a signal: the exit status says which, as a shell expects (128 + its number).
  return endedBy === null ? 0 : 128 + constants.signals[endedBy];
}
