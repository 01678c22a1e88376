/**
 * The receipts port, on both engines: each copy sent, then delivered, then read, each step with its
 * time and way; a send named by any of its ids.
 */
import assert from 'node:assert/strict';
import { decideTake } from '../../../src/core/inbox.js';
import { nowStamp } from '../../../src/model/clock.js';
import { shortId } from '../../../src/model/short-id.js';
import { readAudit } from '../../helpers/bus-env.js';
import { openStore } from '../../../src/store/open.js';
import { conformance } from './harness.js';

conformance('receipts: a read records read and delivered with its way; a model\'s peek records delivered only, once', async (ctx) => {
  await ctx.register(['repo-a/claude', 'human']);
  const id = (await ctx.bus.mail.send({ from: 'human', to: 'repo-a/claude', body: 'look at this' })).message_id as string;
  const copy = async () => (await ctx.bus.receipts.status(id, null)).copies[0];
  assert.deepEqual(await copy(), { message_id: id, to: 'repo-a/claude', state: 'sent', claimed_by: null, delivered_at: null, delivered_via: null, read_at: null, read_via: null });
  // A look nobody is shown (the watcher's count) records nothing.
  await ctx.bus.inbox.read({ reader: 'repo-a/claude', markRead: false, via: null });
  assert.equal((await copy())?.state, 'sent');
  const [peeked] = await ctx.bus.inbox.read({ reader: 'repo-a/claude', markRead: false, via: 'read_inbox' });
  assert.deepEqual([peeked?.delivered_via, peeked?.read_at], ['read_inbox', null], 'the peek answers with the receipt it made');
  const delivered = await copy();
  assert.deepEqual([delivered?.state, delivered?.delivered_via, delivered?.read_at], ['delivered', 'read_inbox', null]);
  await ctx.bus.inbox.read({ reader: 'repo-a/claude', markRead: false, via: 'read_inbox' });
  assert.equal((await copy())?.delivered_at, delivered?.delivered_at, 'a second showing keeps the first delivery');
  const [read] = await ctx.bus.inbox.read({ reader: 'repo-a/claude', via: 'inbox' });
  assert.deepEqual([read?.read_via, read?.delivered_via, read?.delivered_at], ['inbox', 'read_inbox', delivered?.delivered_at]);
  const after = await copy();
  assert.deepEqual([after?.state, after?.read_via, after?.delivered_via, after?.delivered_at], ['read', 'inbox', 'read_inbox', delivered?.delivered_at]);
  const rows = readAudit(ctx.paths.audit).filter((row) => row.message_id === id).map((row) => `${String(row.op)}:${String(row.via ?? '')}`);
  assert.deepEqual(rows, ['send:', 'deliver:read_inbox', 'read:inbox']);
  assert.deepEqual(ctx.paths.rows(`SELECT delivered_via, read_via FROM messages WHERE message_id = '${id}'`), [{ delivered_via: 'read_inbox', read_via: 'inbox' }], 'stored, not only answered');
});

conformance('receipts: a hook records its way only once it has shown the mail; one that fails to show records nothing', async (ctx) => {
  await ctx.register(['repo-a/claude', 'human']);
  const id = (await ctx.bus.mail.send({ from: 'human', to: 'repo-a/claude', body: 'stop and read' })).message_id as string;
  await assert.rejects(
    ctx.bus.inbox.deliver({ reader: 'repo-a/claude', via: 'hook-stop' }, async (messages) => {
      assert.equal(messages.length, 1);
      assert.equal((await ctx.bus.receipts.status(id, null)).state, 'sent', 'taken for showing is not delivered yet');
      throw new Error('the hook died before printing');
    }),
    /died/,
  );
  assert.equal((await ctx.bus.receipts.status(id, null)).state, 'sent');
  const shown = await ctx.bus.inbox.deliver({ reader: 'repo-a/claude', via: 'hook-stop' }, () => undefined);
  assert.deepEqual([shown[0]?.delivered_via, shown[0]?.read_via], ['hook-stop', 'hook-stop']);
  const [copy] = (await ctx.bus.receipts.status(id, null)).copies;
  assert.deepEqual([copy?.state, copy?.delivered_via, copy?.read_via, copy?.delivered_at === copy?.read_at], ['read', 'hook-stop', 'hook-stop', true]);
});

