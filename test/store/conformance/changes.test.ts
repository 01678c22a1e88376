/**
 * The change feed, on both engines: every kind of write another connection commits moves it on.
 */
import assert from 'node:assert/strict';
import { nowStamp } from '../../../src/model/clock.js';
import { openStore } from '../../../src/store/open.js';
import { conformance } from './harness.js';

conformance('every kind of write another connection commits moves a waiting feed on', async (ctx) => {
  const writer = openStore(ctx.paths.db, { connectTimeoutMs: 5000 });
  const reader = openStore(ctx.paths.db, { connectTimeoutMs: 5000 });
  const feed = reader.changes();
  try {
    const now = nowStamp();
    const route = { threadId: 't-1', agent: 'shop/codex', client: 'codex', executable: 'codex', clientPid: 1, clientStarted: 'x', repoPath: '/repos/shop', updatedAt: now, turnState: 'idle' as const };
    const writes: Array<[string, () => Promise<unknown>]> = [
      ['register', () => writer.register([{ name: 'shop/codex', repoPath: '/repos/shop', repo: 'shop', client: 'codex', authoritative: true }], now)],
      ['touch', () => writer.touch(['shop/codex'], nowStamp())],
      ['topic', () => writer.setTopic('shop/codex', 'the build')],
      ['route', () => writer.saveRoute(route)],
      ['queued', () => writer.markQueued('t-1', nowStamp())],
    ];
    for (const [kind, write] of writes) {
      const before = await feed.version();
      await write();
      const started = Date.now();
      while ((await feed.version()) === before && Date.now() - started < 5000) await feed.wait(100);
      assert.notEqual(await feed.version(), before, `a ${kind} moves the feed on`);
    }
    assert.equal((await reader.getAgent('shop/codex'))?.topic, 'the build', 'the writes landed in the store the feed watches');
  } finally {
    await feed.close();
    await writer.close();
    await reader.close();
  }
});
