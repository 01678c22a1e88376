/** `agent-bus prune` and AGENT_BUS_RETENTION_DAYS through the real CLI and MCP server. */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { json, readAudit, ROOT, runCli, tempBus, ON_POSTGRES, type TempBus, messageLines } from '../helpers/bus-env.js';
import { connect } from '../helpers/mcp.js';
import { sleep, waitUntil } from '../helpers/wait.js';

const LONG_AGO = '2020-01-01T00:00:00.000000Z';
/** Read mail older than this goes (a second: the mail below is a second old). */
const AGE = '1';

function sleepMs(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

interface PruneReport {
  messages: number;
  threads: number;
  notices: number;
  receipts: number;
  sessions: number;
  spawns: number;
  dry_run: boolean;
  older_than: string;
  reclaimed: { before: number; after: number } | null;
}

function cli(bus: TempBus, args: string[], env: NodeJS.ProcessEnv = {}, cwd?: string): ReturnType<typeof runCli> {
  return runCli(args, { env: { ...bus.env, ...env }, ...(cwd === undefined ? {} : { cwd }) });
}

function sendOn(bus: TempBus, body: string, to: string, from: string, thread?: string): string {
  const result = json<{ thread_id: string }>(cli(bus, ['send', body, '--to', to, '--name', from, '--json', ...(thread ? ['--thread', thread] : [])]));
  return result.thread_id;
}

function inList(ids: string[]): string {
  return ids.map((id) => `'${id}'`).join(', ');
}

function count(bus: TempBus, query: string): number {
  return Number(bus.rows<{ n: number | string }>(query)[0]?.n ?? 0);
}

/**
 * Mail of every kind a prune must tell apart: a thread wholly read and old; an old thread with one
 * message unread; a read thread with a recent reply; a repo-wide fan-out, claimed, read by every copy's
 * reader, and old; a fan-out still unread by a sibling of its claimer. Plus an
 * expired notice with a receipt, and an ended session long past its resume window.
 */
function seeded(age: 'long ago' | 'a second ago' = 'a second ago'): { bus: TempBus; threads: { read: string; unread: string; recent: string; fanout: string; claimedUnread: string }; gone: string[] } {
  const bus = tempBus();
  // Each joins with a note to itself, read below: four more threads wholly read.
  const joined = ['alice', 'bob', 'shop/claude', 'shop/codex'].map((name) => sendOn(bus, 'joining', name, name));
  const threads = {
    read: sendOn(bus, 'old and read', 'bob', 'alice'),
    unread: sendOn(bus, 'old, one unread', 'bob', 'alice'),
    recent: sendOn(bus, 'old, with a new reply', 'bob', 'alice'),
    fanout: sendOn(bus, 'for the repo', 'shop', 'alice'),
  };
  sendOn(bus, 'the reply', 'alice', 'bob', threads.read);
  assert.equal(cli(bus, ['inbox', '--name', 'bob']).code, 0);
  assert.equal(cli(bus, ['inbox', '--name', 'alice']).code, 0);
  assert.equal(cli(bus, ['inbox', '--name', 'shop/claude']).code, 0);
  // The sibling's copy (shown to it as picked up by shop/claude) is unread until it reads it.
  assert.equal(cli(bus, ['inbox', '--name', 'shop/codex']).code, 0);
  const claimedUnread = sendOn(bus, 'for the repo, later', 'shop', 'alice');
  assert.equal(cli(bus, ['inbox', '--name', 'shop/claude']).code, 0);
  sendOn(bus, 'still waiting', 'bob', 'alice', threads.unread);
  // Mail ages for real (a second), so its audit rows are as old as it; only where a test needs
  // mail older than days is it backdated in the database.
  if (age === 'long ago') {
    for (const thread of [...Object.values(threads), claimedUnread]) bus.sql(`UPDATE messages SET sent_at = '${LONG_AGO}' WHERE thread_id = '${thread}'`);
  } else {
    sleepMs(1_300);
  }
  sendOn(bus, 'new today', 'bob', 'alice', threads.recent);
  // Newer than any cutoff, however slow the machine is between here and the prune.
  bus.sql(`UPDATE messages SET sent_at = '2999-01-01T00:00:00.000000Z' WHERE body = 'new today'`);
  assert.equal(cli(bus, ['inbox', '--name', 'bob', '--peek']).code, 0);
  // The new reply is read too: the thread stays for its age alone.
  bus.sql(`UPDATE messages SET read_at = sent_at WHERE thread_id = '${threads.recent}'`);
  const notice = json<{ notice_id: string }>(cli(bus, ['notice', 'an old alert', '-s', 'alert', '--json']));
  bus.sql(`INSERT INTO notice_receipts (notice_id, session, delivered_at) VALUES ('${notice.notice_id}', 'sess-1', '${LONG_AGO}')`);
  bus.sql(`UPDATE notices SET expires_at = '${LONG_AGO}' WHERE notice_id = '${notice.notice_id}'`);
  bus.sql(
    `INSERT INTO sessions (server_pid, server_started, name, client_address, repo_path, lineage, started_at, last_seen, ended_at)
     VALUES (1, 'boot', 'shop/claude-1', 'shop/claude', '/repos/shop', 'l', '${LONG_AGO}', '${LONG_AGO}', '${LONG_AGO}')`,
  );
  return { bus, threads: { ...threads, claimedUnread }, gone: [threads.read, threads.fanout, ...(age === 'long ago' ? [] : joined)] };
}

test('prune --dry-run counts what would go and removes nothing', () => {
  const { bus, gone } = seeded();
  try {
    const before = count(bus, 'SELECT COUNT(*) AS n FROM messages');
    const report = json<PruneReport>(cli(bus, ['prune', '--older-than', AGE, '--dry-run', '--json']));
    assert.equal(report.dry_run, true);
    assert.equal(report.threads, gone.length, 'the read thread, the fan-out read by both, the notes read');
    assert.equal(report.messages, count(bus, `SELECT COUNT(*) AS n FROM messages WHERE thread_id IN (${inList(gone)})`));
    assert.deepEqual([report.notices, report.receipts, report.sessions], [1, 1, 1]);
    assert.equal(count(bus, 'SELECT COUNT(*) AS n FROM messages'), before, 'nothing removed');
    assert.equal(readAudit(bus.audit).filter((row) => row.op === 'prune').length, 0, 'a dry run writes no prune row');
    assert.match(cli(bus, ['prune', '--older-than', AGE, '--dry-run']).stdout, /^would remove \d+ messages in 6 threads, 1 expired notice and 1 receipt, 1 ended session, 0 ended spawned agents .*nothing was removed\n$/);
  } finally {
    bus.cleanup();
  }
});

test('prune removes whole threads only when all of them is read and older; never unread mail', () => {
  const { bus, threads, gone } = seeded();
  try {
    const unreadBefore = count(bus, 'SELECT COUNT(*) AS n FROM messages WHERE read_at IS NULL');
    const expected = count(bus, `SELECT COUNT(*) AS n FROM messages WHERE thread_id IN (${inList(gone)})`);
    const report = json<PruneReport>(cli(bus, ['prune', '--older-than', AGE, '--json']));
    assert.equal(report.messages, expected);
    assert.equal(report.threads, gone.length);
    assert.equal(count(bus, `SELECT COUNT(*) AS n FROM messages WHERE thread_id IN (${inList(gone)})`), 0);
    assert.ok(count(bus, `SELECT COUNT(*) AS n FROM messages WHERE thread_id = '${threads.unread}'`) >= 2, 'a thread with unread mail keeps all of it');
    assert.ok(count(bus, `SELECT COUNT(*) AS n FROM messages WHERE thread_id = '${threads.recent}'`) >= 2, 'a thread with a recent message keeps all of it');
    assert.equal(count(bus, `SELECT COUNT(*) AS n FROM messages WHERE thread_id = '${threads.claimedUnread}'`), 2, "a fan-out a sibling has not read keeps both copies");
    assert.equal(count(bus, 'SELECT COUNT(*) AS n FROM messages WHERE read_at IS NULL'), unreadBefore, 'no unread message went');
    assert.equal(count(bus, 'SELECT COUNT(*) AS n FROM notices'), 0);
    assert.equal(count(bus, 'SELECT COUNT(*) AS n FROM notice_receipts'), 0);
    assert.equal(count(bus, 'SELECT COUNT(*) AS n FROM sessions WHERE ended_at IS NOT NULL'), 0);
    const rows = readAudit(bus.audit).filter((row) => row.op === 'prune');
    assert.equal(rows.length, 1);
    assert.equal(rows[0]?.messages, expected);
    assert.equal(rows[0]?.older_than, report.older_than);
    if (ON_POSTGRES) assert.equal(report.reclaimed, null, 'PostgreSQL: autovacuum reclaims');
    else {
      assert.ok(report.reclaimed !== null && report.reclaimed.after <= report.reclaimed.before);
      assert.deepEqual(bus.rows('PRAGMA auto_vacuum'), [{ auto_vacuum: 2 }], 'incremental vacuum from here on');
      assert.ok(statSync(bus.db).size > 0);
    }
    // The log still names the pruned mail's sends: verify tells them from lost mail.
    const verified = cli(bus, ['audit', 'verify', '--json']);
    assert.equal(verified.code, 0, verified.stdout);
    assert.ok((JSON.parse(verified.stdout) as { store: { pruned_rows: number } }).store.pruned_rows >= expected);
    // A second prune finds nothing, and writes no row.
    const again = json<PruneReport>(cli(bus, ['prune', '--older-than', AGE, '--json']));
    assert.deepEqual([again.messages, again.notices, again.receipts, again.sessions], [0, 0, 0, 0]);
    assert.equal(readAudit(bus.audit).filter((row) => row.op === 'prune').length, 1);
  } finally {
    bus.cleanup();
  }
});

test('prune: no age given, or a bad one, is a one-line error and nothing is removed', () => {
  const { bus } = seeded();
  try {
    const before = count(bus, 'SELECT COUNT(*) AS n FROM messages');
    const none = cli(bus, ['prune']);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /^agent-bus: prune: say how old read mail must be to go, e\.g\. --older-than 90d/);
    const bad = cli(bus, ['prune', '--older-than', 'x'.repeat(5000)]);
    assert.notEqual(bad.code, 0);
    assert.equal(messageLines(bad.stderr).length, 1);
    assert.ok((messageLines(bad.stderr)[0] ?? '').length < 400, 'the message quotes the value cut short');
    assert.equal(count(bus, 'SELECT COUNT(*) AS n FROM messages'), before);
    // AGENT_BUS_RETENTION_DAYS stands in for --older-than.
    const byDays = json<PruneReport>(cli(bus, ['prune', '--dry-run', '--json'], { AGENT_BUS_RETENTION_DAYS: '30' }));
    assert.equal(byDays.threads, 0, 'nothing here is 30 days old');
    assert.ok(Date.parse(byDays.older_than) < Date.now() - 29 * 86_400_000);
  } finally {
    bus.cleanup();
  }
});