conformance('receipts: a fan-out is one send, named by any copy, its fan-out id or the start of one; its state is the least advanced copy', async (ctx) => {
  await ctx.register(['repo-a/claude', 'repo-a/codex', 'repo-b/claude', 'human']);
  const sent = await ctx.bus.mail.send({ from: 'human', to: 'repo-a', body: 'release at five' });
  const fanout = sent.fanout_id as string;
  assert.ok(fanout);
  const byCopy = await ctx.bus.receipts.status(sent.message_ids[1] as string, null);
  for (const id of [sent.message_ids[0] as string, fanout, fanout.slice(0, 8)]) assert.deepEqual(await ctx.bus.receipts.status(id, null), byCopy, id);
  assert.deepEqual([byCopy.fanout_id, byCopy.to, byCopy.kind, byCopy.recipients, byCopy.state], [fanout, 'repo-a', 'group', 2, 'sent']);
  assert.deepEqual(byCopy.copies.map((copy) => copy.to), ['repo-a/claude', 'repo-a/codex']);
  await ctx.bus.inbox.deliver({ reader: 'repo-a/claude', via: 'hook-user-prompt' }, () => undefined);
  let status = await ctx.bus.receipts.status(fanout, null);
  assert.deepEqual([status.state, status.delivered, status.read], ['sent', 1, 1], 'one copy read: the send is not delivered until both are');
  assert.equal(status.copies[0]?.claimed_by, 'repo-a/claude');
  // The dashboard draws the thread for repo-a/codex's person: delivered, not read.
  const thread = await ctx.bus.overview.threadView(sent.thread_id as string, { reader: 'repo-a/codex', via: 'web' });
  assert.equal(thread.sends[0]?.copies.find((copy) => copy.to === 'repo-a/codex')?.deliveredVia, 'web');
  status = await ctx.bus.receipts.status(fanout, null);
  assert.deepEqual([status.state, status.delivered, status.read, status.copies[1]?.delivered_via], ['delivered', 2, 1, 'web']);
  await ctx.bus.inbox.read({ reader: 'repo-a/codex', via: 'read_inbox' });
  status = await ctx.bus.receipts.status(fanout, null);
  assert.deepEqual([status.state, status.read, status.copies[1]?.read_via, status.copies[1]?.delivered_via], ['read', 2, 'read_inbox', 'web']);
  // Who may ask: the sender and the recipients (a session through its client address); nobody else learns it exists.
  assert.equal((await ctx.bus.receipts.status(fanout, 'human')).recipients, 2);
  assert.equal((await ctx.bus.receipts.status(fanout, 'repo-a/codex')).recipients, 2);
  assert.equal((await ctx.bus.receipts.status(fanout, 'repo-a/codex-2')).recipients, 2, 'a session of a recipient client address');
  await assert.rejects(ctx.bus.receipts.status(fanout, 'repo-b/claude'), (error: Error) => error.name === 'NoSuchMessageError' && /that 'repo-b\/claude' sent or received/.test(error.message));
  await assert.rejects(ctx.bus.receipts.status(fanout.slice(0, 8), 'repo-b/claude'), /no message/, 'not by a prefix either');
  await assert.rejects(ctx.bus.receipts.status('no-such-id', null), (error: Error) => error.name === 'NoSuchMessageError');
  // Two sends whose ids start alike: the start is not enough, and the error names them.
  const one = (await ctx.bus.mail.send({ from: 'human', to: 'repo-b/claude', body: 'first' })).message_id as string;
  const two = (await ctx.bus.mail.send({ from: 'human', to: 'repo-b/claude', body: 'second' })).message_id as string;
  let shared = 0;
  while (one[shared] === two[shared]) shared++;
  assert.ok(shared >= 4, 'time-ordered ids made together share their start');
  await assert.rejects(
    ctx.bus.receipts.status(one.slice(0, shared), null),
    (error: Error) => error.name === 'AmbiguousIdError' && (error as Error & { exitCode: number }).exitCode === 2 && error.message.includes(shortId(one)) && error.message.includes(shortId(two)),
  );
  assert.equal((await ctx.bus.receipts.status(one.slice(0, 30), null)).message_id, one, 'enough of it names one');
  // The short forms as listings show them, and starts of them: a copy's (its random tail), a fan-out's (its head, dashes left out).
  for (const given of [shortId(one), shortId(one).slice(0, 5), one.replace(/-/g, '').slice(0, 28)]) assert.equal((await ctx.bus.receipts.status(given, null)).message_id, one, given);
  assert.equal((await ctx.bus.receipts.status(shortId(fanout), null)).fanout_id, fanout, 'a fan-out by its short id');
  assert.equal((await ctx.bus.receipts.status(shortId(sent.message_ids[1] as string), null)).fanout_id, fanout, 'a copy of a fan-out names the whole send');
});

