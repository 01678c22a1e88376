/**
 * The mail port, on both engines: who a send reaches (the four address forms, idle skipping),
 * threads, limits, audit rows, and sends batched into one transaction, all or nothing.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { InvalidNameError, TooLargeError, UnknownRecipientError } from '../../../src/model/errors.js';
import { readAudit } from '../../helpers/bus-env.js';
import { conformance, ops, DAY_MS } from './harness.js';

conformance('a bare repo name reaches every client there, one copy each', async (ctx) => {
    await ctx.register(['repo-a/claude', 'repo-a/codex', 'repo-b/claude', 'human']);
    const result = await ctx.bus.mail.send({ from: 'human', to: 'repo-a', body: 'bump the dependency' });
    assert.equal(result.kind, 'group');
    assert.deepEqual(result.recipients, ['repo-a/claude', 'repo-a/codex']);
    assert.equal(new Set(result.message_ids).size, 2);
    assert.equal(result.message_id, undefined);
    for (const reader of ['repo-a/claude', 'repo-a/codex']) {
      const [message, ...rest] = await ctx.bus.inbox.read({ reader, via: 'read_inbox' });
      assert.equal(rest.length, 0);
      assert.equal(message?.to, reader);
      assert.equal(message?.kind, 'group');
      assert.equal(message?.addressed_to, 'repo-a');
    }
    assert.deepEqual(await ctx.bus.inbox.read({ reader: 'repo-b/claude', via: 'read_inbox' }), []);
  });

conformance('a repo-wide send skips its sender; one recipient gets message_id', async (ctx) => {
    await ctx.register(['repo-a/claude', 'repo-a/codex']);
    const result = await ctx.bus.mail.send({ from: 'repo-a/claude', to: 'repo-a', body: 'hi' });
    assert.deepEqual(result.recipients, ['repo-a/codex']);
    assert.equal(result.message_id, result.message_ids[0]);
  });

conformance('a group with nobody else in it is not an error and writes nothing', async (ctx) => {
    await ctx.register(['repo-a/claude']);
    const result = await ctx.bus.mail.send({ from: 'repo-a/claude', to: 'repo-a', body: 'anyone?' });
    assert.equal(result.kind, 'group');
    assert.deepEqual(result.recipients, []);
    assert.deepEqual(result.message_ids, []);
    assert.deepEqual(ops(ctx), []);
  });

conformance('full names, client addresses and single bare agents are direct', async (ctx) => {
    await ctx.register(['repo-a/claude-1', 'repo-a/codex', 'human', 'alpha']);
    const session = await ctx.bus.mail.send({ from: 'human', to: 'repo-a/claude-1', body: 'x' });
    assert.equal(session.kind, 'direct');
    assert.deepEqual(session.recipients, ['repo-a/claude-1']);
    const client = await ctx.bus.mail.send({ from: 'human', to: 'repo-a/claude', body: 'x' });
    assert.equal(client.kind, 'direct');
    assert.deepEqual(client.recipients, ['repo-a/claude']);
    const bare = await ctx.bus.mail.send({ from: 'human', to: 'alpha', body: 'x' });
    assert.equal(bare.kind, 'direct');
    assert.equal(typeof bare.message_id, 'string');
  });

conformance('a legacy bare-name agent is a member of its repo', async (ctx) => {
    await ctx.register(['repo-a', 'repo-a/claude', 'repo-a/codex', 'human']);
    const result = await ctx.bus.mail.send({ from: 'human', to: 'repo-a', body: 'x' });
    assert.equal(result.kind, 'group');
    assert.deepEqual(result.recipients, ['repo-a', 'repo-a/claude', 'repo-a/codex']);
  });

conformance('* reaches everyone but the sender, one copy per client with sessions', async (ctx) => {
    await ctx.register(['repo-a/claude-1', 'repo-a/claude-2', 'repo-b/codex', 'alpha', 'human']);
    const result = await ctx.bus.mail.send({ from: 'alpha', to: '*', body: 'hello all' });
    assert.equal(result.kind, 'broadcast');
    assert.deepEqual(result.recipients, ['human', 'repo-a/claude', 'repo-b/codex']);
    assert.equal(result.message_id, undefined);
  });

conformance('an unknown recipient is an error with hints, and nothing is written', async (ctx) => {
    await ctx.register(['repo-a/claude', 'repo-a/codex', 'alpha']);
    await assert.rejects(
      ctx.bus.mail.send({ from: 'alpha', to: 'repo-a/cluade', body: 'x', register: [{ name: 'newbie', repoPath: '/x', repo: null, client: null, authoritative: true }] }),
      (error: unknown) => {
        assert.ok(error instanceof UnknownRecipientError);
        assert.match(error.message, /Agents in that repo: repo-a\/claude, repo-a\/codex\./);
        assert.match(error.message, /Nothing was sent/);
        return true;
      },
    );
    await assert.rejects(ctx.bus.mail.send({ from: 'repo-a/claude', to: 'alhpa', body: 'x' }), /Did you mean: alpha\?/);
    await assert.rejects(ctx.bus.mail.send({ from: 'alpha', to: 'repo-a/Claude', body: 'x' }), InvalidNameError);
    assert.equal(ctx.count('SELECT COUNT(*) AS n FROM messages'), 0);
    assert.equal(await ctx.store.getAgent('newbie'), null, 'the speaker registration rolled back too');
    assert.deepEqual(ops(ctx), []);
  });

conformance('idle clients are skipped only when a fresher repo-mate exists', async (ctx) => {
    // repo-a/codex last seen thirty days before the others.
    await ctx.register(['repo-a/codex']);
    ctx.clock.advance(30 * DAY_MS);
    await ctx.register(['repo-a/claude', 'repo-b/claude', 'human']);
    assert.deepEqual((await ctx.bus.mail.send({ from: 'human', to: 'repo-a', body: 'x' })).recipients, ['repo-a/claude']);
    assert.deepEqual((await ctx.bus.mail.send({ from: 'human', to: '*', body: 'x' })).recipients, ['repo-a/claude', 'repo-b/claude']);
    assert.deepEqual((await ctx.bus.mail.send({ from: 'human', to: 'repo-a/codex', body: 'direct' })).recipients, ['repo-a/codex']);
    // Twenty days on, repo-a/claude is idle too: nobody fresher, so nobody is skipped.
    ctx.clock.advance(20 * DAY_MS);
    assert.deepEqual((await ctx.bus.mail.send({ from: 'human', to: 'repo-a', body: 'x' })).recipients, ['repo-a/claude', 'repo-a/codex']);
  });

conformance(
  'AGENT_BUS_FANOUT_MAX_IDLE_DAYS=0 skips nobody',
  async (ctx) => {
    await ctx.register(['repo-a/codex']);
    ctx.clock.advance(300 * DAY_MS);
    await ctx.register(['repo-a/claude', 'human']);
    assert.deepEqual((await ctx.bus.mail.send({ from: 'human', to: 'repo-a', body: 'x' })).recipients, ['repo-a/claude', 'repo-a/codex']);
  },
  { AGENT_BUS_FANOUT_MAX_IDLE_DAYS: '0' },
);

conformance(
  'a smaller AGENT_BUS_FANOUT_MAX_IDLE_DAYS skips sooner',
  async (ctx) => {
    await ctx.register(['repo-a/codex']);
    ctx.clock.advance(3 * DAY_MS);
    await ctx.register(['repo-a/claude', 'human']);
    assert.deepEqual((await ctx.bus.mail.send({ from: 'human', to: 'repo-a', body: 'x' })).recipients, ['repo-a/claude']);
  },
  { AGENT_BUS_FANOUT_MAX_IDLE_DAYS: '2' },
);

conformance('threads: a send starts one, replies keep it, it reads back in order', async (ctx) => {
    await ctx.register(['alpha', 'beta']);
    const opening = await ctx.bus.mail.send({ from: 'alpha', to: 'beta', body: 'one' });
    assert.match(opening.thread_id ?? '', /^[0-9a-f-]{36}$/);
    await ctx.bus.mail.send({ from: 'beta', to: 'alpha', body: 'two', threadId: opening.thread_id });
    await ctx.bus.mail.send({ from: 'alpha', to: 'beta', body: 'three', threadId: opening.thread_id });
    const other = await ctx.bus.mail.send({ from: 'alpha', to: 'beta', body: 'elsewhere' });
    assert.notEqual(other.thread_id, opening.thread_id);
    const thread = await ctx.bus.mail.thread(opening.thread_id as string);
    assert.deepEqual(thread.map((message) => message.body), ['one', 'two', 'three']);
    assert.deepEqual((await ctx.bus.mail.thread(opening.thread_id as string, 2)).map((message) => message.body), ['one', 'two']);
  });

conformance(
  'bodies over the size cap and empty bodies are refused, nothing written',
    async (ctx) => {
      await ctx.register(['alpha', 'beta']);
      await assert.rejects(ctx.bus.mail.send({ from: 'alpha', to: 'beta', body: 'é'.repeat(51) }), (error: unknown) => {
        assert.ok(error instanceof TooLargeError, 'a failure (exit 1), not bad usage');
        assert.match(error.message, /102 bytes; the limit is 100 bytes \(AGENT_BUS_MAX_BODY_BYTES\)/);
        return true;
      });
      await ctx.bus.mail.send({ from: 'alpha', to: 'beta', body: 'é'.repeat(50) });
      await assert.rejects(ctx.bus.mail.send({ from: 'alpha', to: 'beta', body: '  \n' }), /body must be non-empty/);
      await assert.rejects(ctx.bus.mail.send({ from: 'alpha', to: '', body: 'x' }), /to must be non-empty/);
      assert.equal(ctx.count('SELECT COUNT(*) AS n FROM messages'), 1);
    },
    { AGENT_BUS_MAX_BODY_BYTES: '100' },
  );

conformance('audit rows: keys in order, compact, a preview and the body hash', async (ctx) => {
    await ctx.register(['alpha', 'beta', 'gamma']);
    const body = `${'x'.repeat(250)} ünïcode`;
    await ctx.bus.mail.send({ from: 'alpha', to: '*', body });
    await ctx.bus.inbox.read({ reader: 'beta', deliver: true, via: 'read_inbox' });
    const text = readFileSync(ctx.paths.audit, 'utf8');
    // The log's genesis first, then the bus's rows.
    const [genesis, ...lines] = text.trimEnd().split('\n');
    assert.match(genesis ?? '', /"op":"audit".*"event":"genesis"/);
    assert.equal(lines.length, 4);
    assert.match(lines[0] ?? '', /^\{"ts":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z","op":"send","actor":"alpha","message_id":/);
    assert.ok(lines.filter((line) => /"op":"send".*"actor":"alpha"/.test(line)).length === 2, 'the grep recipe works');
    const rows = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    assert.deepEqual(Object.keys(rows[0] ?? {}), ['ts', 'op', 'actor', 'message_id', 'from', 'to', 'addressed_to', 'thread_id', 'body_preview', 'body_sha256', 'seq', 'chain']);
    assert.deepEqual(rows.map((row) => row.op), ['send', 'send', 'read', 'deliver']);
    assert.deepEqual(rows.map((row) => row.to), ['beta', 'gamma', 'beta', 'beta']);
    assert.equal(rows[0]?.body_preview, 'x'.repeat(200));
    const [stored] = ctx.paths.rows<{ body: string }>("SELECT body FROM messages WHERE to_agent = 'beta'");
    assert.ok(stored);
    const { createHash } = await import('node:crypto');
    assert.equal(rows[0]?.body_sha256, createHash('sha256').update(stored.body, 'utf8').digest('hex'));
  });

conformance('sends made together commit together; a failing one undoes only itself', async (ctx) => {
    await ctx.register(['alpha', 'beta', 'gamma']);
    const newbie = { name: 'newbie', repoPath: '/x', repo: null, client: null, authoritative: true };
    const outcomes = await Promise.allSettled([
      ctx.bus.mail.send({ from: 'alpha', to: 'beta', body: 'first' }),
      ctx.bus.mail.send({ from: 'newbie', to: 'nobody-here', body: 'lost', register: [newbie] }),
      ctx.bus.mail.send({ from: 'alpha', to: '*', body: 'third' }),
      ctx.bus.mail.send({ from: 'alpha', to: 'nobody-else', body: 'refused without registering anyone' }),
      ...Array.from({ length: 300 }, (_, index) => ctx.bus.mail.send({ from: 'gamma', to: 'beta', body: `burst ${index}` })),
    ]);
    assert.deepEqual(outcomes.slice(0, 3).map((outcome) => outcome.status), ['fulfilled', 'rejected', 'fulfilled']);
    assert.equal(outcomes[3]?.status, 'rejected');
    assert.ok(outcomes.slice(4).every((outcome) => outcome.status === 'fulfilled'));
    assert.equal(await ctx.store.getAgent('newbie'), null, "the failed send's registration was undone");
    assert.equal(ctx.count('SELECT COUNT(*) AS n FROM messages'), 1 + 2 + 300);
    const beta = await ctx.bus.inbox.read({ reader: 'beta', limit: 1000, via: 'read_inbox' });
    assert.deepEqual(beta.slice(0, 3).map((message) => message.body), ['first', 'third', 'burst 0']);
    assert.equal(beta.at(-1)?.body, 'burst 299', 'a burst reads back in the order it was sent');
    assert.equal(readAudit(ctx.paths.audit).filter((row) => row.op === 'send').length, 303);
  });

// ---------------------------------------------------------------------------
// Fan-out is all or nothing
// ---------------------------------------------------------------------------

conformance('a fan-out that fails on one copy writes none of them', async (ctx) => {
  await ctx.register(['repo-a/claude', 'repo-a/codex', 'repo-a/agy', 'human']);
  // The store refuses one copy: a trigger stands in for a disk that fills mid fan-out.
  if (ctx.engine === 'sqlite') {
    ctx.paths.sql("CREATE TRIGGER refuse_codex BEFORE INSERT ON messages WHEN NEW.to_agent = 'repo-a/codex' BEGIN SELECT RAISE(ABORT, 'refused'); END");
  } else {
    ctx.paths.sql(`CREATE FUNCTION refuse_codex() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN IF NEW.to_agent = 'repo-a/codex' THEN RAISE EXCEPTION 'refused'; END IF; RETURN NEW; END $$;
      CREATE TRIGGER refuse_codex BEFORE INSERT ON messages FOR EACH ROW EXECUTE FUNCTION refuse_codex();`);
  }
  await assert.rejects(ctx.bus.mail.send({ from: 'human', to: 'repo-a', body: 'all or nothing' }), /refused/);
  assert.equal(ctx.count('SELECT COUNT(*) AS n FROM messages'), 0, 'no copy was written');
  assert.ok(!ops(ctx).includes('send'), 'nothing was audited');
  const direct = await ctx.bus.mail.send({ from: 'human', to: 'repo-a/claude', body: 'still works' });
  assert.equal(direct.recipients.length, 1);
});

conformance('sends arriving in ticks of their own while a batch commits all land, each once, in one resolved promise each', async (ctx) => {
  await ctx.register(['shop/claude', 'shop/codex']);
  const sends: Array<Promise<unknown>> = [];
  for (let wave = 0; wave < 20; wave++) {
    // A hub's requests: each in an I/O tick of its own, some while an earlier batch is being written.
    await new Promise((resolve) => setImmediate(resolve));
    for (let i = 0; i < 5; i++) sends.push(ctx.bus.mail.send({ from: 'shop/claude', to: 'shop/codex', body: `wave ${wave} send ${i}` }));
  }
  const results = await Promise.all(sends);
  assert.equal(results.length, 100);
  assert.equal(ctx.count("SELECT COUNT(*) AS n FROM messages WHERE body LIKE 'wave %'"), 100);
  assert.equal(ctx.count("SELECT COUNT(DISTINCT body) AS n FROM messages WHERE body LIKE 'wave %'"), 100);
  const inbox = await ctx.bus.inbox.read({ reader: 'shop/codex', markRead: false, limit: 1000, via: null });
  assert.equal(inbox.length, 100);
});
