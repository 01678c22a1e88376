/**
 * The notices port, on both engines: publish, the channel cap, what is due at each moment, rotation,
 * receipts, acknowledgement.
 */
import assert from 'node:assert/strict';
import { readAudit } from '../../helpers/bus-env.js';
import { noticeCaps } from '../../../src/core/notices.js';
import { ROTATION_MS } from '../../../src/core/notice-ops.js';
import { conformance, type CoreBus } from './harness.js';

const renderPlain = (notice: { noticeId: string; body: string }, maxBodyBytes?: number): string => `- ${notice.noticeId}: ${maxBodyBytes === undefined ? notice.body : notice.body.slice(0, maxBodyBytes)}`;

async function due(ctx: CoreBus, moment: 'session-start' | 'prompt' | 'pre-tool', session: string, channels: string[], env: NodeJS.ProcessEnv = {}): Promise<string[]> {
  const selection = await ctx.bus.notices.deliver({
    moment,
    session,
    subscriptions: { channels, all: channels.includes('*') },
    caps: noticeCaps(env),
    usedBytes: 0,
    render: renderPlain,
  });
  return selection.shown.map((notice) => notice.body);
}

conformance('notices: due by severity and moment, info once per session, a receipt per session, acknowledge silences', async (ctx) => {
  await ctx.bus.notices.publish({ channel: 'ops', message: 'ops critical', severity: 'critical' });
  await ctx.bus.notices.publish({ channel: 'ops', message: 'ops alert', severity: 'alert' });
  const info = await ctx.bus.notices.publish({ channel: 'ops', message: 'ops info' });
  await ctx.bus.notices.publish({ message: 'global info' });
  await ctx.bus.notices.publish({ channel: 'other', message: 'other critical', severity: 'critical' });
  assert.deepEqual(await due(ctx, 'prompt', 's-1', ['ops']), ['ops critical', 'ops alert', 'ops info', 'global info'], 'severity, then priority, then age');
  assert.deepEqual(await due(ctx, 'prompt', 's-1', ['ops']), ['ops critical', 'ops alert'], 'info once per session');
  assert.deepEqual(await due(ctx, 'pre-tool', 's-1', ['ops']), ['ops critical'], 'before a tool call: critical only');
  assert.deepEqual(await due(ctx, 'prompt', 's-2', ['*']), ['ops critical', 'other critical', 'ops alert', 'ops info', 'global info'], 'another session has its own receipts');
  const listed = await ctx.bus.notices.list({ channel: 'ops' });
  assert.equal(listed.find((notice) => notice.notice_id === info.notice_id)?.delivered_to, 2, 'shown to two sessions');
  await ctx.bus.notices.acknowledge(listed.find((notice) => notice.message === 'ops critical')?.notice_id ?? '', 's-1');
  assert.deepEqual(await due(ctx, 'pre-tool', 's-1', ['ops']), [], 'acknowledged: silent for that session');
  assert.deepEqual(await due(ctx, 'pre-tool', 's-2', ['ops']), ['ops critical'], 'and only for that session');
  // Whether anything is due, asked without delivering: the same answer as a delivery's.
  const anyDue = (moment: 'prompt' | 'pre-tool', session: string, channels: string[]) => ctx.bus.notices.anyDue({ moment, session, subscriptions: { channels, all: channels.includes('*') } });
  assert.equal(await anyDue('pre-tool', 's-1', ['ops']), false);
  assert.equal(await anyDue('pre-tool', 's-2', ['ops']), true);
  assert.equal(await anyDue('prompt', 's-3', []), true, 'the global info, never shown to s-3');
  assert.equal(await anyDue('pre-tool', 's-3', []), false, 'no global critical');
  assert.deepEqual(await due(ctx, 'pre-tool', 's-2', ['ops']), ['ops critical'], 'asking delivered nothing');
  const counts = await ctx.bus.notices.channels();
  assert.deepEqual(counts.map((row) => [row.channel, row.total, row.critical, row.alert, row.info]), [[null, 1, 0, 0, 1], ['ops', 3, 1, 1, 1], ['other', 1, 1, 0, 0]]);
});

conformance(
  'notices: the channel cap evicts the lowest first and refuses a publish that would itself be evicted; expired notices go at the next publish',
  async (ctx) => {
    const low = await ctx.bus.notices.publish({ channel: 'c', message: 'low info', priority: 1 });
    const high = await ctx.bus.notices.publish({ channel: 'c', message: 'high info', priority: 9 });
    const alert = await ctx.bus.notices.publish({ channel: 'c', message: 'an alert', severity: 'alert' });
    assert.deepEqual(alert.evicted, [], 'at the cap, not over it');
    assert.deepEqual((await ctx.bus.notices.publish({ channel: 'c', message: 'critical one', severity: 'critical' })).evicted, [low.notice_id], 'the lowest severity, lowest priority goes');
    assert.deepEqual((await ctx.bus.notices.publish({ channel: 'c', message: 'critical two', severity: 'critical' })).evicted, [high.notice_id]);
    assert.deepEqual((await ctx.bus.notices.publish({ channel: 'c', message: 'critical three', severity: 'critical' })).evicted, [alert.notice_id]);
    await assert.rejects(ctx.bus.notices.publish({ channel: 'c', message: 'chatter' }), /outrank this info one; nothing was published/);
    assert.deepEqual((await ctx.bus.notices.list({ channel: 'c' })).map((notice) => notice.message), ['critical one', 'critical two', 'critical three']);
    const expiring = await ctx.bus.notices.publish({ channel: 'd', message: 'soon gone', ttl: '1m' });
    ctx.clock.advance(61_000);
    await ctx.bus.notices.publish({ channel: 'd', message: 'fresh' });
    assert.equal(ctx.count(`SELECT COUNT(*) AS n FROM notices WHERE notice_id = '${expiring.notice_id}'`), 0, 'removed at the next publish');
    assert.ok(readAudit(ctx.paths.audit).some((row) => row.op === 'notice' && row.notice_event === 'expire'));
  },
  { AGENT_BUS_CHANNEL_MAX_NOTICES: '3' },
);

conformance(
  'notices: more critical ones than a turn holds take turns, so each is shown within a few turns',
  async (ctx) => {
    for (let index = 0; index < 7; index++) await ctx.bus.notices.publish({ channel: 'ops', message: `critical ${index}`, severity: 'critical' });
    const seen = new Set<string>();
    // Turns come from the clock: each look is a quarter of a rotation later.
    for (let look = 0; seen.size < 7 && look < 40; look++) {
      for (const body of await due(ctx, 'pre-tool', 's-1', ['ops'], { AGENT_BUS_NOTICES_PER_TURN: '3' })) seen.add(body);
      ctx.clock.advance(ROTATION_MS / 4);
    }
    assert.equal(seen.size, 7, `every critical notice was shown in turn: ${[...seen].join(', ')}`);
  },
);
