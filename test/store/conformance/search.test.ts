/**
 * The search port, on both engines: words, phrases and prefixes read alike, who sees what, the
 * index kept up to date, batched, rebuilt after an older agent-bus, and pruned with the mail.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { formatStamp, nowStamp, stampOf } from '../../../src/model/clock.js';
import { coreBus } from '../../helpers/core-bus.js';
import { openStore } from '../../../src/store/open.js';
import { Bus } from '../../../src/core/bus.js';
import { busSettings } from '../../../src/core/settings.js';
import { livenessFrom } from '../../../src/core/liveness.js';
import { openAuditLog } from '../../../src/runtime.js';
import { parseSearchQuery } from '../../../src/core/search-query.js';
import { systemProcessTable } from '../../../src/adapters/procs.js';
import type { SearchFilter } from '../../../src/model/search.js';
import { conformance, DAY_MS, found, sendMail, type CoreBus } from './harness.js';

conformance('search finds words, "phrases" and prefixes the same on both engines, each send once, newest first, as each reader may see it', async (ctx) => {
  await ctx.register(['repo-a/claude', 'repo-a/codex', 'repo-b/claude', 'human', 'maria']);
  const send = async (from: string, to: string, body: string, threadId?: string): Promise<string> => {
    const sent = await ctx.bus.mail.send({ from, to, body, ...(threadId ? { threadId } : {}) });
    return sent.message_ids[0] as string;
  };
  const find = async (query: string, options: { reader?: string | null; from?: string; to?: string; thread?: string; since?: string } = {}): Promise<string[]> =>
    (await ctx.bus.mail.search({ query, reader: options.reader ?? null, ...options })).map((hit) => hit.snippet.map((part) => part.text).join(''));
  await send('human', 'repo-a/claude', 'please review the login form before merge');
  const thread = (await ctx.bus.mail.recent(1))[0]?.thread_id as string;
  // The first mail is three days older than the rest.
  ctx.clock.advance(3 * DAY_MS);
  await send('repo-a/claude', 'human', 'reviewed: the login form looks fine', thread);
  await send('human', 'repo-a', 'deploy freeze until the release');
  await send('repo-b/claude', 'maria', 'the deployment to staging failed');
  await send('maria', 'repo-b/claude', 'Login Form redesign ships Friday');
  await send('repo-a/codex', 'repo-a/claude', 'a form for login is missing');

  assert.deepEqual(await find('login form'), ['a form for login is missing', 'Login Form redesign ships Friday', 'reviewed: the login form looks fine', 'please review the login form before merge']);
  assert.deepEqual(await find('"login form"'), ['Login Form redesign ships Friday', 'reviewed: the login form looks fine', 'please review the login form before merge']);
  // A fan-out to the repo is one result, found by a prefix like the word it starts.
  assert.deepEqual(await find('deploy*'), ['the deployment to staging failed', 'deploy freeze until the release']);
  assert.deepEqual(await find('deploy'), ['deploy freeze until the release']);
  // Who sees what: a reader's own mail and its repo's; a person's own mail only.
  assert.deepEqual(await find('login', { reader: 'repo-b/claude' }), ['Login Form redesign ships Friday']);
  assert.deepEqual(await find('login', { reader: 'repo-a/codex' }), ['a form for login is missing', 'reviewed: the login form looks fine', 'please review the login form before merge']);
  assert.deepEqual(await find('login', { reader: 'human' }), ['reviewed: the login form looks fine', 'please review the login form before merge']);
  assert.deepEqual(await find('deploy', { reader: 'repo-a/codex' }), ['deploy freeze until the release']);
  // Filters.
  assert.deepEqual(await find('login', { from: 'repo-a' }), ['a form for login is missing', 'reviewed: the login form looks fine']);
  assert.deepEqual(await find('deploy*', { to: 'repo-a' }), ['deploy freeze until the release']);
  assert.deepEqual(await find('login', { thread: thread.slice(0, 8) }), ['reviewed: the login form looks fine', 'please review the login form before merge']);
  assert.deepEqual(await find('review*', { since: '1d' }), ['reviewed: the login form looks fine']);
  // Mail stored after a search is found by the next; mail removed is found no more.
  await send('repo-b/claude', 'repo-a/codex', 'a brand new login flow');
  assert.deepEqual((await find('login')).slice(0, 1), ['a brand new login flow']);
  ctx.paths.sql("DELETE FROM messages WHERE body = 'a brand new login flow'");
  assert.deepEqual((await find('brand new')), []);
  // A hit says who wrote to whom, in which thread, and where it matched.
  const [hit] = await ctx.bus.mail.search({ query: 'staging', reader: null });
  assert.deepEqual([hit?.from, hit?.to, hit?.snippet.filter((part) => part.match).map((part) => part.text)], ['repo-b/claude', 'maria', ['staging']]);
});

conformance("a reader's search finds its own and its repo's mail whether its repo has much mail and few matches or little mail among many", async (ctx) => {
  await ctx.register(['repo-a/claude', 'repo-a/codex', 'repo-b/claude', 'repo-b/codex', 'repo-c/claude', 'human']);
  const routine: string[] = [];
  for (let index = 0; index < 30; index++) routine.push(await sendMail(ctx, 'repo-a/claude', 'repo-a/codex', `routine sync ${index}`));
  const toA = await sendMail(ctx, 'human', 'repo-a/codex', 'a zebra for repo-a');
  const toB: string[] = [];
  for (let index = 0; index < 30; index++) toB.push(await sendMail(ctx, 'repo-b/claude', 'repo-b/codex', `zebra chatter ${index}`));
  const fromA = await sendMail(ctx, 'repo-a/codex', 'repo-b/claude', 'a zebra from repo-a');
  toB.push(fromA);
  for (let index = 0; index < 10; index++) toB.push(await sendMail(ctx, 'human', 'repo-b/codex', `routine zebra ${index}`));
  const toC = await sendMail(ctx, 'repo-b/codex', 'repo-c/claude', 'routine for repo-c');

  // Much mail in the reader's repo, two of it matching among many matches elsewhere.
  assert.deepEqual(await found(ctx, 'zebra', 'repo-a/claude'), [fromA, toA]);
  assert.deepEqual(await found(ctx, 'zebra', 'repo-b/claude', 500), [...toB].reverse());
  // A word in most mail, and a reader with one message of it; a limit keeps the newest.
  assert.deepEqual(await found(ctx, 'routine', 'repo-c/claude'), [toC]);
  assert.deepEqual(await found(ctx, 'routine', 'repo-a/codex', 3), routine.slice(-3).reverse());
  assert.deepEqual(await found(ctx, 'routine zebra', null, 500), toB.slice(-10).reverse());
  // A person finds what was sent by or to them alone, not the mail of a repo that has their name.
  await ctx.register(['ops', 'ops/claude']);
  await sendMail(ctx, 'ops/claude', 'repo-a/codex', 'a zebra from the ops repo');
  const fromOps = await sendMail(ctx, 'ops', 'repo-b/codex', 'a zebra from ops');
  assert.deepEqual(await found(ctx, 'zebra', 'ops'), [fromOps]);
  // Mail to the repo reaches an agent filed under it by its repo column alone (an older roster's row).
  await ctx.register(['legacy/bot']);
  ctx.paths.sql("UPDATE agents SET group_name = 'repo-d' WHERE name = 'legacy/bot'");
  await ctx.bus.mail.send({ from: 'human', to: 'repo-d', body: 'a zebra for everyone in repo-d' });
  const [toRepoD] = await found(ctx, 'zebra', null);
  assert.deepEqual(await found(ctx, 'zebra', 'repo-d/claude'), [toRepoD]);
});

conformance('a prefix finds every word it starts: a few, more than SQLite looks up one by one, none, and beyond ASCII', async (ctx) => {
  await ctx.register(['repo-a/claude', 'repo-a/codex', 'repo-b/claude', 'human']);
  const deploys = [
    await sendMail(ctx, 'human', 'repo-a/claude', 'deploy now'),
    await sendMail(ctx, 'human', 'repo-a/codex', 'deployed it'),
    await sendMail(ctx, 'repo-a/claude', 'human', 'deploying soon'),
    await sendMail(ctx, 'repo-b/claude', 'human', 'the deployment broke'),
  ];
  await sendMail(ctx, 'human', 'repo-a/claude', 'an unrelated note');
  const waves = Array.from({ length: 40 }, (_, index) => `wave${String(index).padStart(2, '0')}`);
  const early = await sendMail(ctx, 'human', 'repo-a/claude', waves.slice(0, 20).join(' '));
  const late = await sendMail(ctx, 'human', 'repo-b/claude', waves.slice(20).join(' '));
  const cafes = [await sendMail(ctx, 'human', 'repo-a/codex', 'café au lait'), await sendMail(ctx, 'repo-a/codex', 'human', 'two cafés downtown')];

  assert.deepEqual(await found(ctx, 'deploy*', null), [...deploys].reverse());
  assert.deepEqual(await found(ctx, 'deploy*', 'repo-a/codex'), deploys.slice(0, 3).reverse());
  assert.deepEqual(await found(ctx, 'deployi*', null), [deploys[2]]);
  assert.deepEqual(await found(ctx, 'deploy* now', null), [deploys[0]]);
  assert.deepEqual(await found(ctx, 'wave*', null), [late, early]);
  assert.deepEqual(await found(ctx, 'wave*', 'repo-a/claude'), [early]);
  assert.deepEqual(await found(ctx, 'wave3*', null), [late]);
  assert.deepEqual(await found(ctx, 'zzz*', null), []);
  assert.deepEqual(await found(ctx, 'zzz* deploy', null), []);
  assert.deepEqual(await found(ctx, 'caf*', null), [...cafes].reverse());
  assert.deepEqual(await found(ctx, 'café*', 'repo-a/claude'), [...cafes].reverse());
});

/** What a search ran to index new mail before the index held each message's parties: bodies alone. */
const INDEXING_BEFORE_PARTIES = {
  sqlite: `INSERT INTO message_search (rowid, body) SELECT rowid, body FROM messages WHERE rowid > (SELECT position FROM search_index WHERE name = 'messages');
    INSERT OR REPLACE INTO search_index (name, position) VALUES ('messages', COALESCE((SELECT MAX(rowid) FROM messages), 0));`,
  postgres: `WITH indexed AS (SELECT position FROM search_index WHERE name = 'messages'),
      added AS (
        INSERT INTO message_search (seq, tsv)
        SELECT m.seq, to_tsvector('simple', m.body) FROM messages m
         WHERE m.seq > COALESCE((SELECT position FROM indexed), 0) - 1000
           AND NOT EXISTS (SELECT 1 FROM message_search s WHERE s.seq = m.seq)
        ON CONFLICT DO NOTHING
        RETURNING seq)
    UPDATE search_index SET position = GREATEST(position, COALESCE((SELECT MAX(seq) FROM added), 0)) WHERE name = 'messages'`,
};

