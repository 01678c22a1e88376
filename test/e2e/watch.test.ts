/**
 * `agent-bus hook-watch`, as a client runs it in the background: it waits for
 * its session's mail, and exits 10 with the mail on stderr, or 0.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { agentEnv, auditRows, register, waitForWatcher } from '../helpers/agents.js';
import { CLI, json, readAudit, runCli, withTempBus, type TempBus } from '../helpers/bus-env.js';
import { connect } from '../helpers/mcp.js';
import { hasExited, sleep, waitForExit, waitUntil } from '../helpers/wait.js';

interface Watcher {
  pid: number;
  done: Promise<{ code: number | null; stderr: string; ms: number }>;
}

/** A Claude Code session's environment (interactive), its watcher polling every 5 s when no event comes. */
function claudeEnv(bus: TempBus, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return agentEnv(bus, 'shop/claude', bus.dir, { CLAUDE_CODE_ENTRYPOINT: 'cli', AGENT_BUS_WATCH_POLL_SECONDS: '5', ...extra });
}

function startWatch(bus: TempBus, session: string, args: string[] = [], extra: NodeJS.ProcessEnv = {}): Watcher {
  const started = Date.now();
  const child = spawn(process.execPath, [CLI, 'hook-watch', '--client', 'claude', ...args], { env: claudeEnv(bus, extra), cwd: bus.dir, stdio: ['pipe', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.end(JSON.stringify({ session_id: session }));
  return { pid: child.pid as number, done: new Promise((resolve) => child.on('close', (code) => resolve({ code, stderr, ms: Date.now() - started }))) };
}

/**
 * Let a just-started watcher reach its wait: it has claimed the session (its row in the store says so,
 * its signal handlers set by then) and looked once. Nothing says when that look is done: a pause.
 */
async function settle(bus: TempBus, watcher: Watcher): Promise<void> {
  await waitForWatcher(bus, watcher.pid);
  await sleep(700);
}

test('mail arriving wakes the watcher: taken from the inbox, said on stderr, exit 10', withTempBus(async (bus) => {
  register(claudeEnv(bus));
  const watcher = startWatch(bus, 'sess-1', ['--max-seconds', '30']);
  await settle(bus, watcher);
  // The poll is 5 s: an exit well before that is the file-system event at work.
  const sentAt = Date.now();
  assert.equal(runCli(['send', 'WAKE-UP-MAIL', '--to', 'shop/claude'], { env: bus.env }).code, 0);
  const { code, stderr } = await watcher.done;
  assert.equal(code, 10);
  assert.ok(Date.now() - sentAt < 4000, `woken by the event, not the poll (${Date.now() - sentAt} ms)`);
  assert.match(stderr, /\[agent-bus\] 1 new message\(s\) since last turn:\n- from human .*: WAKE-UP-MAIL/);
  const inbox = json<unknown[]>(runCli(['inbox', '--json', '--peek'], { env: claudeEnv(bus) }));
  assert.deepEqual(inbox, [], 'the mail was taken');
  const rows = readAudit(bus.audit).filter((row) => row.body_preview === 'WAKE-UP-MAIL').map((row) => `${String(row.op)}${row.op === 'wake' ? `:${String(row.wake_driver)}:${String(row.wake_status)}` : ''}`);
  assert.deepEqual(rows.sort(), ['deliver', 'read', 'send', 'wake:watch:woke']);
  assert.deepEqual(bus.rows("SELECT delivered_via, read_via FROM messages WHERE body = 'WAKE-UP-MAIL'"), [{ delivered_via: 'hook-watch', read_via: 'hook-watch' }], 'the receipt says the watcher handed it over');
}));

test('it gives up after --max-seconds with exit 0, and mail that comes later waits', withTempBus(async (bus) => {
  register(claudeEnv(bus));
  const { code, ms } = await startWatch(bus, 'sess-1', ['--max-seconds', '1']).done;
  assert.equal(code, 0);
  assert.ok(ms < 4000, `${ms} ms`);
}));

test('a newer watcher of the same session takes over; the older exits 0', withTempBus(async (bus) => {
  register(claudeEnv(bus));
  const older = startWatch(bus, 'sess-1', ['--max-seconds', '30'], { AGENT_BUS_WATCH_POLL_SECONDS: '0.2' });
  await settle(bus, older);
  const newer = startWatch(bus, 'sess-1', ['--max-seconds', '30']);
  const first = await older.done;
  assert.equal(first.code, 0, 'the older stood down');
  await settle(bus, newer);
  assert.equal(runCli(['send', 'for the newer', '--to', 'shop/claude'], { env: bus.env }).code, 0);
  const second = await newer.done;
  assert.equal(second.code, 10);
  assert.match(second.stderr, /for the newer/);
}));

test('wake.json wins: a watcher stands down for a session with an entry', withTempBus(async (bus) => {
  register(claudeEnv(bus));
  writeFileSync(join(bus.folder, 'wake.json'), JSON.stringify({ shop: 'true' }));
  const { code, ms } = await startWatch(bus, 'sess-1', ['--max-seconds', '30']).done;
  assert.equal(code, 0);
  assert.ok(ms < 4000);
}));

test('a signal stops it at once with exit 0', withTempBus(async (bus) => {
  register(claudeEnv(bus));
  const watcher = startWatch(bus, 'sess-1', ['--max-seconds', '30']);
  await settle(bus, watcher);
  const before = Date.now();
  process.kill(watcher.pid, 'SIGTERM');
  const { code } = await watcher.done;
  assert.equal(code, 0);
  assert.ok(Date.now() - before < 2000);
}));

test('it does not watch outside an interactive Claude Code session, or with native wake off', withTempBus(async (bus) => {
  register(claudeEnv(bus));
  runCli(['send', 'waiting mail', '--to', 'shop/claude'], { env: bus.env });
  for (const extra of [{ CLAUDE_CODE_ENTRYPOINT: 'sdk-cli' }, { CLAUDE_CODE_ENTRYPOINT: '' }, { AGENT_BUS_NATIVE_WAKE: '0' }]) {
    const { code, ms } = await startWatch(bus, 'sess-1', ['--max-seconds', '30'], extra).done;
    assert.equal(code, 0, JSON.stringify(extra));
    assert.ok(ms < 3000, `${JSON.stringify(extra)}: exits at once (${ms} ms)`);
  }
  assert.equal(json<unknown[]>(runCli(['inbox', '--json', '--peek'], { env: claudeEnv(bus) })).length, 1, 'the mail is still there');
}));

test('it exits when its client process exits', withTempBus(async (bus) => {
  register(claudeEnv(bus));
  // A stand-in client: starts the watcher, reports its pid, and goes away.
  const client = spawn(
    process.execPath,
    [
      '-e',
      `const { spawn } = require('node:child_process');
       const child = spawn(process.execPath, [${JSON.stringify(CLI)}, 'hook-watch', '--client', 'claude', '--max-seconds', '30'], { stdio: ['pipe', 'ignore', 'ignore'], detached: true });
       child.stdin.end('{"session_id":"sess-1"}');
       console.log(child.pid);
       child.unref();
       setTimeout(() => process.exit(0), 800);`,
    ],
    { env: claudeEnv(bus, { AGENT_BUS_WATCH_POLL_SECONDS: '0.2' }), cwd: bus.dir, stdio: ['ignore', 'pipe', 'ignore'] },
  );
  let out = '';
  client.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  await new Promise((resolve) => client.on('close', resolve));
  const pid = Number(out.trim());
  assert.ok(pid > 0);
  await waitForExit(pid, 'the watcher to exit with its client', 5000);
  assert.ok(hasExited(pid), 'the watcher exited with its client');
}));

test('AGENT_BUS_WATCH_CLIENT_PID: a watcher whose client quit before it looked exits at once; one whose client runs waits for it', withTempBus(async (bus) => {
  register(claudeEnv(bus));
  runCli(['send', 'mail for a later turn', '--to', 'shop/claude'], { env: bus.env });
  // A client that has exited by the time its watcher reads the process table: the watcher's parent is another process then.
  const gone = spawnSync(process.execPath, ['-e', '0']).pid as number;
  const orphan = await startWatch(bus, 'sess-1', ['--max-seconds', '30'], { AGENT_BUS_WATCH_CLIENT_PID: String(gone) }).done;
  assert.equal(orphan.code, 0);
  assert.ok(orphan.ms < 3000, `exits at once, rather than wait on a process that is not its client (${orphan.ms} ms)`);
  assert.equal(json<unknown[]>(runCli(['inbox', '--json', '--peek'], { env: claudeEnv(bus) })).length, 1, 'the mail is still there');
  // Named and running (this process started it): it waits, and the mail wakes it.
  const watcher = startWatch(bus, 'sess-1', ['--max-seconds', '30'], { AGENT_BUS_WATCH_CLIENT_PID: String(process.pid) });
  const { code, stderr } = await watcher.done;
  assert.equal(code, 10);
  assert.match(stderr, /mail for a later turn/);
}));

test('AGENT_BUS_WAKES_PER_HOUR: past the limit the watcher does not wake the session; the mail waits', withTempBus(async (bus) => {
  register(claudeEnv(bus));
  const limited = { AGENT_BUS_WAKES_PER_HOUR: '1' };
  runCli(['send', 'first', '--to', 'shop/claude'], { env: bus.env });
  assert.equal((await startWatch(bus, 'sess-1', ['--max-seconds', '5'], limited).done).code, 10);
  runCli(['send', 'second', '--to', 'shop/claude'], { env: bus.env });
  assert.equal((await startWatch(bus, 'sess-1', ['--max-seconds', '5'], limited).done).code, 0);
  const statuses = auditRows(bus, 'wake').map((row) => row.wake_status);
  assert.deepEqual(statuses, ['woke', 'rate-limited']);
  assert.equal(json<unknown[]>(runCli(['inbox', '--json', '--peek'], { env: claudeEnv(bus) })).length, 1, 'the second waits for the next turn');
}));

test("it follows its session's rename: mail to the new name wakes it", withTempBus(async (bus) => {
  register(claudeEnv(bus));
  // A Claude Code session: its MCP server holds a session address, bound to the conversation's id.
  const server = await connect({ ...claudeEnv(bus), CLAUDE_CODE_SESSION_ID: 'sess-rename' }, { cwd: bus.dir });
  try {
    const before = await server.call<{ name: string }>('whoami');
    assert.match(before.name, /^shop\/claude-\d+$/);
    const watcher = startWatch(bus, 'sess-rename', ['--max-seconds', '30'], { AGENT_BUS_WATCH_POLL_SECONDS: '5' });
    await settle(bus, watcher);
    const renamed = await server.call<{ name: string }>('set_session', { label: 'front' });
    assert.equal(renamed.name, 'shop/claude-front');
    await waitUntil(() => bus.rows(`SELECT agent FROM watchers WHERE pid = ${watcher.pid}`).some((row) => row.agent === 'shop/claude-front'), 'the watcher to follow the rename');
    assert.equal(runCli(['send', 'to the new name', '--to', 'shop/claude-front'], { env: bus.env }).code, 0);
    const { code, stderr } = await watcher.done;
    assert.equal(code, 10);
    assert.match(stderr, /to the new name/);
  } finally {
    await server.close();
  }
}));
