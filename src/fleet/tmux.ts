/**
 * A spawned agent run interactive in a tmux window (`spawn --tmux`), for a person to watch or take
 * over. The window is made by `tmux` started with words, never through a shell: in the session of
 * the pane `spawn` ran in where it ran inside tmux, else in a session `agent-bus` of the tmux server
 * its environment names (made, detached, when there is none). The window is named after the agent.
 * Its pane stays when its process ends (`remain-on-exit`), so its end is seen even where tmux does
 * not reap the process, and it is closed then. Its output goes to the agent's log through
 * `pipe-pane`, the one command line here that a shell reads: `cat` and the log's path, quoted.
 *
 * The window's environment is the tmux server's, with what differs in the agent's given over it
 * (`-e`, the words of a tmux call that lasts a moment): a server this starts has the agent's
 * environment already, bar its name; one that runs keeps its own. The variables that mark a
 * client's session, where the server has them, are emptied.
 */
import { spawnSync } from 'node:child_process';
import { realpathSync, statSync } from 'node:fs';
import { constants } from 'node:os';
import { join, resolve } from 'node:path';
import { quoted } from '../model/quote.js';
import type { SpawnTmux } from '../model/records.js';
import { sessionMarkers } from './environment.js';

/** Why an agent cannot start in tmux here: the line a missing executable gets, naming the PATH searched. */
export function noTmux(env: { PATH?: string | undefined }): string {
  return `no executable ${quoted('tmux')} on PATH (${env.PATH ?? ''})`;
}

/** The session an agent's window is made in when `spawn` ran outside tmux. */
export const TMUX_SESSION = 'agent-bus';

/** Variables tmux sets in each pane itself: never given over from the agent's environment. */
const TMUX_OWN = new Set(['TMUX', 'TMUX_PANE', 'TERM', 'TERM_PROGRAM', 'TERM_PROGRAM_VERSION', 'COLORTERM', 'COLUMNS', 'LINES']);

/** How long one call of tmux may take. */
const CALL_TIMEOUT_MS = 10_000;

/** What `-P -F` prints of a window just made: the pane's process, the ids, the server's socket (last: it may hold spaces). */
const MADE_FORMAT = '#{pane_pid} #{session_id} #{window_id} #{pane_id} #{socket_path}';

/** A word as tmux's command line reads it: one that ends in `;` would end the command there. */
export function tmuxWord(word: string): string {
  return word.endsWith(';') ? `${word.slice(0, -1)}\\;` : word;
}

/** Text tmux expands as a format (a window's name, its folder, pipe-pane's command), read as written. */
function literalFormat(text: string): string {
  return text.replaceAll('#', '##');
}

