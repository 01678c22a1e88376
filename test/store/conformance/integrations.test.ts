/** The integrations port, on both engines: a name set up once, its secret rotated, a delivery id taken once, all gone with it. */
import assert from 'node:assert/strict';
import type { IntegrationRecord } from '../../../src/model/records.js';
import { conformance } from './harness.js';

const LONG_AGO = '2026-01-01T00:00:00.000000Z';

const record: IntegrationRecord = {
  name: 'github',
  kind: 'github',
  target: '{repo}',
  channel: null,
  severity: 'alert',
  secret: 'abwh_first',
  previousSecret: null,
  previousUntil: null,
  createdAt: '2026-12-04T10:00:00.000000Z',
  url: null,
  on: null,
};

conformance('integrations: added once with its name on the roster, rotated keeping the old secret until its time, a delivery taken once, removed with its deliveries', async (ctx) => {
  assert.equal(await ctx.store.addIntegration(record, [{ name: 'github', repoPath: '~', repo: null, client: null, authoritative: true }]), true);
  assert.equal(await ctx.store.addIntegration({ ...record, secret: 'abwh_other' }, []), false, 'a name is taken once');
  assert.deepEqual(await ctx.store.integration('github'), record);
  assert.ok((await ctx.bus.roster.agents()).some((agent) => agent.name === 'github'), 'a sender on the roster');
  assert.equal(await ctx.store.rotateIntegration('github', 'abwh_second', '2026-12-04T11:00:00.000000Z'), true);
  assert.deepEqual(await ctx.store.integration('github'), { ...record, secret: 'abwh_second', previousSecret: 'abwh_first', previousUntil: '2026-12-04T11:00:00.000000Z' });
  assert.equal(await ctx.store.rotateIntegration('nobody', 'x', '2026-12-04T11:00:00.000000Z'), false);
  assert.equal(await ctx.store.takeDelivery('github', 'd-1', '2026-12-04T10:01:00.000000Z', LONG_AGO), true);
  assert.equal(await ctx.store.takeDelivery('github', 'd-1', '2026-12-04T10:02:00.000000Z', LONG_AGO), false, 'a replay');
  assert.equal(await ctx.store.takeDelivery('github', 'd-2', '2026-12-04T10:02:00.000000Z', LONG_AGO), true);
  const racing = await Promise.all(Array.from({ length: 8 }, () => ctx.store.takeDelivery('github', 'd-3', '2026-12-04T10:03:00.000000Z', LONG_AGO)));
  assert.equal(racing.filter(Boolean).length, 1, 'of eight takes of one id, one wins');
  assert.deepEqual((await ctx.store.integrations()).map((row) => row.name), ['github']);
  assert.equal(await ctx.store.removeIntegration('github'), true);
  assert.equal(await ctx.store.removeIntegration('github'), false);
  assert.equal(await ctx.store.integration('github'), null);
  assert.equal(await ctx.store.addIntegration(record, []), true, 'the name is free again');
  assert.equal(await ctx.store.takeDelivery('github', 'd-1', '2026-12-04T10:04:00.000000Z', LONG_AGO), true, 'its old deliveries went with it');
  // Ids taken before the time given are forgotten: taken again; those after, still remembered.
  assert.equal(await ctx.store.takeDelivery('github', 'd-9', '2026-12-04T10:05:00.000000Z', '2026-12-04T10:04:30.000000Z'), true);
  assert.equal(await ctx.store.takeDelivery('github', 'd-1', '2026-12-04T10:06:00.000000Z', '2026-12-04T10:04:30.000000Z'), true, 'd-1 (10:04) forgotten');
  assert.equal(await ctx.store.takeDelivery('github', 'd-9', '2026-12-04T10:06:00.000000Z', '2026-12-04T10:04:30.000000Z'), false, 'd-9 (10:05) remembered');
});
