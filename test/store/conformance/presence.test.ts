/**
 * The presence port, on both engines: a state noted once stays with its first time until it moves,
 * and the roster reads it beside each name, with a session's own evidence (ended, gone) first.
 */
import assert from 'node:assert/strict';
import { conformance, endedServers, fakeLiveness, startSession, type CoreBus } from './harness.js';

const state = async (ctx: CoreBus, name: string): Promise<[string, string | null] | undefined> => {
  const row = (await ctx.bus.roster.agents()).find((agent) => agent.name === name);
  return row === undefined ? undefined : [row.state, row.state_since];
};

conformance('presence: working and idle as the hooks note them, each since its first note; unknown before any', async (ctx) => {
  await ctx.register(['shop/claude']);
  assert.deepEqual(await state(ctx, 'shop/claude'), ['unknown', null]);
  const first = { name: 'shop/claude', state: 'working' as const, since: '2026-12-04T10:00:00.000000Z' };
  assert.equal(await ctx.store.notePresence(first), true);
  assert.equal(await ctx.store.notePresence({ ...first, since: '2026-12-04T10:05:00.000000Z' }), false, 'the same state: nothing written');
  assert.deepEqual(await state(ctx, 'shop/claude'), ['working', '2026-12-04T10:00:00.000000Z']);
  assert.equal(await ctx.store.notePresence({ ...first, state: 'idle', since: '2026-12-04T10:07:00.000000Z' }), true);
  assert.deepEqual(await state(ctx, 'shop/claude'), ['idle', '2026-12-04T10:07:00.000000Z']);
  await ctx.bus.presence.note('shop/claude', 'working');
  const [now, since] = (await state(ctx, 'shop/claude')) ?? [];
  assert.equal(now, 'working');
  assert.ok((since ?? '') > '2026-12-04T10:07:00.000000Z');
  assert.deepEqual(await ctx.store.presence(), [{ name: 'shop/claude', state: 'working', since }]);
});


conformance(
  "presence: a session whose process is gone is gone, whatever its hooks last said",
  async (ctx) => {
    const started = await startSession(ctx, 'shop/claude');
    const pid = started.pid;
    await ctx.bus.presence.note(started.name, 'working');
    assert.equal((await state(ctx, started.name))?.[0], 'working');
    endedServers.add(pid);
    assert.equal((await state(ctx, started.name))?.[0], 'gone');
  },
  {},
  fakeLiveness,
);

conformance('presence: one name read alone, the names waiting on a person, a session started idle only where nothing or an end was said, and a tool call ending a wait', async (ctx) => {
  await ctx.register(['shop/claude', 'shop/codex', 'lab/claude']);
  assert.equal(await ctx.store.presenceOf('shop/claude'), null);
  assert.deepEqual(await ctx.store.namesIn('waiting'), []);
  await ctx.bus.presence.started('shop/claude');
  assert.equal((await ctx.store.presenceOf('shop/claude'))?.state, 'idle', 'nothing said: a new session waits for its prompt');
  await ctx.bus.presence.note('shop/claude', 'working');
  await ctx.bus.presence.started('shop/claude');
  assert.equal((await ctx.store.presenceOf('shop/claude'))?.state, 'working', 'a session started again mid-turn stays working');
  await ctx.bus.presence.note('shop/claude', 'waiting');
  await ctx.bus.presence.note('lab/claude', 'waiting');
  await ctx.bus.presence.note('shop/codex', 'idle');
  assert.deepEqual((await ctx.store.namesIn('waiting')).sort(), ['lab/claude', 'shop/claude']);
  assert.deepEqual(await state(ctx, 'shop/claude').then((row) => row?.[0]), 'waiting');
  // A tool call: the reader is asked only when someone waits, and only its own wait ends.
  let asked = 0;
  await ctx.bus.presence.toolCalled(async () => {
    asked++;
    return 'shop/claude';
  });
  assert.equal(asked, 1);
  assert.deepEqual([(await ctx.store.presenceOf('shop/claude'))?.state, (await ctx.store.presenceOf('lab/claude'))?.state], ['working', 'waiting']);
  await ctx.bus.presence.note('lab/claude', 'ended');
  assert.equal((await state(ctx, 'lab/claude'))?.[0], 'ended');
  await ctx.bus.presence.started('lab/claude');
  assert.equal((await ctx.store.presenceOf('lab/claude'))?.state, 'idle', 'the next session of an ended name starts idle');
  await ctx.bus.presence.toolCalled(async () => {
    asked++;
    return 'shop/codex';
  });
  assert.equal(asked, 1, 'no one waits: the reader is never asked');
});