/** One word for /bin/sh, quoted whatever it holds. */
export function shellWord(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

interface Call {
  ok: boolean;
  stdout: string;
  /** tmux's own complaint, one line. */
  problem: string;
}

/** Between two commands of one call: tmux runs them together, before anything else happens in its server. */
const THEN = Symbol('then');
type Word = string | typeof THEN;

function call(tmux: string, words: readonly Word[], env: NodeJS.ProcessEnv): Call {
  const args = words.map((word) => (word === THEN ? ';' : tmuxWord(word)));
  const result = spawnSync(tmux, args, { env, encoding: 'utf8', timeout: CALL_TIMEOUT_MS, stdio: ['ignore', 'pipe', 'pipe'] });
  const problem = result.error !== undefined ? result.error.message : (result.stderr ?? '').trim().split('\n')[0] ?? '';
  return { ok: result.status === 0 && result.error === undefined, stdout: result.stdout ?? '', problem: problem === '' ? `exit ${result.status ?? result.signal ?? '?'}` : problem };
}

/** `show-environment` read: each variable set, and (null) each a session removes. */
function environmentOf(text: string): Map<string, string | null> {
  const variables = new Map<string, string | null>();
  for (const line of text.split('\n')) {
    if (line.startsWith('-')) variables.set(line.slice(1), null);
    else {
      const at = line.indexOf('=');
      if (at > 0) variables.set(line.slice(0, at), line.slice(at + 1));
    }
  }
  return variables;
}

/** The environment a new window of `session` starts with: the server's, then the session's over it; null when no server runs. */
function windowBase(tmux: string, env: NodeJS.ProcessEnv, session: string | null): Map<string, string | null> | null {
  const global = call(tmux, ['show-environment', '-g'], env);
  if (!global.ok) return null;
  const base = environmentOf(global.stdout);
  if (session !== null) {
    const own = call(tmux, ['show-environment', '-t', session], env);
    if (own.ok) for (const [name, value] of environmentOf(own.stdout)) base.set(name, value);
  }
  return base;
}

/** The `-e` words that make a window started on `base` the agent's: what differs, and the session markers it must not have, emptied. */
function environmentWords(wanted: NodeJS.ProcessEnv, base: Map<string, string | null>): string[] {
  const words: string[] = [];
  for (const [name, value] of Object.entries(wanted)) {
    if (value === undefined || TMUX_OWN.has(name) || base.get(name) === value) continue;
    words.push('-e', `${name}=${value}`);
  }
  for (const marker of sessionMarkers()) {
    if (wanted[marker] === undefined && typeof base.get(marker) === 'string' && base.get(marker) !== '') words.push('-e', `${marker}=`);
  }
  return words;
}

/** The session the window goes in: `spawn`'s own where it ran inside tmux, else `agent-bus`; its id, or null when it is to be made. */
function targetSession(tmux: string, env: NodeJS.ProcessEnv): string | null {
  const pane = (env.TMUX ?? '') !== '' ? (env.TMUX_PANE ?? '').trim() : '';
  if (pane !== '') {
    const asker = call(tmux, ['display-message', '-p', '-t', pane, '#{session_id}'], env);
    if (asker.ok && asker.stdout.trim() !== '') return asker.stdout.trim();
  }
  const own = call(tmux, ['display-message', '-p', '-t', `=${TMUX_SESSION}:`, '#{session_id}'], env);
  return own.ok && own.stdout.trim() !== '' ? own.stdout.trim() : null;
}

/** A free window index of `session`: one past the highest. */
function nextIndex(tmux: string, env: NodeJS.ProcessEnv, session: string): number {
  const listed = call(tmux, ['list-windows', '-t', session, '-F', '#{window_index}'], env);
  const indexes = listed.stdout.split('\n').filter((line) => /^\d+$/.test(line)).map(Number);
  return indexes.length === 0 ? 0 : Math.max(...indexes) + 1;
}

export interface WindowRequest {
  /** The tmux executable. */
  tmux: string;
  /** The agent's whole environment. */
  env: NodeJS.ProcessEnv;
  /** Of those, the variables that are the agent's own (its name): given to its window alone, never to a server or a session. */
  own: readonly string[];
  /** The window's name: the agent's address. */
  name: string;
  folder: string;
  /** The executable and its arguments. */
  command: readonly string[];
  /** The log its output is appended to (made already, private). */
  logPath: string;
}

export interface OpenedWindow {
  pid: number;
  place: SpawnTmux;
}

/** Make the agent's window, its process started, kept when it ends, its output piped to the log. Throws with tmux's complaint. */
export function openWindow(request: WindowRequest): OpenedWindow {
  const { tmux } = request;
  // A server this starts takes this environment for its own: the agent's, without its name.
  const env: NodeJS.ProcessEnv = { ...request.env };
  for (const name of request.own) delete env[name];
  const pipe = literalFormat(`exec cat >> ${shellWord(resolve(request.logPath))}`);
  const shape = ['-n', literalFormat(request.name), '-c', literalFormat(request.folder)];
  let last = '';
  for (let attempt = 0; attempt < 5; attempt++) {
    const session = targetSession(tmux, env);
    const base = windowBase(tmux, env, session) ?? new Map(Object.entries(env).map(([name, value]) => [name, value ?? null]));
    const variables = environmentWords(request.env, base);
    let made: Call;
    if (session === null) {
      // A new session, its first window the agent's; what -e gave the session is taken back, so a window a person opens there is not the agent.
      const given = variables.filter((_, index) => index % 2 === 1).map((word) => word.slice(0, word.indexOf('=')));
      made = call(
        tmux,
        [
          'new-session', '-d', '-s', TMUX_SESSION, ...shape, ...variables, '-P', '-F', MADE_FORMAT, '--', ...request.command,
          THEN, 'set-option', '-p', 'remain-on-exit', 'on',
          THEN, 'pipe-pane', '-o', pipe,
          ...given.flatMap((name): Word[] => [THEN, 'set-environment', '-u', name]),
        ],
        env,
      );
      if (!made.ok && /duplicate session/.test(made.problem)) continue;
    } else {
      // At an index of its own, so the commands after it reach its pane before its process can end.
      const target = `${session}:${nextIndex(tmux, env, session)}`;
      made = call(
        tmux,
        [
          'new-window', '-d', '-t', target, ...shape, ...variables, '-P', '-F', MADE_FORMAT, '--', ...request.command,
          THEN, 'set-option', '-p', '-t', target, 'remain-on-exit', 'on',
          THEN, 'pipe-pane', '-o', '-t', target, pipe,
        ],
        env,
      );
      if (!made.ok && /index .* in use|create window failed/.test(made.problem)) {
        last = made.problem;
        continue;
      }
    }
    if (!made.ok) throw new Error(`tmux could not make its window: ${made.problem}`);
    const said = /^(\d+) (\$\d+) (@\d+) (%\d+) (.+)\n?$/.exec(made.stdout);
    if (said === null) throw new Error(`tmux said nothing of the window it made: ${JSON.stringify(made.stdout)}`);
    const [, pid, madeIn, window, pane, socket] = said as unknown as [string, string, string, string, string, string];
    return { pid: Number(pid), place: { socket, session: madeIn, window, pane } };
  }
  throw new Error(`tmux could not make its window: ${last || 'its session kept changing'}`);
}

/** tmux, told the server by its socket: the agent's window is found from any environment. */
function atSocket(place: SpawnTmux, args: Word[]): Word[] {
  return place.socket === null ? args : ['-S', place.socket, ...args];
}

const SIGNAL_NAMES = new Map<number, NodeJS.Signals>(Object.entries(constants.signals).map(([name, number]) => [number, name as NodeJS.Signals]));

interface PaneLook {
  dead: boolean;
  status: string;
  signal: string;
}

function lookAtPane(tmux: string, env: NodeJS.ProcessEnv, place: SpawnTmux): PaneLook | null {
  if (place.pane === null) return null;
  const shown = call(tmux, atSocket(place, ['display-message', '-p', '-t', place.pane, '#{pane_dead} #{pane_dead_status} #{pane_dead_signal}']), env);
  if (!shown.ok) return null;
  const [dead, status = '', signal = ''] = shown.stdout.replace(/\n$/, '').split(' ');
  return { dead: dead === '1', status, signal };
}

/** Whether the agent's pane has ended (its terminal closed: tmux keeps it, dead), still runs, or is gone. */
export function paneEnd(tmux: string, env: NodeJS.ProcessEnv, place: SpawnTmux): 'dead' | 'running' | 'gone' {
  const look = lookAtPane(tmux, env, place);
  return look === null ? 'gone' : look.dead ? 'dead' : 'running';
}

/** How the pane's process ended as tmux keeps it, where it does: null when it cannot say. */
export function paneStatus(tmux: string, env: NodeJS.ProcessEnv, place: SpawnTmux): { code: number | null; signal: NodeJS.Signals | null } | null {
  const look = lookAtPane(tmux, env, place);
  if (look === null || !look.dead) return null;
  if (/^\d+$/.test(look.signal) && Number(look.signal) > 0) return { code: null, signal: SIGNAL_NAMES.get(Number(look.signal)) ?? null };
  if (/^\d+$/.test(look.status)) return { code: Number(look.status), signal: null };
  return null;
}

/** Close the agent's pane (and so its window, unless a person split it): its output's pipe first, so the log has all of it. */
export async function closePane(tmux: string, env: NodeJS.ProcessEnv, place: SpawnTmux, logPath: string | null): Promise<void> {
  if (place.pane === null) return;
  call(tmux, atSocket(place, ['pipe-pane', '-t', place.pane]), env);
  if (logPath !== null) await settled(logPath);
  call(tmux, atSocket(place, ['kill-pane', '-t', place.pane]), env);
}

/** Wait (a second at most) until a file has stopped growing: the pipe's `cat` has written what it had. */
async function settled(path: string): Promise<void> {
  const size = (): number => {
    try {
      return statSync(path).size;
    } catch {
      return -1;
    }
  };
  const deadline = Date.now() + 1_000;
  let before = size();
  while (Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    const now = size();
    if (now === before) return;
    before = now;
  }
}

/** The socket `tmux` reaches in `env` with no -S (its folder as tmux resolves it): the one a command printed for a person may leave out. */
function defaultSocket(env: NodeJS.ProcessEnv): string {
  const uid = typeof process.getuid === 'function' ? process.getuid() : 0;
  const folder = join(env.TMUX_TMPDIR || '/tmp', `tmux-${uid}`);
  try {
    return join(realpathSync(folder), 'default');
  } catch {
    return join(folder, 'default');
  }
}

/**
 * The command a person runs to see the agent's window, from `env`: inside tmux on that server, the
 * window is switched to; elsewhere the session is attached at it.
 */
export function attachCommand(place: SpawnTmux, env: NodeJS.ProcessEnv): string | null {
  if (place.window === null) return null;
  const inside = (env.TMUX ?? '').split(',')[0] ?? '';
  if (inside !== '' && inside === place.socket) return `tmux switch-client -t ${place.window}`;
  const socket = place.socket !== null && place.socket !== defaultSocket(env) ? `-S ${shellWord(place.socket)} ` : '';
  return `tmux ${socket}attach -t ${place.window}`;
}
