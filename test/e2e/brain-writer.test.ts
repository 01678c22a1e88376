/**
 * The brain writer, end to end: the Stop hook hands its payload to a detached
 * `agent-bus brain markers`, which POSTs each marker of the session to a real
 * local server once, and keeps what it cannot send in an outbox.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import type http from 'node:http';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCliAsync, withTempBus, type TempBus } from '../helpers/bus-env.js';
import { listen } from '../helpers/http-server.js';
import { sleep, waitUntil } from '../helpers/wait.js';

interface Received {
  key: string | undefined;
  authorization: string | undefined;
  body: { type: string; content: string; attrs: Record<string, string> };
}

/**
 * A brain that records the markers it accepts, once per idempotency key as the real one does (a slow
 * answer the writer gave up on is retried from the outbox with the same key); `mode` decides how it answers.
 */
async function brain(): Promise<{ url: string; received: Received[]; mode: { value: 'ok' | 'down' | 'slow' }; close(): Promise<void> }> {
  const received: Received[] = [];
  const mode = { value: 'ok' as 'ok' | 'down' | 'slow' };
  const server = await listen((req: http.IncomingMessage, raw: string, res: http.ServerResponse) => {
    if (req.url === '/feed') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"entries":[]}');
      return;
    }
    if (mode.value === 'down') {
      res.writeHead(503);
      res.end('{"ok":false}');
      return;
    }
    const answer = (): void => {
      const key = req.headers['x-idempotency-key'] as string | undefined;
      if (key !== undefined && received.some((item) => item.key === key)) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"ok":true,"duplicate":true}');
        return;
      }
      received.push({ key: req.headers['x-idempotency-key'] as string | undefined, authorization: req.headers.authorization, body: JSON.parse(raw) as Received['body'] });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"ok":true}');
    };
    if (mode.value === 'slow') setTimeout(answer, 1500);
    else answer();
  });
  return { ...server, received, mode };
}

function transcript(bus: TempBus, texts: string[]): string {
  const path = join(bus.dir, 'transcript.jsonl');
  writeFileSync(path, texts.map((text) => JSON.stringify({ type: 'assistant', message: { role: 'assistant', content: [{ type: 'text', text }] } })).join('\n'));
  return path;
}

function env(bus: TempBus, url: string): NodeJS.ProcessEnv {
  return { ...bus.env, AGENT_BUS_NAME: 'shop/claude', AGENT_BUS_REPO: bus.dir, BRAIN_URL: url, BRAIN_HTTP_TOKEN: 'secret-token', BRAIN_HTTP_TIMEOUT: '1' };
}

const until = (check: () => boolean, what: string): Promise<void> => waitUntil(check, what, 8000, 50);

const outbox = (bus: TempBus): string[] => {
  const folder = join(bus.folder, 'brain-outbox');
  return existsSync(folder) ? readdirSync(folder).filter((name) => name.endsWith('.json')).sort() : [];
};

const marker = (type: string, content: string, attrs = ''): string => `<!-- @${type}${attrs} -->${content}<!-- @/${type} -->`;

test('at Stop, every marker of the session reaches the brain once, in the background', withTempBus(async (bus) => {
  const server = await brain();
  try {
    // Seven markers: more than the five the original ever sent.
    const texts = [
      `${marker('lesson', 'Use WAL for concurrent readers', ' area=db ts=forged')} and ${marker('milestone', 'Login form shipped')}`,
      `${marker('signal', 'CI is flaky on arm64')} ${marker('decision', 'Keep SQLite as the default', ' by="the team"')}`,
      `${marker('lesson', 'second lesson')} ${marker('lesson', 'third lesson')} ${marker('decision', 'fourth decision')} <!-- @bogus -->not a type<!-- @/bogus -->`,
    ];
    const payload = { session_id: 'sess-A', transcript_path: transcript(bus, texts), stop_hook_active: false };
    // The brain answers slowly: the hook must not wait for it.
    server.mode.value = 'slow';
    const started = Date.now();
    const stop = await runCliAsync(['hook-stop', '--client', 'claude'], { env: env(bus, server.url), input: JSON.stringify(payload) });
    assert.equal(stop.code, 0, stop.stderr);
    assert.ok(Date.now() - started < 1400, `the Stop hook returned before the brain answered (${Date.now() - started} ms)`);
    server.mode.value = 'ok';
    await until(() => server.received.length + outbox(bus).length >= 7, 'seven markers sent or queued');
    // Slow answers past BRAIN_HTTP_TIMEOUT went to the outbox; the next Stop drains them.
    await runCliAsync(['hook-stop', '--client', 'claude'], { env: env(bus, server.url), input: JSON.stringify(payload) });
    await until(() => server.received.length >= 7 && outbox(bus).length === 0, 'all seven at the brain');
    // Nothing says when the detached writers have exited: a pause for an eighth to show.
    await sleep(500);
    const got = server.received.map((item) => `${item.body.type}:${item.body.content}`).sort();
    assert.deepEqual(got, [
      'decision:Keep SQLite as the default',
      'decision:fourth decision',
      'lesson:Use WAL for concurrent readers',
      'lesson:second lesson',
      'lesson:third lesson',
      'milestone:Login form shipped',
      'signal:CI is flaky on arm64',
    ], 'each once, across two Stops');
    const lesson = server.received.find((item) => item.body.content === 'Use WAL for concurrent readers');
    assert.equal(lesson?.body.attrs.area, 'db');
    assert.notEqual(lesson?.body.attrs.ts, 'forged', 'the writer stamps its own time');
    assert.equal(lesson?.body.attrs.session_id, 'sess-A');
    assert.equal(server.received.find((item) => item.body.type === 'decision' && item.body.content.startsWith('Keep'))?.body.attrs.by, 'the team');
    assert.ok(server.received.every((item) => /^[0-9a-f]{32}$/.test(item.key ?? '')), 'an idempotency key on each');
    assert.equal(new Set(server.received.map((item) => item.key)).size, 7);
    assert.ok(server.received.every((item) => item.authorization === 'Bearer secret-token'));
  } finally {
    await server.close();
  }
}));

