/**
 * The brain port, on both engines: a channel's reconcile, its state, the markers written back.
 */
import assert from 'node:assert/strict';
import { nowMicros, nowStamp } from '../../../src/model/clock.js';
import { buildNotice } from '../../../src/core/notice-ops.js';
import { conformance } from './harness.js';

const brainState = (channel: string, entries: number) => ({
  channel,
  sourceKind: 'file',
  location: '/feed',
  contentHash: `hash-${entries}`,
  entryCount: entries,
  cutByCap: 0,
  warnings: '[]',
  lastFetchAt: nowStamp(),
  lastOkAt: nowStamp(),
  lastError: null,
});

conformance('brain reconcile: an unchanged entry keeps its id, a new priority reorders it in place, a missing one goes, a new one arrives; the state is written', async (ctx) => {
  const entry = (message: string, priority = 5) => buildNotice({ channel: 'brain', message, priority, source: 'brain-adapter' }, nowMicros());
  const first = await ctx.bus.notices.reconcile('brain', [entry('alpha'), entry('beta')], nowStamp(), brainState('brain', 2));
  assert.equal(first.added.length, 2);
  const alpha = first.added.find((notice) => notice.body === 'alpha');
  const second = await ctx.bus.notices.reconcile('brain', [entry('alpha', 9), entry('gamma')], nowStamp(), brainState('brain', 2));
  assert.deepEqual(second.kept.map((notice) => [notice.noticeId, notice.priority]), [[alpha?.noticeId, 9]]);
  assert.deepEqual(second.added.map((notice) => notice.body), ['gamma']);
  assert.deepEqual(second.removed.map((notice) => notice.body), ['beta']);
  const listed = await ctx.bus.notices.list({ channel: 'brain' });
  assert.deepEqual(listed.map((notice) => [notice.message, notice.priority]), [['alpha', 9], ['gamma', 5]]);
  assert.equal((await ctx.bus.brain.state('brain'))?.contentHash, 'hash-2');
  assert.equal(await ctx.bus.brain.recordMarker('m-1', 's'), true);
  assert.equal(await ctx.bus.brain.recordMarker('m-1', 's'), false, 'a marker is taken once');
});
