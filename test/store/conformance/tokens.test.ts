/**
 * The tokens port, on both engines.
 */
import assert from 'node:assert/strict';
import { Tokens } from '../../../src/core/tokens.js';
import { ManualClock } from '../../../src/model/clock.js';
import { conformance } from './harness.js';

conformance('tokens: made with their agent on the roster, found by id, revoked by id or agent, a use noted at most once a minute', async (ctx) => {
  const clock = new ManualClock(Date.parse('2026-12-01T10:00:00Z') * 1000);
  const tokens = new Tokens(ctx.store, clock);
  const made = await tokens.create({ agent: 'shop/claude', repoPath: null, expiresInMs: 60_000, scopes: 'metrics' });
  clock.advance(1); // Listed in the order made.
  const other = await tokens.create({ agent: 'shop/claude', repoPath: '/srv/shop', expiresInMs: null, scopes: '' });
  assert.ok((await ctx.bus.roster.get('shop/claude')) !== null, 'the agent is on the roster');
  const checked = await tokens.check(made.token);
  assert.ok(checked.ok);
  assert.equal(checked.token.agent, 'shop/claude');
  assert.equal(checked.token.lastUsedAt, null, 'the record as it was before this use');
  const noted = (await tokens.list()).find((row) => row.tokenId === made.record.tokenId);
  assert.equal(noted?.lastUsedAt, '2026-12-01T10:00:00.001000Z');
  clock.advance(30_000);
  await tokens.check(made.token);
  assert.equal((await ctx.store.tokenById(made.record.tokenId))?.lastUsedAt, '2026-12-01T10:00:00.001000Z', 'not noted again within the minute');
  assert.deepEqual(await tokens.check(made.token.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'))), { ok: false, reason: 'unknown' });
  assert.deepEqual(await tokens.check('abt_0000000000000000_' + 'A'.repeat(43)), { ok: false, reason: 'unknown' });
  assert.deepEqual(await tokens.check('Bearer x'), { ok: false, reason: 'malformed' });
  clock.advance(30_000);
  assert.deepEqual(await tokens.check(made.token), { ok: false, reason: 'expired' });
  assert.deepEqual(await tokens.revoke(other.record.tokenId), [other.record.tokenId]);
  assert.deepEqual(await tokens.check(other.token), { ok: false, reason: 'revoked' });
  assert.deepEqual(await tokens.revoke('shop/claude'), [made.record.tokenId], 'only those not revoked yet');
  assert.deepEqual(await tokens.revoke('shop/claude'), []);
  const listed = await tokens.list();
  assert.deepEqual(listed.map((row) => [row.repoPath, row.scopes, row.revokedAt !== null]), [['shop', 'metrics', true], ['/srv/shop', '', true]]);
  assert.ok(listed.every((row) => /^[0-9a-f]{64}$/.test(row.secretHash) && !made.token.includes(row.secretHash)));
});
