/**
 * The follow port, on both engines: messages in the order they were stored.
 */
import assert from 'node:assert/strict';
import { openStore } from '../../../src/store/open.js';
import { conformance } from './harness.js';

conformance('messages by position: each stored takes a greater one; past a position, and at positions asked for, in order', async (ctx) => {
  await ctx.register(['shop/claude', 'shop/codex']);
  const store = openStore(ctx.paths.db, { connectTimeoutMs: 5000 });
  try {
    await ctx.bus.mail.send({ from: 'shop/claude', to: 'shop/codex', body: 'one' });
    const afterOne = await store.lastPosition();
    assert.ok(afterOne > 0);
    await ctx.bus.mail.send({ from: 'shop/codex', to: 'shop/claude', body: 'two' });
    await ctx.bus.mail.send({ from: 'shop/claude', to: 'shop/codex', body: 'three' });
    const all = await store.messagesByPosition(0, [], 100);
    assert.deepEqual(all.map((row) => row.body), ['one', 'two', 'three']);
    assert.ok(all.every((row, index) => index === 0 || row.position > (all[index - 1]?.position ?? 0)), 'positions increase');
    assert.equal(all[0]?.position, afterOne);
    assert.equal(await store.lastPosition(), all[2]?.position);
    const [one, two, three] = all.map((row) => row.position) as [number, number, number];
    assert.deepEqual((await store.messagesByPosition(two, [], 100)).map((row) => row.body), ['three']);
    assert.deepEqual((await store.messagesByPosition(three, [one], 100)).map((row) => row.body), ['one'], 'a position asked for again');
    assert.deepEqual((await store.messagesByPosition(0, [], 2)).map((row) => row.body), ['one', 'two'], 'at most the limit');
    assert.deepEqual(await store.messagesByPosition(three, [], 100), []);
  } finally {
    await store.close();
  }
});