conformance('mail an older agent-bus indexed, its bodies alone, is indexed again for a reader to find', async (ctx) => {
  await ctx.register(['repo-a/claude', 'repo-a/codex', 'repo-b/claude', 'human']);
  const first = await sendMail(ctx, 'human', 'repo-a/claude', 'the first zebra');
  assert.deepEqual(await found(ctx, 'zebra', 'repo-a/codex'), [first]);
  const second = await sendMail(ctx, 'repo-b/claude', 'repo-a/codex', 'the second zebra');
  const third = await sendMail(ctx, 'repo-b/claude', 'human', 'the third zebra, not for repo-a');
  ctx.paths.sql(INDEXING_BEFORE_PARTIES[ctx.engine]);
  assert.deepEqual(await found(ctx, 'zebra', 'repo-a/codex'), [second, first]);
  assert.deepEqual(await found(ctx, 'zebra', 'human'), [third, first]);
  assert.deepEqual(await found(ctx, 'zebra', null), [third, second, first]);
  // The index holds each message once: what the older agent-bus wrote is gone.
  const copies = await ctx.store.searchMessages(parseSearchQuery('zebra'), { visibleTo: null, from: null, to: null, thread: null, since: null, before: null }, 100);
  assert.deepEqual(copies.map((copy) => copy.messageId), [third, second, first]);
});