test('a brain that is down: markers wait in the outbox and go oldest first once it is back', withTempBus(async (bus) => {
  const server = await brain();
  try {
    const e = env(bus, server.url);
    server.mode.value = 'down';
    const first = { session_id: 'sess-B', last_assistant_message: `${marker('lesson', 'first')} ${marker('lesson', 'second')}` };
    const direct = await runCliAsync(['brain', 'markers', '--json'], { env: e, input: JSON.stringify(first) });
    assert.equal(direct.code, 0, direct.stderr);
    assert.deepEqual(JSON.parse(direct.stdout), { markers: 2, sent: 0, queued: 2, drained: 0, skipped: 0 });
    assert.equal(outbox(bus).length, 2);
    // Still down, and a new marker: queued behind the others, nothing sent twice.
    const second = { session_id: 'sess-B', last_assistant_message: `${marker('lesson', 'first')} ${marker('signal', 'third')}` };
    assert.deepEqual(JSON.parse((await runCliAsync(['brain', 'markers', '--json'], { env: e, input: JSON.stringify(second) })).stdout), { markers: 2, sent: 0, queued: 1, drained: 0, skipped: 1 });
    assert.equal(outbox(bus).length, 3);
    server.mode.value = 'ok';
    const back = JSON.parse((await runCliAsync(['brain', 'markers', '--json'], { env: e, input: JSON.stringify({ session_id: 'sess-B', last_assistant_message: 'nothing new' }) })).stdout) as { drained: number };
    assert.equal(back.drained, 3);
    assert.deepEqual(server.received.map((item) => item.body.content), ['first', 'second', 'third'], 'oldest first');
    assert.deepEqual(outbox(bus), []);
    // A file that is not JSON is set aside, not retried for ever.
    mkdirSync(join(bus.folder, 'brain-outbox'), { recursive: true });
    writeFileSync(join(bus.folder, 'brain-outbox', '00000000-lesson-broken.json'), 'not json');
    await runCliAsync(['brain', 'markers'], { env: e, input: JSON.stringify({ session_id: 'sess-B' }) });
    assert.deepEqual(outbox(bus), []);
    assert.ok(readdirSync(join(bus.folder, 'brain-outbox')).includes('00000000-lesson-broken.json.bad'));
  } finally {
    await server.close();
  }
}));

test('the writer stays off unless the brain is on (or BRAIN_WRITER_ENABLED says so)', withTempBus(async (bus) => {
  const payload = JSON.stringify({ session_id: 'sess-C', last_assistant_message: marker('lesson', 'nobody hears this') });
  const offEnv = { ...bus.env, AGENT_BUS_NAME: 'shop/claude', AGENT_BUS_REPO: bus.dir };
  assert.equal((await runCliAsync(['hook-stop', '--client', 'claude'], { env: offEnv, input: payload })).code, 0);
  // Nothing says a Stop hook started no writer: a pause for one to show.
  await sleep(1000);
  assert.deepEqual(outbox(bus), [], 'no brain configured: no writer');
  const forced = await runCliAsync(['hook-stop', '--client', 'claude'], { env: { ...offEnv, BRAIN_WRITER_ENABLED: '1' }, input: payload });
  assert.equal(forced.code, 0);
  // Without BRAIN_URL there is nowhere to send: the marker waits in the outbox.
  await until(() => outbox(bus).length === 1, 'the marker in the outbox');
}));
