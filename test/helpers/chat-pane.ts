/**
 * `agent-bus chat` in a real terminal: a private tmux server per test, keys
 * sent with send-keys, the screen read with capture-pane.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, json, runCli, type TempBus } from './bus-env.js';
import { waitFor, waitUntil } from './wait.js';

export const hasTmux = spawnSync('tmux', ['-V']).status === 0;
export const skip = hasTmux ? false : 'needs tmux';

export interface Pane {
  keys(text: string): void;
  /** A named key (Enter, C-c, BSpace…). */
  press(key: string): void;
  enter(): void;
  /** Paste as a terminal does (bracketed, when the program asked for it). */
  paste(text: string): void;
  /** The visible rows; with `escapes`, their colours and attributes as SGR sequences. */
  screen(escapes?: boolean): string;
  resize(width: number): void;
  /** Whether the pane's program has exited (the pane stays, to show what it left). */
  exited(): boolean;
  /** Signal the chat process itself. */
  signal(name: NodeJS.Signals): void;
  /** The chat process's state letter in /proc (R, S, T for stopped…), or null once it is gone. */
  state(): string | null;
  /** Write to the terminal from outside, as another program sharing it would. */
  writeTerminal(text: string): void;
  close(): void;
}

export interface ChatPaneOptions {
  width?: number;
  args?: string[];
  /** Shell commands run in the same terminal after the chat ends (the pane then outlives the chat). */
  after?: string;
  /** Start an interactive bash in the pane and the chat from it, as a job under job control. */
  shell?: boolean;
}

/** Panes opened so far by this process: each gets a tmux server of its own. */
let panesOpened = 0;

export function openChat(bus: TempBus, options: ChatPaneOptions = {}): Pane {
  const { width = 100, args = [], after, shell = false } = options;
  const socket = join(bus.dir, 'tmux');
  mkdirSync(socket, { recursive: true });
  const start = join(bus.dir, 'chat.sh');
  const pidFile = join(bus.dir, 'chat.pid');
  // An undefined value is unset, so nothing leaks in from the tmux server's environment.
  const exports = Object.entries({ ...bus.env, TERM: 'xterm-256color' }).map(([key, value]) =>
    value === undefined ? `unset ${key}` : `export ${key}='${String(value)}'`,
  );
  const chat = [process.execPath, CLI, 'chat', ...args].map((word) => `'${word}'`).join(' ');
  // The inner shell writes its pid and becomes the chat, so the pid is the chat's.
  const run = `sh -c 'echo $$ > "$0"; exec "$@"' '${pidFile}' ${chat}`;
  writeFileSync(start, `#!/bin/sh\n${exports.join('\n')}\ncd '${bus.dir}'\n${after === undefined ? `exec ${run}` : `${run}\n${after}`}\n`);
  chmodSync(start, 0o755);
  // A server per pane: `kill-server` returns before the old server has let go of its socket, so a
  // second pane on the same socket could reach a server that is going away.
  const server = `agent-bus-chat-${process.pid}-${(panesOpened += 1)}`;
  const tmux = (...words: string[]) => spawnSync('tmux', ['-L', server, ...words], { env: { ...process.env, TMUX_TMPDIR: socket }, encoding: 'utf8' });
  const program = shell ? ['env', '-i', `PATH=${process.env.PATH ?? '/usr/bin:/bin'}`, `HOME=${bus.env.HOME ?? bus.dir}`, 'TERM=xterm-256color', 'PS1=$ ', 'bash', '--norc', '--noprofile'] : [start];
  const started = tmux('new-session', '-d', '-s', 'chat', '-x', String(width), '-y', '30', ...program);
  assert.equal(started.status, 0, `tmux new-session: ${started.stderr}`);
  if (shell) tmux('send-keys', '-t', 'chat', '-l', `${start}\r`);
  // Keep the pane after the chat exits, to see what it leaves on the terminal.
  tmux('set-option', '-t', 'chat', 'remain-on-exit', 'on');
  return {
    keys: (text) => void tmux('send-keys', '-t', 'chat', '-l', text),
    press: (key) => void tmux('send-keys', '-t', 'chat', key),
    enter: () => void tmux('send-keys', '-t', 'chat', 'Enter'),
    paste: (text) => {
      tmux('set-buffer', '-b', 'pasted', text);
      tmux('paste-buffer', '-p', '-b', 'pasted', '-t', 'chat');
    },
    screen: (escapes = false) => tmux('capture-pane', '-p', '-J', ...(escapes ? ['-e'] : []), '-t', 'chat').stdout ?? '',
    exited: () => tmux('list-panes', '-t', 'chat', '-F', '#{pane_dead}').stdout.trim() === '1',
    signal: (name) => process.kill(Number(readFileSync(pidFile, 'utf8').trim()), name),
    state: () => {
      try {
        return readFileSync(`/proc/${Number(readFileSync(pidFile, 'utf8').trim())}/stat`, 'utf8').split(') ')[1]?.[0] ?? null;
      } catch {
        return null;
      }
    },
    writeTerminal: (text) => writeFileSync(tmux('display-message', '-p', '-t', 'chat', '#{pane_tty}').stdout.trim(), text),
    resize: (columns) => void tmux('resize-window', '-t', 'chat', '-x', String(columns)),
    close: () => void tmux('kill-server'),
  };
}

/** Wait until the screen shows `pattern`, and return the screen. */
export function until(pane: Pane, pattern: RegExp, what: string, ms = 8000): Promise<string> {
  return waitFor(() => {
    const screen = pane.screen();
    return pattern.test(screen) ? screen : undefined;
  }, () => `${what}; the screen:\n${pane.screen()}`, ms, 50);
}

/** Wait until the chat has exited, after `how` (a key, a command) was to end it. */
export function exit(pane: Pane, how: string, ms = 8000): Promise<void> {
  return waitUntil(() => pane.exited(), () => `${how} to end the chat; the screen:\n${pane.screen()}`, ms, 50);
}

/** An agent on the bus, with nothing left unread. */
export function register(bus: TempBus, name: string): void {
  assert.equal(runCli(['send', 'joining', '--to', name, '--name', name], { env: bus.env }).code, 0);
  assert.equal(runCli(['inbox', '--name', name], { env: bus.env }).code, 0);
}

/** The terminal's bottom row, where the status line lives (capture-pane prints every row, blank ones too). */
export const lastRow = (screen: string): string => screen.replace(/\n$/, '').split('\n').at(-1) ?? '';

/** Bodies of an agent's unread mail (taking it). */
export const inbox = (bus: TempBus, name: string): string[] =>
  json<Array<{ body: string }>>(runCli(['inbox', '--name', name, '--json'], { env: bus.env })).map((message) => message.body);
