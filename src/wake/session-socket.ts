/**
 * A client session's own inbox socket (Claude Code's `CLAUDE_CODE_MESSAGING_SOCKET`, Qwen Code's
 * `QWEN_CODE_MESSAGING_SOCKET`): a process the client started may post a line of text into the session,
 * which starts a turn when it is idle. The frames are two lines of JSON, an auth line with the
 * session's token, then a user message whose content is a string; Qwen Code's carry a version and
 * a message id besides (its peer frames). The socket never answers: a post has worked as far as we can tell when the
 * connection took both lines and closed cleanly; whether a turn followed is seen elsewhere (the
 * prompt hook's receipt).
 *
 * The user frame is not in Claude Code's documentation (it prints it in its debug log), so a
 * version may refuse it: every failure here is an answer, never a throw, and the caller falls back.
 */
import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { lstatSync } from 'node:fs';
import type { Env } from '../model/settings.js';

/** Whose frames a socket takes: Claude Code's (absent), or Qwen Code's peer frames. */
export type SocketFrame = 'qwen';

/** Where a session's inbox socket is, and the token that proves a post is the session's own. */
export interface SessionSocket {
  path: string;
  token: string | null;
  frame?: SocketFrame;
}

/** The variables a client gives the processes it starts to name its session's socket, and its frames. */
export interface SocketVariables {
  path: string;
  token: string;
  frame?: SocketFrame;
}

/** The session's socket named in this process's environment, or null. */
export function sessionSocketOf(variables: SocketVariables, env: Env): SessionSocket | null {
  const path = (env[variables.path] ?? '').trim();
  if (path === '') return null;
  const token = (env[variables.token] ?? '').trim();
  return { path, token: token === '' ? null : token, ...(variables.frame === undefined ? {} : { frame: variables.frame }) };
}

/** The two lines a post writes: the auth line (where there is a token), then the message. */
export function socketFrames(socket: SessionSocket, text: string): string {
  // Qwen Code's frames say their version, and a message carries an id of its own (a repeat is dropped by it).
  const peer = socket.frame === 'qwen' ? { msgV: 1 } : {};
  const lines: string[] = [];
  if (socket.token !== null) lines.push(JSON.stringify({ ...peer, type: 'auth', token: socket.token }));
  const id = socket.frame === 'qwen' ? { msgId: randomUUID() } : {};
  lines.push(JSON.stringify({ ...peer, ...id, type: 'user', ...(socket.frame === 'qwen' ? { priority: 'next' } : {}), message: { role: 'user', content: text } }));
  return `${lines.map((line) => `${line}\n`).join('')}`;
}

export type PostOutcome = { ok: true } | { ok: false; reason: string };

/** How long a post may take; the peer has until then to close after we have said all. */
const POST_TIMEOUT_MS = 2_000;

/**
 * Post `text` into the session. Refused: the path is not a socket, nothing listens, the peer closes
 * before it has read the frames (a reset), or the post does not finish in time. A peer that keeps the
 * connection open after reading is left when the frames are flushed and a moment has passed.
 */
export function postToSession(socket: SessionSocket, text: string, timeoutMs = POST_TIMEOUT_MS): Promise<PostOutcome> {
  try {
    if (!lstatSync(socket.path).isSocket()) return Promise.resolve({ ok: false, reason: `${socket.path} is not a socket` });
  } catch (error) {
    return Promise.resolve({ ok: false, reason: `${socket.path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}` });
  }
  return new Promise((resolve) => {
    let settled = false;
    let flushed = false;
    const client = connect(socket.path);
    const finish = (outcome: PostOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(grace);
      client.destroy();
      resolve(outcome);
    };
    const timer = setTimeout(() => finish(flushed ? { ok: true } : { ok: false, reason: `the post did not finish in ${timeoutMs} ms` }), timeoutMs);
    let grace: NodeJS.Timeout | undefined;
    client.on('error', (error: NodeJS.ErrnoException) => finish({ ok: false, reason: `${socket.path}: ${error.code ?? error.message}` }));
    // Only a close after our frames were flushed is clean; a close before it is a refusal.
    client.on('close', () => finish(flushed ? { ok: true } : { ok: false, reason: `${socket.path} closed the connection before it took the message` }));
    client.on('data', () => undefined); // The socket says nothing; anything it does say is not ours to read.
    client.once('connect', () => {
      client.end(socketFrames(socket, text), () => {
        flushed = true;
        // A peer that resets the connection unread says so within a moment; one that keeps it open has it.
        grace = setTimeout(() => finish({ ok: true }), 100);
      });
    });
  });
}
