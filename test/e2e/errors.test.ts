/**
 * Errors that help: whatever a user gives (a 100 KB argument, line breaks,
 * terminal escapes), an error is one short line on stderr that quotes the
 * input cut to 200 characters, with a non-zero exit and nothing on stdout. A
 * hook never breaks its client's turn: on any failure it exits 0 with one line.
 */
import assert from 'node:assert/strict';
import { appendFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli, withTempBus, messageLines } from '../helpers/bus-env.js';
import { noSmallDisk, onSmallDisk } from '../helpers/small-disk.js';

/** An argument far longer than any error should echo (and under the kernel's 128 KiB per argument). */
const HUGE = 'x'.repeat(100_000);

function assertShortError(result: { code: number | null; stdout: string; stderr: string }, what: string): void {
  assert.ok(result.code !== 0 && result.code !== null, `${what}: exits non-zero (${result.code})`);
  assert.equal(result.stdout, '', `${what}: nothing on stdout`);
  const lines = messageLines(result.stderr);
  assert.equal(lines.length, 1, `${what}: one line on stderr: ${result.stderr.slice(0, 300)}`);
  assert.ok(result.stderr.length <= 600, `${what}: a short line (${result.stderr.length} characters): ${result.stderr.slice(0, 300)}`);
  assert.ok(!result.stderr.includes('x'.repeat(201)), `${what}: the input is cut to 200 characters`);
  assert.match(result.stderr, /^agent-bus: /, what);
}

test('a 100 KB argument in any place an error quotes comes back cut to 200 characters, on one line, with a non-zero exit', withTempBus(async (bus) => {
  const cases: Array<[string, string[]]> = [
    ['unknown command', [HUGE]],
    ['unknown option', ['agents', `--${HUGE}`]],
    ['unexpected argument', ['agents', HUGE]],
    // Unknown, not malformed: a repo with no agents, its name as long as a name may be.
    ['unknown recipient', ['send', 'hello', '--to', `nowhere${'x'.repeat(150)}/claude`, '--name', 'human']],
    ['a recipient that is no name', ['send', 'hello', '--to', `shop/claude-${HUGE}`, '--name', 'human']],
    ['invalid client id', ['agents', '--name', `shop/${HUGE}`]],
    ['bad severity', ['channel', 'publish', 'ops', 'a notice', '--severity', HUGE]],
    ['bad TTL', ['channel', 'publish', 'ops', 'a notice', '--ttl', HUGE]],
    ['bad priority', ['channel', 'publish', 'ops', 'a notice', '--priority', HUGE]],
    ['bad channel', ['channel', 'publish', HUGE, 'a notice']],
    ['bad channel action', ['channel', HUGE]],
    ['bad token duration', ['token', 'create', 'shop/claude', '--expires', HUGE]],
    ['bad token action', ['token', HUGE]],
    ['bad port', ['serve', '--http', '--port', HUGE]],
    ['bad hub URL', ['login', HUGE, '--token', 'abt_x']],
    ['bad --max-seconds', ['hook-watch', '--max-seconds', HUGE]],
    ['bad wake-config action', ['wake-config', HUGE]],
    ['bad store action', ['store', HUGE]],
    ['bad brain action', ['brain', HUGE]],
  ];
  for (const [what, args] of cases) assertShortError(runCli(args, { env: bus.env }), what);
  assert.equal(bus.rows('SELECT COUNT(*) AS n FROM messages').map((row) => Number(row.n))[0] ?? 0, 0, 'nothing was sent');
}));