conformance('search: a bus whose mail is not indexed yet is indexed in batches, every message of it found', async (ctx) => {
  await ctx.register(['repo-a/claude', 'human']);
  const rows = 60_000;
  // Mail stored without the search's knowledge (as an upgrade finds it): more than one batch on either engine.
  ctx.paths.sql(
    ctx.engine === 'sqlite'
      ? `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${rows})
         INSERT INTO messages (message_id, from_agent, to_agent, body, thread_id, sent_at) SELECT 'bulk-' || i, 'human', 'repo-a/claude', 'filler number ' || i, 't-bulk', '2026-01-01T00:00:00.000000Z' FROM n`
      : `INSERT INTO messages (message_id, from_agent, to_agent, body, thread_id, sent_at) SELECT 'bulk-' || i, 'human', 'repo-a/claude', 'filler number ' || i, 't-bulk', '2026-01-01T00:00:00.000000Z' FROM generate_series(1, ${rows}) AS i`,
  );
  await ctx.bus.mail.send({ from: 'human', to: 'repo-a/claude', body: 'the needle after the bulk' });
  const hits = await ctx.bus.mail.search({ query: 'needle', reader: 'repo-a/claude' });
  assert.deepEqual(hits.map((hit) => hit.snippet.map((part) => part.text).join('')), ['the needle after the bulk']);
  assert.equal((await ctx.bus.mail.search({ query: '"filler number 1"', reader: null })).length, 1, 'the first of the bulk');
  assert.equal((await ctx.bus.mail.search({ query: `"number ${rows}"`, reader: 'repo-a/claude' })).length, 1, 'the last of the bulk');
  assert.equal(ctx.count('SELECT COUNT(*) AS n FROM message_search'), rows + 1, 'every message indexed once');
});

