import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { lstatSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { postToSession, sessionSocketOf, socketFrames } from '../../src/wake/session-socket.js';

const VARIABLES = { path: 'CLAUDE_CODE_MESSAGING_SOCKET', token: 'CLAUDE_CODE_MESSAGING_TOKEN' };

function scratch(): { dir: string; done(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'agent-bus-socket-'));
  return { dir, done: () => rmSync(dir, { recursive: true, force: true }) };
}

function listen(path: string, onConnection: (socket: Socket) => void): Promise<Server> {
  const server = createServer(onConnection);
  return new Promise((resolve) => server.listen(path, () => resolve(server)));
}

const closed = (server: Server): Promise<void> => new Promise((resolve) => server.close(() => resolve()));

test('the session socket comes from the environment: its path and token, or nothing', () => {
  assert.equal(sessionSocketOf(VARIABLES, {}), null);
  assert.equal(sessionSocketOf(VARIABLES, { CLAUDE_CODE_MESSAGING_SOCKET: '  ' }), null);
  assert.deepEqual(sessionSocketOf(VARIABLES, { CLAUDE_CODE_MESSAGING_SOCKET: '/tmp/cc-socks/1.sock' }), { path: '/tmp/cc-socks/1.sock', token: null });
  assert.deepEqual(sessionSocketOf(VARIABLES, { CLAUDE_CODE_MESSAGING_SOCKET: '/tmp/cc-socks/1.sock', CLAUDE_CODE_MESSAGING_TOKEN: 'tok' }), { path: '/tmp/cc-socks/1.sock', token: 'tok' });
});

test('the frames: an auth line with the token, then the user message with string content, each one JSON line', () => {
  const text = 'agent-bus: new mail from "shop/codex"\nline two {"type":"x"}';
  const frames = socketFrames({ path: '/x', token: 't"k' }, text).split('\n');
  assert.equal(frames.length, 3);
  assert.equal(frames[2], '');
  assert.deepEqual(JSON.parse(frames[0] as string), { type: 'auth', token: 't"k' });
  assert.deepEqual(JSON.parse(frames[1] as string), { type: 'user', message: { role: 'user', content: text } });
  // No token: the message line alone.
  assert.deepEqual(socketFrames({ path: '/x', token: null }, 'hi').split('\n').filter(Boolean).map((line) => JSON.parse(line).type), ['user']);
});

test('a post to a listening socket delivers both lines, and is reported as posted', async () => {
  const s = scratch();
  try {
    const received: string[] = [];
    const path = join(s.dir, 'inbox.sock');
    let done!: () => void;
    const read = new Promise<void>((resolve) => (done = resolve));
    const server = await listen(path, (socket) => {
      let text = '';
      socket.on('data', (chunk) => (text += String(chunk)));
      socket.on('end', () => {
        received.push(text);
        socket.end();
        done();
      });
    });
    const outcome = await postToSession({ path, token: 'secret' }, 'agent-bus: new mail from shop/codex');
    await read;
    await closed(server);
    assert.deepEqual(outcome, { ok: true });
    assert.equal(received.length, 1);
    const lines = (received[0] as string).trim().split('\n').map((line) => JSON.parse(line));
    assert.deepEqual(lines, [
      { type: 'auth', token: 'secret' },
      { type: 'user', message: { role: 'user', content: 'agent-bus: new mail from shop/codex' } },
    ]);
  } finally {
    s.done();
  }
});

test('a peer that reads the frames and keeps the connection open: posted, and the post does not hang', async () => {
  const s = scratch();
  try {
    const path = join(s.dir, 'inbox.sock');
    const held: Socket[] = [];
    const server = await listen(path, (socket) => {
      held.push(socket);
      socket.on('data', () => undefined);
      socket.on('end', () => undefined); // Never closes its side.
      socket.allowHalfOpen = true;
    });
    const outcome = await postToSession({ path, token: null }, 'hello', 1_500);
    assert.deepEqual(outcome, { ok: true });
    for (const socket of held) socket.destroy();
    await closed(server);
  } finally {
    s.done();
  }
});

test('give up: a socket that closes at once is a refusal, with the reason', async () => {
  const s = scratch();
  try {
    const path = join(s.dir, 'inbox.sock');
    const server = await listen(path, (socket) => socket.destroy());
    const outcome = await postToSession({ path, token: 'secret' }, 'hello');
    await closed(server);
    assert.equal(outcome.ok, false);
    assert.match((outcome as { reason: string }).reason, /ECONNRESET|EPIPE|closed the connection/);
  } finally {
    s.done();
  }
});

test('give up: a path that is not a socket, a path that is missing, and a socket nobody listens on', async () => {
  const s = scratch();
  try {
    const file = join(s.dir, 'not-a-socket');
    writeFileSync(file, 'x');
    assert.deepEqual(await postToSession({ path: file, token: null }, 'hello'), { ok: false, reason: `${file} is not a socket` });
    const missing = join(s.dir, 'missing.sock');
    assert.deepEqual(await postToSession({ path: missing, token: null }, 'hello'), { ok: false, reason: `${missing}: ENOENT` });
    // A socket file left behind by a server that has gone (it exited without closing): nobody listens.
    const stale = join(s.dir, 'stale.sock');
    const left = spawnSync(process.execPath, ['-e', `require('node:net').createServer().listen(${JSON.stringify(stale)}, () => process.exit(0))`]);
    assert.equal(left.status, 0);
    assert.ok(lstatSync(stale).isSocket());
    assert.deepEqual(await postToSession({ path: stale, token: null }, 'hello'), { ok: false, reason: `${stale}: ECONNREFUSED` });
  } finally {
    s.done();
  }
});