test('AGENT_BUS_RETENTION_DAYS: an MCP server prunes on its own, once a day however many servers run', async () => {
  const { bus, threads } = seeded('long ago');
  // Set where a user keeps it for every client: the bus folder's .env.
  writeFileSync(join(bus.folder, '.env'), 'AGENT_BUS_RETENTION_DAYS=30\n', { mode: 0o600 });
  const env = { ...bus.env, AGENT_BUS_NAME: 'alice' };
  try {
    const first = await connect(env);
    const second = await connect(env);
    try {
      await waitUntil(() => count(bus, `SELECT COUNT(*) AS n FROM messages WHERE thread_id = '${threads.read}'`) === 0, () => `an automatic prune: ${first.stderr()}`, 20_000, 250);
      // Nothing says when the second server has made its own daily decision: a pause for a second prune to show.
      await sleep(1_500);
    } finally {
      await first.close();
      await second.close();
    }
    assert.equal(readAudit(bus.audit).filter((row) => row.op === 'prune').length, 1, 'one prune for the day');
    assert.equal(count(bus, "SELECT COUNT(*) AS n FROM maintenance WHERE task = 'retention'"), 1);
    assert.ok(count(bus, 'SELECT COUNT(*) AS n FROM messages WHERE read_at IS NULL') > 0, 'unread mail stays');
  } finally {
    bus.cleanup();
  }
});