conformance('search: a broadcast to many is one result however many of its copies come first, and older mail is still found behind it', async (ctx) => {
  const agents = Array.from({ length: 40 }, (_, index) => `repo-${index}/claude`);
  await ctx.register([...agents, 'human']);
  await ctx.bus.mail.send({ from: 'human', to: 'repo-1/claude', body: 'the older review request' });
  await ctx.bus.mail.send({ from: 'human', to: 'repo-2/claude', body: 'a second review, older still than the broadcast' });
  await ctx.bus.mail.send({ from: 'human', to: '*', body: 'review day for everyone' });
  const bodies = async (limit: number): Promise<string[]> =>
    (await ctx.bus.mail.search({ query: 'review', reader: null, limit })).map((hit) => hit.snippet.map((part) => part.text).join(''));
  assert.deepEqual(await bodies(3), ['review day for everyone', 'a second review, older still than the broadcast', 'the older review request']);
  assert.deepEqual(await bodies(2), ['review day for everyone', 'a second review, older still than the broadcast']);
  assert.equal((await ctx.bus.mail.search({ query: 'review', reader: 'repo-1/claude', limit: 5 })).length, 2, 'a reader pages too: the broadcast and its own');
});

conformance('search reads words the same on both engines: paths, branches, addresses, versions, snake_case, Unicode punctuation and case, emoji', async (ctx) => {
  await ctx.register(['repo-a/claude', 'human']);
  const bodies = [
    'merged feat/login into main',
    'mail bob@example.com about v1.2.3',
    'done\u2014thanks for the \u201cquick\u201d fix',
    'the snake_case_name and an x-ray',
    '\u00dcN\u00cfC\u00d6D\u00c9 CAF\u00c9 menu',
    'see /usr/local/bin/agent-bus for 3.14 details',
    'great\u{1f44d}thanks',
  ];
  const ids: string[] = [];
  for (const body of bodies) ids.push(await sendMail(ctx, 'human', 'repo-a/claude', body));
  const expected: Record<string, number[]> = {
    login: [0],
    '"feat login"': [0],
    'feat/login': [0],
    bob: [1],
    'example.com': [1],
    '"v1 2 3"': [1],
    thanks: [6, 2],
    quick: [2],
    '"thanks for the quick"': [2],
    snake: [3],
    '"case name"': [3],
    '"x ray"': [3],
    'caf\u00e9': [4],
    '\u00fcn\u00efc\u00f6d\u00e9': [4],
    'CAF\u00c9': [4],
    'caf*': [4],
    usr: [5],
    '"local bin agent bus"': [5],
    '14': [5],
    great: [6],
  };
  for (const [query, want] of Object.entries(expected)) {
    assert.deepEqual(await found(ctx, query, null), want.map((index) => ids[index]), `${query} on ${ctx.engine}`);
    assert.deepEqual(await found(ctx, query, 'repo-a/claude'), want.map((index) => ids[index]), `${query} as the reader on ${ctx.engine}`);
  }
});

