/**
 * The outbox, on both engines: events queued in the transaction of the send or publish that made
 * them (and only for the integrations out that want them), taken once among several processes,
 * held while an attempt runs and taken again once its lease runs out, settled as delivered (the
 * person's copy delivered by webhook), due again, or failed; retried; the worker lease held by one.
 */
import assert from 'node:assert/strict';
import { formatStamp, nowMicros } from '../../../src/model/clock.js';
import { openStore } from '../../../src/store/open.js';
import type { Store } from '../../../src/store/ports.js';
import { conformance, type CoreBus } from './harness.js';

const stamp = (offsetMs = 0): string => formatStamp(nowMicros() + offsetMs * 1000);

async function outbound(ctx: CoreBus): Promise<void> {
  await ctx.register(['shop/claude', 'shop/codex', 'human']);
  await ctx.bus.integrations.add({ name: 'people', kind: 'webhook', url: 'http://127.0.0.1:9/in', on: 'mail:human' }, 'operator');
  await ctx.bus.integrations.add({ name: 'pager', kind: 'ntfy', url: 'http://127.0.0.1:9/topic', on: 'notice:alert', channel: 'ops' }, 'operator');
  await ctx.bus.integrations.add({ name: 'results', kind: 'slack', url: 'http://127.0.0.1:9/slack', on: 'task' }, 'operator');
}

conformance('a send or a publish queues events, in its own transaction, for the integrations out that want them', async (ctx) => {
  await outbound(ctx);
  const toHuman = await ctx.bus.mail.send({ from: 'shop/claude', to: 'human', body: 'for the person' });
  await ctx.bus.mail.send({ from: 'shop/claude', to: 'shop/codex', body: 'not for a person' });
  // Mail to everyone reaches the person too: one event, for its copy.
  const everyone = await ctx.bus.mail.send({ from: 'shop/claude', to: '*', body: 'for all' });
  const humanCopy = everyone.message_ids[everyone.recipients.indexOf('human')];
  await ctx.bus.notices.publish({ channel: 'ops', message: 'db down', severity: 'alert' }, 'operator');
  await ctx.bus.notices.publish({ channel: 'ops', message: 'db slow', severity: 'info' }, 'operator');
  await ctx.bus.notices.publish({ channel: 'builds', message: 'red', severity: 'critical' }, 'operator');
  await ctx.bus.mail.send({ from: 'shop/codex', to: 'shop/claude', body: 'done: shipped', taskResult: { id: 'task-1', state: 'done' } });
  const events = (await ctx.store.outbox({ limit: 50 })).reverse();
  assert.deepEqual(
    events.map((event) => [event.integration, event.event, event.messageId, event.state, event.attempts]),
    [
      ['people', 'mail', toHuman.message_id, 'queued', 0],
      ['people', 'mail', humanCopy, 'queued', 0],
      ['pager', 'notice', null, 'queued', 0],
      ['results', 'task', null, 'queued', 0],
    ],
  );
  const notice = JSON.parse(events[2]?.payload ?? '{}') as { type: string; data: { body: string; severity: string; channel: string } };
  assert.deepEqual([notice.type, notice.data.body, notice.data.severity, notice.data.channel], ['notice', 'db down', 'alert', 'ops']);
  const task = JSON.parse(events[3]?.payload ?? '{}') as { data: { task_id: string; task_state: string; body: string } };
  assert.deepEqual([task.data.task_id, task.data.task_state, task.data.body], ['task-1', 'done', 'done: shipped']);
  // A send refused writes no event either.
  await assert.rejects(ctx.bus.mail.send({ from: 'shop/claude', to: 'nobody/here', body: 'lost' }));
  assert.equal((await ctx.store.outbox({ limit: 50 })).length, 4);
  // An integration removed takes its queued events with it.
  await ctx.bus.integrations.remove('results', 'operator');
  assert.deepEqual((await ctx.store.outboxCounts()).map((row) => [row.integration, row.queued]), [['pager', 1], ['people', 2]]);
});

conformance('a mail event is made from its message when it is taken; a prune that removes the message first makes the event before it goes', async (ctx) => {
  await outbound(ctx);
  const sent = await ctx.bus.mail.send({ from: 'shop/claude', to: 'human', body: 'for the person, then pruned' });
  // Read and a month old: the prune takes the message, before anything read the outbox.
  ctx.paths.sql(`UPDATE messages SET read_at = '2020-01-01T00:00:00.000000Z', sent_at = '2020-01-01T00:00:00.000000Z' WHERE message_id = '${sent.message_id}'`);
  const pruned = await ctx.store.prune({ mailBefore: stamp(), now: stamp(), sessionsEndedBefore: stamp(-86_400_000), dryRun: false });
  assert.equal(pruned.messages, 1);
  const [event] = await ctx.store.outbox({ limit: 5 });
  const payload = JSON.parse(event?.payload ?? '{}') as { type: string; data: { message_id: string; body: string; from: string; to: string } };
  assert.deepEqual(
    [event?.integration, event?.messageId, payload.type, payload.data.message_id, payload.data.body, payload.data.from, payload.data.to],
    ['people', sent.message_id, 'mail', sent.message_id, 'for the person, then pruned', 'shop/claude', 'human'],
  );
});