test('line breaks and terminal escapes in the input are shown as escapes: the error stays one line and cannot restyle the terminal', withTempBus(async (bus) => {
  const result = runCli(['agents', 'first line\nsecond line\u001b[31m red'], { env: bus.env });
  assertShortError(result, 'unexpected argument with control characters');
  assert.ok(!result.stderr.includes('\u001b'), 'no raw escape character');
  assert.match(result.stderr, /first line\\u000asecond line\\u001b\[31m red/);
}));

test('a failed brain refresh and a wake test that fired nothing say why on stderr, in one line, and exit 1', withTempBus(async (bus) => {
  const refresh = runCli(['brain', 'refresh'], { env: { ...bus.env, BRAIN_URL: 'http://127.0.0.1:9/feed', BRAIN_HTTP_TIMEOUT: '2' } });
  assertShortError(refresh, 'brain refresh with its source down');
  assert.match(refresh.stderr, /brain refresh: the source is unavailable .*'brain' keeps its last good content/);
  const json = runCli(['brain', 'refresh', '--json'], { env: { ...bus.env, BRAIN_URL: 'http://127.0.0.1:9/feed', BRAIN_HTTP_TIMEOUT: '2' } });
  assert.equal(json.code, 1);
  assert.equal((JSON.parse(json.stdout) as { ok: boolean }).ok, false, '--json still answers on stdout');
  assert.equal(messageLines(json.stderr).length, 1);
  const wake = runCli(['wake-config', 'test', 'shop/claude'], { env: bus.env });
  assert.equal(wake.code, 1);
  assert.match(wake.stderr, /^agent-bus: wake-config test: nothing fired for 'shop\/claude' \(no-config\)\n$/);
}));

test('a hook exits 0 whatever goes wrong, with one line on stderr and the client\'s "nothing" on stdout', withTempBus(async (bus) => {
  const payload = JSON.stringify({ session_id: 's-1', hook_event_name: 'UserPromptSubmit' });
  // An identity that cannot be: a bad AGENT_BUS_INSTANCE.
  for (const client of ['claude', 'codex', 'gemini', 'copilot']) {
    const hook = runCli(['hook-user-prompt', '--client', client], { env: { ...bus.env, AGENT_BUS_NAME: 'shop/claude', AGENT_BUS_INSTANCE: HUGE }, input: payload });
    assert.equal(hook.code, 0, `${client}: ${hook.stderr}`);
    assert.equal(messageLines(hook.stderr).length, 1, hook.stderr.slice(0, 300));
    assert.match(hook.stderr, /^agent-bus hook: AGENT_BUS_INSTANCE must be a number 1\.\.99/);
    assert.ok(hook.stderr.length <= 600);
  }
  if (bus.engine === 'sqlite') {
    // A file that is no database.
    writeFileSync(bus.db, 'this is not a database '.repeat(100));
    for (const kind of ['hook-user-prompt', 'hook-stop', 'hook-session-start', 'hook-pre-tool']) {
      const hook = runCli([kind, '--client', 'claude'], { env: { ...bus.env, AGENT_BUS_NAME: 'shop/claude' }, input: payload });
      assert.equal(hook.code, 0, `${kind}: ${hook.stderr}`);
      assert.equal(messageLines(hook.stderr).length, 1, `${kind}: ${hook.stderr}`);
      assert.match(hook.stderr, /^agent-bus hook: /);
    }
  }
}));

test('a full disk says so, and that nothing was sent; a hook on it exits 0; with room again the bus is whole', { skip: noSmallDisk }, onSmallDisk((env, disk) => {
  assert.equal(runCli(['send', 'before the disk filled', '--to', 'human'], { env }).code, 0);
  const filler = join(disk.dir, 'filler');
  const block = Buffer.alloc(64 * 1024);
  try {
    for (;;) appendFileSync(filler, block);
  } catch (error) {
    assert.equal((error as NodeJS.ErrnoException).code, 'ENOSPC');
  }
  const full = runCli(['send', 'while the disk is full', '--to', 'human'], { env });
  assertShortError(full, 'send on a full disk');
  assert.match(full.stderr, /the disk holding the bus is full: nothing was written and nothing was sent/);
  const hook = runCli(['hook-user-prompt', '--client', 'claude'], { env: { ...env, AGENT_BUS_NAME: 'shop/claude' }, input: '{"session_id":"s-1"}' });
  assert.equal(hook.code, 0, hook.stderr);
  assert.match(hook.stderr, /^agent-bus hook: the disk holding the bus is full/);
  rmSync(filler);
  const inbox = runCli(['inbox', '--peek', '--json'], { env });
  assert.equal(inbox.code, 0, inbox.stderr);
  assert.deepEqual((JSON.parse(inbox.stdout) as Array<{ body: string }>).map((message) => message.body), ['before the disk filled'], 'nothing half-written');
  assert.equal(runCli(['send', 'with room again', '--to', 'human'], { env }).code, 0);
}));

test('a read-only database says so, and that nothing was sent', { skip: noSmallDisk }, onSmallDisk((env, disk) => {
  assert.equal(runCli(['send', 'before', '--to', 'human'], { env }).code, 0);
  disk.readOnly();
  const refused = runCli(['send', 'on a read-only disk', '--to', 'human'], { env });
  assertShortError(refused, 'send to a read-only database');
  assert.match(refused.stderr, /is read-only \(it is on a read-only file system\): nothing was written and nothing was sent/);
}));