test('postgres: mail the agent-bus before this one indexed, reading feat/login as one word, is indexed again and found by its parts', async () => {
  const ctx = await coreBus({}, 'postgres');
  try {
    await ctx.register(['repo-a/claude', 'human']);
    const id = await sendMail(ctx, 'human', 'repo-a/claude', 'merged feat/login into main');
    assert.deepEqual(await found(ctx, 'login', 'repo-a/claude'), [id]);
    // As that version left it: the body through the parser alone, its own marker, no 'words' mark.
    ctx.paths.sql(`UPDATE message_search s SET tsv = to_tsvector('simple', m.body) || array_to_tsvector(ARRAY['/ parties']) FROM messages m WHERE m.seq = s.seq;
      DELETE FROM search_index WHERE name = 'words'`);
    assert.equal(ctx.count(`SELECT COUNT(*) AS n FROM message_search WHERE tsv @@ to_tsquery('simple', 'login')`), 0, 'the old reading');
    assert.deepEqual(await found(ctx, 'login', 'repo-a/claude'), [id]);
    assert.deepEqual(await found(ctx, '"feat login"', null), [id]);
    assert.equal(ctx.count('SELECT COUNT(*) AS n FROM message_search'), 1);
  } finally {
    await ctx.close();
  }
});

conformance('search: pruned mail leaves the index with it, and what is kept is still found', async (ctx) => {
  await ctx.register(['repo-a/claude', 'human']);
  // Sent and read forty days before the other.
  const old = await sendMail(ctx, 'human', 'repo-a/claude', 'an old zebra, read long ago');
  await ctx.bus.inbox.read({ reader: 'repo-a/claude', via: 'read_inbox' });
  ctx.clock.advance(40 * DAY_MS);
  const kept = await sendMail(ctx, 'human', 'repo-a/claude', 'a new zebra, unread');
  assert.deepEqual(await found(ctx, 'zebra', null), [kept, old]);
  assert.equal(ctx.count('SELECT COUNT(*) AS n FROM message_search'), 2);
  const now = ctx.clock.nowMicros();
  const pruned = await ctx.store.prune({ mailBefore: formatStamp(now - 30 * DAY_MS * 1000), now: formatStamp(now), sessionsEndedBefore: formatStamp(now - 40 * DAY_MS * 1000), dryRun: false });
  assert.equal(pruned.messages, 1);
  assert.equal(ctx.count('SELECT COUNT(*) AS n FROM message_search'), 1, 'the pruned message is out of the index');
  assert.deepEqual(await found(ctx, 'zebra', null), [kept]);
});

test('postgres: an index row whose message is gone (an older agent-bus pruned it) goes at the next prune', async () => {
  const ctx = await coreBus({}, 'postgres');
  try {
    await ctx.register(['repo-a/claude', 'human']);
    await sendMail(ctx, 'human', 'repo-a/claude', 'old mail');
    await ctx.bus.inbox.read({ reader: 'repo-a/claude', via: 'read_inbox' });
    await found(ctx, 'mail', null);
    // The index keeps no key to messages (schema step 18): a row for no message can be there.
    ctx.paths.sql("INSERT INTO message_search (seq, tsv) VALUES (987654321, to_tsvector('simple', 'ghost'))");
    ctx.clock.advance(40 * DAY_MS);
    const now = ctx.clock.nowMicros();
    await ctx.store.prune({ mailBefore: formatStamp(now - 30 * DAY_MS * 1000), now: formatStamp(now), sessionsEndedBefore: formatStamp(now - 40 * DAY_MS * 1000), dryRun: false });
    assert.equal(ctx.count('SELECT COUNT(*) AS n FROM message_search'), 0);
  } finally {
    await ctx.close();
  }
});

/**
 * A writer that takes its position and is slow to commit ('the slow walrus'), while 3,000 messages
 * after it commit: returns its connection, in the open transaction, and its position.
 */
