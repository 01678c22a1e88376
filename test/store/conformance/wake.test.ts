/**
 * The wake port and the sessions' counters, on both engines: counts across connections, the hourly
 * rate limit.
 */
import assert from 'node:assert/strict';
import { nowMicros, nowStamp } from '../../../src/model/clock.js';
import { openStore } from '../../../src/store/open.js';
import { conformance } from './harness.js';

conformance('counters count across connections; the wake rate limit holds within its hour', async (ctx) => {
  const other = openStore(ctx.paths.db, { connectTimeoutMs: 5000 });
  try {
    assert.equal(await ctx.bus.brain.countToolCall('s-1'), 1);
    assert.equal(await other.tick('s-1', 'tool_calls', nowStamp()), 2);
    assert.equal(await ctx.bus.brain.countToolCall('s-1'), 3);
    assert.equal(await ctx.bus.brain.countToolCall('s-2'), 1);
    const micros = nowMicros();
    const results = [];
    for (let index = 0; index < 3; index++) results.push(await ctx.bus.wakes.count('repo-a/claude', micros + index, 2));
    assert.deepEqual(results, [true, true, false], 'two wakes an hour');
    assert.equal(await ctx.bus.wakes.count('repo-a/codex', micros, 2), true, 'per agent');
    assert.equal(await ctx.bus.wakes.count('repo-a/claude', micros + 3_600_000_001, 2), true, 'an hour later it may wake again');
    assert.equal(await ctx.bus.wakes.count('repo-a/claude', micros, 0), true, '0: no limit');
  } finally {
    await other.close();
  }
});
