/**
 * The roster port, on both engines.
 */
import assert from 'node:assert/strict';
import { UnknownRecipientError } from '../../../src/model/errors.js';
import { conformance } from './harness.js';

conformance('forget keeps history and refuses a bare repo name with members', async (ctx) => {
    await ctx.register(['repo-a/claude', 'repo-a/codex', 'alpha']);
    await ctx.bus.mail.send({ from: 'alpha', to: 'repo-a/codex', body: 'x' });
    const result = await ctx.bus.roster.forget('repo-a/codex');
    assert.deepEqual(result, { name: 'repo-a/codex', removed: true, pending: 1 });
    assert.deepEqual((await ctx.bus.mail.send({ from: 'alpha', to: 'repo-a', body: 'y' })).recipients, ['repo-a/claude']);
    await assert.rejects(ctx.bus.mail.send({ from: 'alpha', to: 'repo-a/codex', body: 'z' }), UnknownRecipientError);
    await assert.rejects(ctx.bus.roster.forget('repo-a'), /'repo-a' is a repo with 1 agent\(s\): repo-a\/claude.*forget --group repo-a/);
    assert.deepEqual(await ctx.bus.roster.forgetRepo('repo-a'), ['repo-a/claude']);
    assert.equal(ctx.count('SELECT COUNT(*) AS n FROM messages'), 2);
  });
