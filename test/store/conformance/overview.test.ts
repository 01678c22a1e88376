/**
 * The overview port (the dashboard's reads), on both engines.
 */
import assert from 'node:assert/strict';
import { formatStamp } from '../../../src/model/clock.js';
import { conformance } from './harness.js';

conformance('the dashboard pages threads newest first, a fan-out counted as one send', async (ctx) => {
  await ctx.register(['repo-a/claude', 'repo-a/codex', 'human']);
  const first = await ctx.bus.mail.send({ from: 'human', to: 'repo-a/claude', body: 'first thread' });
  const second = await ctx.bus.mail.send({ from: 'human', to: 'repo-a', body: 'second thread, to the repo' });
  await ctx.bus.mail.send({ from: 'repo-a/claude', to: 'human', body: 'reply in the first', threadId: first.thread_id });
  await ctx.bus.inbox.read({ reader: 'repo-a/claude', via: 'read_inbox' });
  const page = await ctx.bus.overview.threadPage(null, 10);
  assert.deepEqual(page.threads.map((thread) => thread.threadId), [first.thread_id, second.thread_id]);
  assert.equal(page.next, null);
  const [one, two] = page.threads;
  assert.deepEqual([one?.sends, one?.copies, one?.unread, one?.last.from, one?.last.to, one?.last.preview], [2, 2, 1, 'repo-a/claude', 'human', 'reply in the first']);
  // The repo-wide send reached both clients (two copies, one send); claude's read claimed it, and codex's copy stays unread.
  assert.deepEqual([two?.sends, two?.copies, two?.unread, two?.last.to], [1, 2, 1, 'repo-a']);
  const firstPage = await ctx.bus.overview.threadPage(null, 1);
  assert.deepEqual(firstPage.threads.map((thread) => thread.threadId), [first.thread_id]);
  assert.notEqual(firstPage.next, null);
  const secondPage = await ctx.bus.overview.threadPage(firstPage.next, 1);
  assert.deepEqual(secondPage.threads.map((thread) => thread.threadId), [second.thread_id]);
  const { sends, truncated } = await ctx.bus.overview.threadView(second.thread_id as string);
  assert.equal(truncated, false);
  assert.equal(sends.length, 1);
  assert.deepEqual([sends[0]?.claimedBy, sends[0]?.copyCount, sends[0]?.readCount], ['repo-a/claude', 2, 1]);
  assert.deepEqual(sends[0]?.copies.map((copy) => [copy.to, copy.claimedBy, copy.readAt !== null]).sort(), [
    ['repo-a/claude', 'repo-a/claude', true],
    ['repo-a/codex', 'repo-a/claude', false],
  ]);
  // A thread with newer mail is on the first page only: the second page skips it though older mail of it is there.
  const older = await ctx.bus.overview.threadPage(page.threads.find((thread) => thread.threadId === first.thread_id)?.lastPosition ?? null, 10);
  assert.deepEqual(older.threads.map((thread) => thread.threadId), [second.thread_id]);
  assert.deepEqual((await ctx.bus.overview.threadView(first.thread_id as string)).sends.map((send) => [send.from, send.body, send.copies[0]?.readAt !== null]), [
    ['human', 'first thread', true],
    ['repo-a/claude', 'reply in the first', false],
  ]);
});

const HOUR_MS = 3_600_000;

conformance('the dashboard counts the last day of mail by hour and by sender and address', async (ctx) => {
  await ctx.register(['repo-a/claude', 'repo-a/codex', 'human']);
  await ctx.bus.mail.send({ from: 'human', to: 'repo-a/claude', body: 'two days old' });
  ctx.clock.advance(45 * HOUR_MS);
  await ctx.bus.mail.send({ from: 'human', to: 'repo-a/codex', body: 'three hours old' });
  ctx.clock.advance(3 * HOUR_MS);
  await ctx.bus.mail.send({ from: 'human', to: '*', body: 'to everyone' });
  await ctx.bus.mail.send({ from: 'repo-a/claude', to: 'human', body: 'answer' });
  const micros = ctx.clock.nowMicros();
  const day = await ctx.bus.overview.mailDay();
  assert.equal(day.hours.length, 24);
  assert.equal(day.hours.reduce((sum, hour) => sum + hour.sends, 0), 3, 'the broadcast counts once, the two-day-old send not at all');
  assert.equal(day.hours.at(-1)?.hour, formatStamp(micros).slice(0, 13));
  assert.equal(day.hours.at(-1)?.sends, 2);
  assert.equal(day.hours.at(-4)?.sends, 1);
  assert.deepEqual(
    day.pairs.map((pair) => `${pair.from}>${pair.to}:${pair.sends}`).sort(),
    ['human>*:1', 'human>repo-a/codex:1', 'repo-a/claude>human:1'],
  );
});