conformance('receipts: a read that settles a copy at the client address records it with the same way', async (ctx) => {
  await ctx.register(['repo-a/claude', 'repo-a/claude-1', 'human']);
  // An older sender addressed both the session and its client address: reading one settles the other.
  for (const [id, to] of [['both-1', 'repo-a/claude'], ['both-2', 'repo-a/claude-1']]) {
    ctx.paths.sql(
      `INSERT INTO messages (message_id, from_agent, to_agent, body, thread_id, sent_at, addressed_to, fanout_id, to_group)
       VALUES ('${id}', 'human', '${to}', 'to both', 't-both', '${nowStamp()}', 'repo-a', 'fan-both', 'repo-a')`,
    );
  }
  await ctx.bus.inbox.read({ reader: 'repo-a/claude-1', via: 'read_inbox' });
  const status = await ctx.bus.receipts.status('fan-both', null);
  assert.deepEqual(status.copies.map((copy) => [copy.to, copy.state, copy.read_via]), [['repo-a/claude', 'read', 'read_inbox'], ['repo-a/claude-1', 'read', 'read_inbox']]);
});

conformance('receipts: a sender waiting hears each move another process makes, and gives up at its timeout', async (ctx) => {
  await ctx.register(['repo-a/claude', 'human']);
  const id = (await ctx.bus.mail.send({ from: 'human', to: 'repo-a/claude', body: 'wait for me' })).message_id as string;
  const timedOut = await ctx.bus.receipts.await(id, null, 'delivered', 300);
  assert.deepEqual([timedOut.reached, timedOut.status.state], [false, 'sent']);
  // Another process (a store of its own on the same database) shows the mail, then reads it.
  const other = openStore(ctx.paths.db, { connectTimeoutMs: 5000 });
  try {
    const moves: string[] = [];
    const waiting = ctx.bus.receipts.await(id, 'human', 'read', 30_000, (status) => moves.push(status.state));
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.deepEqual(await other.recordDelivered([id], nowStamp(), 'web'), [id]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const reader = { name: 'repo-a/claude', repo: 'repo-a', clientAddress: 'repo-a/claude', isSession: false };
    await other.readInbox({ query: { reader, limit: 10, actionableOnly: false, now: nowStamp() }, decide: (rows, copies) => decideTake(rows, copies, reader), via: 'hook-user-prompt' });
    const outcome = await waiting;
    assert.deepEqual([outcome.reached, outcome.status.state, outcome.status.copies[0]?.read_via], [true, 'read', 'hook-user-prompt']);
    assert.deepEqual(moves, ['delivered', 'read'], 'each move heard as it happened');
    assert.deepEqual(await other.recordDelivered([id], nowStamp(), 'web'), [], 'delivered already: nothing marked');
  } finally {
    await other.close();
  }
});