conformance('several processes claiming at once take each event once; an attempt holds it until its lease runs out', async (ctx) => {
  await outbound(ctx);
  for (let i = 0; i < 12; i++) await ctx.bus.mail.send({ from: 'shop/claude', to: 'human', body: `mail ${i}` });
  // The sends' intake made into the outbox's rows first: a claim that meets another making them skips
  // those and takes only what is rows already (the next claim takes the rest). The race here is the claims'.
  assert.equal((await ctx.store.outbox({ limit: 50 })).length, 12);
  const others: Store[] = [openStore(ctx.paths.db, { connectTimeoutMs: 5000 }), openStore(ctx.paths.db, { connectTimeoutMs: 5000 })];
  try {
    const now = stamp();
    const lease = stamp(60_000);
    const claims = await Promise.all([ctx.store, ...others, ctx.store, ...others].map((store) => store.claimOutbox(now, lease, 3)));
    const taken = claims.flat().map((event) => event.eventId);
    assert.equal(taken.length, 12, 'every event taken');
    assert.equal(new Set(taken).size, 12, 'none taken twice');
    assert.ok(claims.flat().every((event) => event.attempts === 1 && event.leaseUntil === lease));
    assert.deepEqual(await ctx.store.claimOutbox(now, lease, 50), [], 'held while the attempts run');
    assert.equal(await ctx.store.nextOutboxDue(), lease, 'due again when the leases run out');
    // The workers gone: once the leases have run out, the events are taken again, a second attempt each.
    const again = await others[0]?.claimOutbox(stamp(61_000), stamp(120_000), 50);
    assert.equal(again?.length, 12);
    assert.ok(again?.every((event) => event.attempts === 2));
    // A worker that replaced one known gone lets the attempts' leases go: taken again at once.
    assert.equal(await ctx.store.releaseAttemptLeases(), 12);
    const atOnce = await ctx.store.claimOutbox(stamp(62_000), stamp(120_000), 50);
    assert.ok(atOnce.length === 12 && atOnce.every((event) => event.attempts === 3));
  } finally {
    for (const store of others) await store.close();
  }
});

conformance('an attempt settles as due again, failed, or delivered (the copy delivered by webhook), once; a failed event is retried; delivered ones are forgotten in time', async (ctx) => {
  await outbound(ctx);
  const sent = await ctx.bus.mail.send({ from: 'shop/claude', to: 'human', body: 'settle me' });
  const [first] = await ctx.store.claimOutbox(stamp(), stamp(60_000), 10);
  assert.ok(first);
  const later = stamp(5_000);
  assert.equal(await ctx.store.finishOutbox(first.eventId, { state: 'queued', nextAt: later, status: 503, error: 'status 503' }, stamp(-60_000)), true);
  assert.deepEqual(await ctx.store.claimOutbox(stamp(), stamp(60_000), 10), [], 'not due before its backoff');
  assert.equal(await ctx.store.nextOutboxDue(), later);
  const [second] = await ctx.store.claimOutbox(stamp(6_000), stamp(66_000), 10);
  assert.equal(second?.attempts, 2);
  assert.equal((second as { lastStatus: number | null }).lastStatus, 503);
  assert.equal(await ctx.store.finishOutbox(first.eventId, { state: 'failed', at: stamp(), status: 410, error: 'gone' }, stamp(-60_000)), true);
  assert.equal(await ctx.store.finishOutbox(first.eventId, { state: 'delivered', at: stamp(), status: 200 }, stamp(-60_000)), false, 'settled once');
  assert.equal(await ctx.store.nextOutboxDue(), null);
  assert.deepEqual((await ctx.store.outbox({ state: 'failed', limit: 5 })).map((event) => [event.eventId, event.lastStatus, event.lastError]), [[first.eventId, 410, 'gone']]);
  assert.equal(await ctx.store.retryOutbox(first.eventId, stamp()), true);
  assert.equal(await ctx.store.retryOutbox('no-such-event', stamp()), false);
  const [third] = await ctx.store.claimOutbox(stamp(), stamp(60_000), 10);
  assert.equal(third?.attempts, 1, 'a retry counts afresh');
  const deliveredAt = stamp();
  assert.equal(await ctx.store.finishOutbox(first.eventId, { state: 'delivered', at: deliveredAt, status: 200 }, stamp(-60_000)), true);
  const receipt = (await ctx.store.receipts(sent.message_id as string))[0] as { deliveredAt: string | null; deliveredVia: string | null };
  assert.deepEqual([receipt.deliveredAt, receipt.deliveredVia], [deliveredAt, 'webhook']);
  assert.deepEqual((await ctx.store.outboxCounts()).map((row) => [row.integration, row.delivered, row.lastDeliveredAt]), [['people', 1, deliveredAt]]);
  // Another delivery, a week on: the first is forgotten.
  await ctx.bus.mail.send({ from: 'shop/claude', to: 'human', body: 'a week on' });
  const [fourth] = await ctx.store.claimOutbox(stamp(), stamp(60_000), 10);
  const weekOn = 8 * 86_400_000;
  assert.equal(await ctx.store.finishOutbox(fourth?.eventId as string, { state: 'delivered', at: stamp(weekOn), status: 200 }, stamp(weekOn - 7 * 86_400_000)), true);
  assert.deepEqual((await ctx.store.outbox({ limit: 5 })).map((event) => event.eventId), [fourth?.eventId]);
});

