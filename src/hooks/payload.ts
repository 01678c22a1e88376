/**
 * A hook's input: the JSON object its client writes on stdin. A client that
 * never closes stdin, or a terminal on stdin, must not hang a turn: reading
 * stops after AGENT_BUS_HOOK_PAYLOAD_TIMEOUT seconds with whatever arrived.
 */
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { environmentSessionKey } from '../clients/registry/profiles.js';
import { setting, type Env } from '../model/settings.js';

export type Payload = Record<string, unknown>;

export function payloadTimeoutMs(env: Env): number {
  return setting(env, 'AGENT_BUS_HOOK_PAYLOAD_TIMEOUT') * 1000;
}

function stdinIsTerminal(fd: number): boolean {
  try {
    return fstatSync(fd).isCharacterDevice();
  } catch {
    return true; // No stdin at all: nothing to read.
  }
}

export function parsePayload(text: string): Payload {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Payload) : {};
  } catch {
    return {};
  }
}

/**
 * Read stdin without ever blocking past the deadline, and without building
 * Node's stream machinery (process.stdin loads some twenty modules, a large
 * share of a hook's start-up). The input is made non-blocking and polled:
 * - a pipe: reopened through /proc as a non-blocking description of its own;
 * - a socket (what a Node client such as Claude Code gives its hooks): libuv's
 *   pipe handle opened on fd 0 sets O_NONBLOCK on it, and is then let go;
 * - anything else: process.stdin, destroyed at the deadline.
 * An async fs.read on an input that never ends would pin a libuv worker
 * thread, and Node waits for those threads at exit.
 */
export function readPayload(timeoutMs: number, fd = 0): Promise<Payload> {
  // A character device is a terminal (or /dev/null): no client writes a payload there.
  if (timeoutMs <= 0 || stdinIsTerminal(fd)) return Promise.resolve({});
  const deadline = Date.now() + timeoutMs;
  let reopened: number | null = null;
  try {
    reopened = openSync(`/proc/self/fd/${fd}`, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    reopened = null;
  }
  if (reopened !== null) {
    try {
      return Promise.resolve(parsePayload(pollUntilEnd(reopened, deadline)));
    } finally {
      closeSync(reopened);
    }
  }
  if (makeNonBlocking(fd)) return Promise.resolve(parsePayload(pollUntilEnd(fd, deadline)));
  return readWithStream(timeoutMs);
}

interface PipeHandle {
  open(fd: number): number;
  unref(): void;
}

/** Set O_NONBLOCK on a socket fd through libuv's pipe handle (no public API does it without loading node:net). */
function makeNonBlocking(fd: number): boolean {
  try {
    const binding = (process as unknown as { binding(name: string): { Pipe: new (type: number) => PipeHandle; constants: { SOCKET: number } } }).binding('pipe_wrap');
    const handle = new binding.Pipe(binding.constants.SOCKET);
    if (handle.open(fd) !== 0) return false;
    handle.unref();
    return true;
  } catch {
    return false;
  }
}

/**
 * Read until end of input, or until what has arrived is a whole JSON object:
 * clients write one object, and some close their end a little after writing.
 */
function pollUntilEnd(fd: number, deadline: number): string {
  const chunks: Buffer[] = [];
  const buffer = Buffer.alloc(64 * 1024);
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    let bytes: number;
    try {
      bytes = readSync(fd, buffer, 0, buffer.length, null);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN' || Date.now() >= deadline) break;
      if (chunks.length > 0 && isWholeObject(chunks)) break;
      Atomics.wait(pause, 0, 0, 1);
      continue;
    }
    if (bytes === 0) break;
    chunks.push(Buffer.from(buffer.subarray(0, bytes)));
  }
  return Buffer.concat(chunks).toString('utf8');
}

function isWholeObject(chunks: Buffer[]): boolean {
  const text = Buffer.concat(chunks).toString('utf8').trimEnd();
  if (!text.endsWith('}')) return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function readWithStream(timeoutMs: number): Promise<Payload> {
  return new Promise((resolve) => {
    const stdin = process.stdin;
    const chunks: Buffer[] = [];
    const finish = (): void => {
      clearTimeout(timer);
      stdin.removeAllListeners('data');
      stdin.destroy();
      resolve(parsePayload(Buffer.concat(chunks).toString('utf8')));
    };
    const timer = setTimeout(finish, timeoutMs);
    stdin.on('data', (chunk: Buffer) => chunks.push(chunk));
    stdin.once('end', finish);
    stdin.once('error', finish);
  });
}

/** The directory a payload reports: `cwd` (Claude Code, Codex, opencode) or agy's first workspace path. */
export function payloadDirectory(payload: Payload): string | undefined {
  if (typeof payload.cwd === 'string' && payload.cwd !== '') return payload.cwd;
  const paths = payload.workspacePaths;
  if (Array.isArray(paths) && typeof paths[0] === 'string' && paths[0] !== '') return paths[0];
  return undefined;
}

/** The client's id for this conversation, when the payload carries one. */
export function payloadSessionKey(payload: Payload): string | null {
  for (const key of ['session_id', 'conversationId', 'thread_id', 'threadId']) {
    const value = payload[key];
    if (typeof value === 'string' && value !== '') return value;
  }
  return null;
}

/** The session a hook's process runs for: the payload's id, else the one its client put in its environment (Claude Code does). */
export function hookSessionKey(payload: Payload, env: Record<string, string | undefined>): string | null {
  return payloadSessionKey(payload) ?? environmentSessionKey(env);
}