async function slowWriterBehindThousands(ctx: CoreBus): Promise<{ slow: pg.Client; position: number }> {
  const slow = new pg.Client({ connectionString: ctx.paths.db });
  await slow.connect();
  await slow.query('BEGIN');
  const inserted = await slow.query<{ seq: string }>(`INSERT INTO messages (message_id, from_agent, to_agent, body, thread_id, sent_at)
    VALUES ('slow-1', 'human', 'repo-a/claude', 'the slow walrus', 't-slow', '${nowStamp()}') RETURNING seq`);
  ctx.paths.sql(`INSERT INTO messages (message_id, from_agent, to_agent, body, thread_id, sent_at)
    SELECT 'quick-' || i, 'human', 'repo-a/claude', 'quick mail ' || i, 't-quick', '${nowStamp()}' FROM generate_series(1, 3000) AS i`);
  return { slow, position: Number(inserted.rows[0]?.seq) };
}

test('postgres: a message that commits after thousands with later positions is still found, by the background and by a search', async () => {
  const ctx = await coreBus({}, 'postgres');
  let slow: pg.Client | null = null;
  try {
    await ctx.register(['repo-a/claude', 'human']);
    ctx.store.keepSearchIndexCurrent();
    for (let index = 0; index < 3; index++) await ctx.bus.mail.send({ from: 'human', to: 'repo-a/claude', body: `early mail ${index}` });
    assert.equal((await ctx.bus.mail.search({ query: 'early', reader: null })).length, 3);
    // The mark moves once a round finds no transaction under way that the round before it saw: wait
    // for that before the slow writer opens one, which holds every later round's mark back.
    const mark = (): number => ctx.count("SELECT position AS n FROM search_index WHERE name = 'parties'");
    const moved = Date.now() + 10_000;
    while (mark() < 3) {
      assert.ok(Date.now() < moved, `the mark (${mark()}) moved past the early mail`);
      await ctx.bus.mail.search({ query: 'early', reader: null });
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const behind = await slowWriterBehindThousands(ctx);
    slow = behind.slow;
    const position = behind.position;
    for (let index = 0; index < 5; index++) await ctx.bus.mail.send({ from: 'human', to: 'repo-a/claude', body: `a send to index ${index}` });
    assert.deepEqual(await found(ctx, 'walrus', null), [], 'not committed yet');
    await ctx.bus.mail.send({ from: 'human', to: 'repo-a/claude', body: 'one more send, another round' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.ok(mark() >= 3 && mark() < position, `the mark (${mark()}) is past the early mail, not past the slow writer's position (${position})`);
    await slow.query('COMMIT');
    await ctx.bus.mail.send({ from: 'human', to: 'repo-a/claude', body: 'a send after the slow one committed' });
    const deadline = Date.now() + 10_000;
    while (ctx.count(`SELECT COUNT(*) AS n FROM message_search s JOIN messages m ON m.seq = s.seq WHERE m.message_id = 'slow-1'`) === 0) {
      assert.ok(Date.now() < deadline, 'the background indexed the late message');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.equal((await ctx.bus.mail.search({ query: 'walrus', reader: null })).length, 1);
    while (mark() < position) {
      assert.ok(Date.now() < deadline, 'the mark moves on past it');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    await slow?.end();
    await ctx.close();
  }
});

test('postgres: a search alone finds a message that committed after thousands with later positions', async () => {
  const ctx = await coreBus({}, 'postgres');
  let slow: pg.Client | null = null;
  try {
    await ctx.register(['repo-a/claude', 'human']);
    slow = (await slowWriterBehindThousands(ctx)).slow;
    assert.equal((await ctx.bus.mail.search({ query: 'quick', reader: null, limit: 1 })).length, 1);
    await slow.query('COMMIT');
    assert.equal((await ctx.bus.mail.search({ query: 'walrus', reader: null })).length, 1, 'the late message is found');
    assert.equal((await ctx.bus.mail.search({ query: 'quick', reader: null, limit: 1 })).length, 1);
  } finally {
    await slow?.end();
    await ctx.close();
  }
});

test('postgres: two processes keeping the index current as they send index every message once, with no search, and close at once', async () => {
  const ctx = await coreBus({}, 'postgres');
  const other = openStore(ctx.paths.db, { connectTimeoutMs: 5000 });
  try {
    await ctx.register(['repo-a/claude', 'repo-b/claude']);
    ctx.store.keepSearchIndexCurrent();
    other.keepSearchIndexCurrent();
    const otherBus = new Bus(other, openAuditLog(ctx.paths.audit, ctx.paths.env), busSettings(ctx.paths.env), { liveness: () => livenessFrom(systemProcessTable()) });
    const burst = (bus: Bus, from: string, to: string) =>
      Promise.all(Array.from({ length: 8 }, async (_, sender) => {
        for (let index = 0; index < 60; index++) await bus.mail.send({ from, to, body: `burst ${from} ${sender} ${index}` });
      }));
    await Promise.all([burst(ctx.bus, 'repo-a/claude', 'repo-b/claude'), burst(otherBus, 'repo-b/claude', 'repo-a/claude')]);
    const messages = ctx.count('SELECT COUNT(*) AS n FROM messages');
    assert.equal(messages, 960);
    const deadline = Date.now() + 20_000;
    while (ctx.count(`SELECT COUNT(*) AS n FROM message_search WHERE tsv @@ '''/ parties'''::tsquery`) < messages) {
      assert.ok(Date.now() < deadline, 'the background indexing caught up');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.equal(ctx.count('SELECT COUNT(*) AS n FROM message_search'), messages, 'each message once');
    // A round after the last that indexed anything moves the mark past it.
    while (ctx.count("SELECT position AS n FROM search_index WHERE name = 'parties'") < ctx.count('SELECT MAX(seq) AS n FROM messages')) {
      assert.ok(Date.now() < deadline, 'the mark moved past the last message');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await otherBus.mail.send({ from: 'repo-b/claude', to: 'repo-a/claude', body: 'the last one, then close' });
    await otherBus.close();
    assert.equal((await ctx.bus.mail.search({ query: 'burst', reader: null, limit: 500 })).length, 500);
    assert.equal((await ctx.bus.mail.search({ query: 'last', reader: 'repo-a/claude' })).length, 1);
  } finally {
    await other.close();
    await ctx.close();
  }
});

/** A stored copy as the search rule reads it. */
interface StoredCopy {
  position: number;
  message_id: string;
  from_agent: string;
  to_agent: string;
  addressed_to: string | null;
  to_group: string | null;
  thread_id: string;
  sent_at: string;
}

/** QUERIES.md's "Searching mail", in plain code: whether a search with `filter` may return `copy`. */
function passes(copy: StoredCopy, filter: SearchFilter): boolean {
  const under = (name: string, prefix: string): boolean => name.startsWith(prefix);
  const { visibleTo } = filter;
  if (visibleTo !== null) {
    const own = copy.from_agent === visibleTo.name || copy.to_agent === visibleTo.name;
    const repo = visibleTo.repo;
    const repos =
      repo !== null &&
      (copy.to_group === repo || copy.from_agent === repo || copy.to_agent === repo || under(copy.from_agent, `${repo}/`) || under(copy.to_agent, `${repo}/`));
    if (!own && !repos) return false;
  }
  if (filter.from !== null && !(copy.from_agent === filter.from || under(copy.from_agent, `${filter.from}/`) || under(copy.from_agent, `${filter.from}-`))) return false;
  if (filter.to !== null && !(copy.to_agent === filter.to || copy.addressed_to === filter.to || copy.to_group === filter.to)) return false;
  if (filter.thread !== null && !under(copy.thread_id, filter.thread)) return false;
  if (filter.since !== null && copy.sent_at < filter.since) return false;
  if (filter.before !== null && copy.position >= filter.before) return false;
  return true;
}

conformance('search: who sees what and every filter, as QUERIES.md says, copy by copy', async (ctx) => {
  await ctx.register(['repo-a/claude', 'repo-a/claude-1', 'repo-a/codex', 'repo-b/claude', 'legacy/bot', 'human', 'ops', 'ops/claude']);
  // Filed under repo-a by its repo column alone (an older roster's row): reached by mail to repo-a.
  ctx.paths.sql("UPDATE agents SET group_name = 'repo-a' WHERE name = 'legacy/bot'");
  await sendMail(ctx, 'human', 'repo-a/claude', 'zebra one');
  // The first mail is two days older than the rest.
  ctx.clock.advance(2 * DAY_MS);
  await sendMail(ctx, 'repo-a/claude-1', 'human', 'zebra two');
  const toRepo = await ctx.bus.mail.send({ from: 'human', to: 'repo-a', body: 'zebra three' });
  await sendMail(ctx, 'repo-b/claude', 'ops/claude', 'zebra four');
  const fromOps = await sendMail(ctx, 'ops', 'repo-b/claude', 'zebra five');
  await ctx.bus.mail.send({ from: 'human', to: '*', body: 'zebra six' });
  // Rows an older agent-bus wrote: to the bare repo name, and from it.
  for (const [id, from, to] of [['old-to', 'repo-b/claude', 'repo-a'], ['old-from', 'repo-a', 'human']]) {
    ctx.paths.sql(`INSERT INTO messages (message_id, from_agent, to_agent, body, thread_id, sent_at) VALUES ('${id}', '${from}', '${to}', 'zebra old', 't-${id}', '${stampOf(ctx.clock)}')`);
  }
  const position = ctx.engine === 'sqlite' ? 'rowid' : 'seq';
  const copies = ctx.paths.rows<StoredCopy>(`SELECT ${position} AS position, message_id, from_agent, to_agent, addressed_to, to_group, thread_id, sent_at FROM messages`).map((copy) => ({ ...copy, position: Number(copy.position) }));
  const thread = copies.find((copy) => copy.message_id === toRepo.message_ids[0])?.thread_id as string;
  const middle = [...copies].sort((a, b) => a.position - b.position)[Math.floor(copies.length / 2)]?.position as number;
  const none: SearchFilter = { visibleTo: null, from: null, to: null, thread: null, since: null, before: null };
  const filters: SearchFilter[] = [
    none,
    ...[
      { name: 'human', repo: null },
      { name: 'ops', repo: null },
      { name: 'repo-a/codex', repo: 'repo-a' },
      { name: 'repo-a/claude-1', repo: 'repo-a' },
      { name: 'repo-b/claude', repo: 'repo-b' },
      { name: 'ops/claude', repo: 'ops' },
    ].map((visibleTo) => ({ ...none, visibleTo })),
    ...['repo-a', 'repo-a/claude', 'human', 'ops'].map((from) => ({ ...none, from })),
    ...['repo-a', 'repo-b', '*', 'human', 'repo-a/codex'].map((to) => ({ ...none, to })),
    { ...none, thread: thread.slice(0, 8) },
    { ...none, since: formatStamp(ctx.clock.nowMicros() - 86_400_000_000) },
    { ...none, before: middle },
    { ...none, visibleTo: { name: 'repo-a/codex', repo: 'repo-a' }, from: 'human', to: 'repo-a' },
    { ...none, visibleTo: { name: 'human', repo: null }, before: middle, since: formatStamp(ctx.clock.nowMicros() - 86_400_000_000) },
  ];
  for (const filter of filters) {
    const got = (await ctx.store.searchMessages(parseSearchQuery('zebra'), filter, 1000)).map((copy) => copy.messageId);
    const want = copies.filter((copy) => passes(copy, filter)).sort((a, b) => b.position - a.position).map((copy) => copy.message_id);
    assert.ok(want.length > 0, `${JSON.stringify(filter)} finds something`);
    assert.deepEqual(got, want, JSON.stringify(filter));
  }
  // Spelled out: a person sees its own mail, not that of the repo that has its name.
  const ops = await ctx.store.searchMessages(parseSearchQuery('zebra'), { ...none, visibleTo: { name: 'ops', repo: null } }, 100);
  assert.deepEqual(ops.map((copy) => [copy.fromAgent, copy.toAgent]), [['human', 'ops'], ['ops', 'repo-b/claude']]);
  assert.equal(fromOps, ops[1]?.messageId);
  // A copy filed under the repo by its repo column alone is the repo's to see.
  const codex = await ctx.store.searchMessages(parseSearchQuery('zebra'), { ...none, visibleTo: { name: 'repo-a/codex', repo: 'repo-a' } }, 100);
  assert.ok(codex.some((copy) => copy.toAgent === 'legacy/bot' && copy.addressedTo === 'repo-a'));
});