conformance("each integration is a lane: taken up to the limit each; an attempt due again holds its integration's other events until then, and a delivery lets it go", async (ctx) => {
  await outbound(ctx);
  await ctx.bus.integrations.add({ name: 'archive', kind: 'webhook', url: 'http://127.0.0.1:9/archive', on: 'mail:human' }, 'operator');
  for (let i = 0; i < 3; i++) await ctx.bus.mail.send({ from: 'shop/claude', to: 'human', body: `mail ${i}` });
  const lease = stamp(60_000);
  const first = await ctx.store.claimOutbox(stamp(), lease, 2);
  assert.deepEqual(first.map((event) => event.integration).sort(), ['archive', 'archive', 'people', 'people'], 'two of each lane');
  const [failing, delivering] = first.filter((event) => event.integration === 'people');
  assert.ok(failing && delivering);
  const backoff = stamp(5_000);
  assert.equal(await ctx.store.finishOutbox(failing.eventId, { state: 'queued', nextAt: backoff, status: null, error: 'connection refused' }, stamp(-60_000)), true);
  const whileHeld = await ctx.store.claimOutbox(stamp(1_000), lease, 10);
  assert.deepEqual(whileHeld.map((event) => event.integration), ['archive'], "the held integration's third event waits; the other lane's is taken");
  assert.equal(await ctx.store.nextOutboxDue(), backoff, 'due when the hold ends');
  assert.equal(await ctx.store.finishOutbox(delivering.eventId, { state: 'delivered', at: stamp(), status: 200 }, stamp(-60_000)), true);
  const released = await ctx.store.claimOutbox(stamp(1_000), lease, 10);
  assert.deepEqual(released.map((event) => [event.integration, event.attempts]), [['people', 1]], 'a delivery lets the integration go (the failed event still waits for its backoff)');
  // Integrations whose attempts this process has under way are left out, of what is taken and of when it is due.
  await ctx.bus.mail.send({ from: 'shop/claude', to: 'human', body: 'one more' });
  assert.notEqual(await ctx.store.nextOutboxDue(['archive', 'people']), null, 'events still in the intake are due once any integration is free');
  assert.equal((await ctx.store.outbox({ limit: 20 })).length, 8, 'the intake made into rows');
  assert.equal(await ctx.store.nextOutboxDue(['archive', 'people']), null);
  assert.deepEqual((await ctx.store.claimOutbox(stamp(1_000), lease, 10, ['people'])).map((event) => event.integration), ['archive']);
});

conformance('the worker lease is held by one process at a time, renewed by it, taken when it runs out or its holder is gone, and let go', async (ctx) => {
  const now = stamp();
  assert.equal(await ctx.store.holdWorkerLease('outbound', 'a', now, stamp(45_000)), true);
  assert.equal(await ctx.store.holdWorkerLease('outbound', 'b', now, stamp(45_000)), false, 'held by another');
  assert.equal(await ctx.store.holdWorkerLease('outbound', 'a', now, stamp(50_000)), true, 'renewed by its holder');
  assert.equal((await ctx.store.workerLease('outbound'))?.holder, 'a');
  assert.equal(await ctx.store.holdWorkerLease('outbound', 'b', now, stamp(45_000), 'a'), true, 'a holder known gone is replaced at once');
  assert.equal(await ctx.store.holdWorkerLease('outbound', 'c', stamp(46_000), stamp(90_000)), true, 'taken once it runs out');
  await ctx.store.releaseWorkerLease('outbound', 'b');
  assert.equal((await ctx.store.workerLease('outbound'))?.holder, 'c', 'only its holder lets it go');
  await ctx.store.releaseWorkerLease('outbound', 'c');
  assert.equal(await ctx.store.workerLease('outbound'), null);
});
