/**
 * The maintenance port, on both engines: what a prune removes (QUERIES.md, "Pruning").
 */
import assert from 'node:assert/strict';
import { formatStamp, nowMicros, nowStamp } from '../../../src/model/clock.js';
import { conformance } from './harness.js';

conformance('prune: a thread goes only when it is wholly read and wholly older; expired notices, their receipts, receipts of notices gone, sessions ended long ago and spawned agents that ended before the cutoff go too; a dry run counts the same and removes nothing', async (ctx) => {
  await ctx.register(['alpha', 'beta']);
  const micros = nowMicros();
  const daysAgo = (days: number): string => formatStamp(micros - days * 86_400_000_000);
  /** A thread of mail from alpha to beta, each message sent `age` days ago and read then or unread. */
  const thread = async (label: string, messages: Array<{ age: number; read: boolean }>): Promise<string> => {
    let threadId: string | undefined;
    for (const [index, message] of messages.entries()) {
      const sent = await ctx.bus.mail.send({ from: 'alpha', to: 'beta', body: `${label} ${index}`, ...(threadId === undefined ? {} : { threadId }) });
      threadId = sent.thread_id as string;
      const readAt = message.read ? `'${daysAgo(message.age)}'` : 'NULL';
      ctx.paths.sql(`UPDATE messages SET sent_at = '${daysAgo(message.age)}', read_at = ${readAt} WHERE message_id = '${sent.message_ids[0]}'`);
    }
    return threadId as string;
  };
  await thread('wholly read and older', [{ age: 40, read: true }, { age: 35, read: true }]);
  const unread = await thread('one of it unread', [{ age: 40, read: true }, { age: 35, read: false }]);
  const replied = await thread('a reply since', [{ age: 40, read: true }, { age: 1, read: true }]);
  const fresh = await thread('fresh', [{ age: 1, read: false }]);
  const notice = (id: string, expiresAt: string): string =>
    `INSERT INTO notices (notice_id, channel, severity, title, body, source, priority, content_hash, created_at, expires_at)
     VALUES ('${id}', NULL, 'info', NULL, 'a notice', 'test', 5, 'hash-${id}', '${daysAgo(2)}', '${expiresAt}')`;
  ctx.paths.sql(notice('expired', daysAgo(1)));
  ctx.paths.sql(notice('live', daysAgo(-1)));
  for (const id of ['expired', 'live', 'gone-before']) ctx.paths.sql(`INSERT INTO notice_receipts (notice_id, session, delivered_at) VALUES ('${id}', 's-1', '${daysAgo(2)}')`);
  const session = (pid: number, name: string, endedAt: string | null): string =>
    `INSERT INTO sessions (server_pid, server_started, name, client_address, repo_path, lineage, session_key, boot_id, pid_ns, started_at, last_seen, ended_at)
     VALUES (${pid}, 'start', '${name}', 'repo-a/claude', '/repos/a', '[]', NULL, NULL, NULL, '${daysAgo(60)}', '${daysAgo(1)}', ${endedAt === null ? 'NULL' : `'${endedAt}'`})`;
  ctx.paths.sql(session(1, 'repo-a/claude-1', daysAgo(10)));
  ctx.paths.sql(session(2, 'repo-a/claude-2', daysAgo(1)));
  ctx.paths.sql(session(3, 'repo-a/claude-3', null));
  const spawn = (label: string, state: string, endedAt: string | null): string =>
    `INSERT INTO spawns (spawn_id, name, client, label, repo, folder, machine, prompt, spawned_by, depth, state, log_path, created_at, ended_at)
     VALUES ('s-${label}', 'repo-a/claude-${label}', 'claude', '${label}', 'repo-a', '/repos/a', 'box', 'p', 'human', 1, '${state}', '/l/${label}.log', '${daysAgo(60)}', ${endedAt === null ? 'NULL' : `'${endedAt}'`})`;
  ctx.paths.sql(spawn('ended-long-ago', 'exited', daysAgo(40)));
  ctx.paths.sql(spawn('ended-lately', 'exited', daysAgo(1)));
  ctx.paths.sql(spawn('running', 'running', null));

  const input = { mailBefore: daysAgo(30), now: nowStamp(), sessionsEndedBefore: daysAgo(7), dryRun: true };
  const expected = { threads: 1, messages: 2, notices: 1, receipts: 2, sessions: 1, spawns: 1 };
  const sizes = (): number[] => ['messages', 'notices', 'notice_receipts', 'sessions', 'spawns'].map((table) => ctx.count(`SELECT COUNT(*) AS n FROM ${table}`));
  const before = sizes();
  assert.deepEqual(await ctx.store.prune(input), expected, 'a dry run counts');
  assert.deepEqual(sizes(), before, 'a dry run removes nothing');
  assert.deepEqual(await ctx.store.prune({ ...input, dryRun: false }), expected);

  const kept = ctx.paths.rows<{ thread_id: string; n: number | string }>('SELECT thread_id, COUNT(*) AS n FROM messages GROUP BY thread_id ORDER BY thread_id');
  assert.deepEqual(
    kept.map((row) => [row.thread_id, Number(row.n)]),
    [[unread, 2], [replied, 2], [fresh, 1]].sort(([a], [b]) => (String(a) < String(b) ? -1 : 1)),
    'a thread with unread mail, or mail sent since, keeps all of it',
  );
  assert.deepEqual(ctx.paths.rows('SELECT notice_id FROM notices'), [{ notice_id: 'live' }]);
  assert.deepEqual(ctx.paths.rows('SELECT notice_id FROM notice_receipts'), [{ notice_id: 'live' }]);
  assert.deepEqual(ctx.paths.rows('SELECT name FROM sessions ORDER BY name'), [{ name: 'repo-a/claude-2' }, { name: 'repo-a/claude-3' }]);
  assert.deepEqual(ctx.paths.rows('SELECT label FROM spawns ORDER BY label'), [{ label: 'ended-lately' }, { label: 'running' }], 'a spawned agent goes once it ended before the cutoff');
});

conformance('prune: the record of file edits goes once it is older than the collision window; a dry run keeps it', async (ctx) => {
  await ctx.bus.reservations.recordWrite('shop/claude', 'shop', 'src/old.ts');
  ctx.clock.advance(6 * 60_000);
  await ctx.bus.reservations.recordWrite('shop/codex', 'shop', 'src/new.ts');
  await ctx.bus.retention.prune({ olderThanMs: 86_400_000, dryRun: true, actor: 'human' });
  assert.equal(ctx.count('SELECT COUNT(*) AS n FROM edits'), 2, 'a dry run removes nothing');
  await ctx.bus.retention.prune({ olderThanMs: 86_400_000, dryRun: false, actor: 'human' });
  assert.deepEqual(ctx.paths.rows<{ path: string }>('SELECT path FROM edits'), [{ path: 'src/new.ts' }], 'the edit inside the window stays');
});