test('prune removes the records of spawned agents that ended before the cutoff, and their logs on this machine; a running or recent one stays', async () => {
  const bus = tempBus();
  try {
    const repo = join(bus.dir, 'shop');
    mkdirSync(join(repo, '.git'), { recursive: true });
    const env = { ...bus.env, AGENT_BUS_CLAUDE_BIN: join(ROOT, 'test', 'helpers', 'fake-agent.mjs') };
    const spawnOne = (label: string, steps: string): { log: string } => json<{ log: string }>(cli(bus, ['spawn', 'claude', '--prompt', 'x', '--label', label, '--json'], { ...env, FAKE_AGENT: steps }, repo));
    const old = spawnOne('old', 'exit:0');
    const recent = spawnOne('recent', 'exit:0');
    const running = spawnOne('running', 'sleep:60000');
    await waitUntil(() => count(bus, "SELECT COUNT(*) AS n FROM spawns WHERE state = 'exited'") === 2, 'the two short ones have ended');
    bus.sql("UPDATE spawns SET ended_at = '2020-01-01T00:00:00.000000Z' WHERE label = 'old'");
    const dry = json<PruneReport & { logs_removed: number }>(cli(bus, ['prune', '--older-than', '30d', '--dry-run', '--json']));
    assert.deepEqual([dry.spawns, dry.logs_removed], [1, 0]);
    assert.ok(existsSync(old.log), 'a dry run removes no log');
    const report = json<PruneReport & { logs_removed: number }>(cli(bus, ['prune', '--older-than', '30d', '--json']));
    assert.deepEqual([report.spawns, report.logs_removed], [1, 1]);
    assert.deepEqual(bus.rows<{ label: string }>('SELECT label FROM spawns ORDER BY label').map((row) => row.label), ['recent', 'running']);
    assert.equal(existsSync(old.log), false, 'the pruned agent\'s log went');
    assert.ok(existsSync(recent.log) && existsSync(running.log), 'the others\' logs stay');
    assert.equal(readAudit(bus.audit).find((row) => row.op === 'prune')?.spawns, 1);
    assert.equal(cli(bus, ['stop', 'shop/claude-running'], env, repo).code, 0);
  } finally {
    bus.cleanup();
  }
});
