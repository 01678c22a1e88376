/**
 * The bus's rules through the core API on a real SQLite file: addressing,
 * fan-out, claims, idle skipping, threads, limits and audit rows.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { decideTake, newLease } from '../../src/core/inbox.js';
import { formatStamp, nowMicros, nowStamp } from '../../src/model/clock.js';
import { InvalidInputError, InvalidNameError, UnknownRecipientError } from '../../src/model/errors.js';
import { coreBus, type CoreBus } from '../helpers/core-bus.js';
import { readAudit } from '../helpers/bus-env.js';

async function withBus(work: (ctx: CoreBus) => Promise<void>, env: NodeJS.ProcessEnv = {}): Promise<void> {
  const ctx = await coreBus(env);
  try {
    await work(ctx);
  } finally {
    await ctx.close();
  }
}

function ops(ctx: CoreBus): string[] {
  return readAudit(ctx.paths.audit).map((row) => String(row.op));
}

async function ageAgent(ctx: CoreBus, name: string, days: number): Promise<void> {
  const stamp = formatStamp(nowMicros() - days * 86_400_000_000);
  ctx.store.connection.prepare('UPDATE agents SET last_seen = ? WHERE name = ?').run(stamp, name);
}

test('a bare repo name reaches every client there, one copy each', () =>
  withBus(async (ctx) => {
    await ctx.register(['repo-a/claude', 'repo-a/codex', 'repo-b/claude', 'human']);
    const result = await ctx.bus.send({ from: 'human', to: 'repo-a', body: 'bump the dependency' });
    assert.equal(result.kind, 'group');
    assert.deepEqual(result.recipients, ['repo-a/claude', 'repo-a/codex']);
    assert.equal(new Set(result.message_ids).size, 2);
    assert.equal(result.message_id, undefined);
    for (const reader of ['repo-a/claude', 'repo-a/codex']) {
      const [message, ...rest] = await ctx.bus.readInbox({ reader });
      assert.equal(rest.length, 0);
      assert.equal(message?.to, reader);
      assert.equal(message?.kind, 'group');
      assert.equal(message?.addressed_to, 'repo-a');
    }
    assert.deepEqual(await ctx.bus.readInbox({ reader: 'repo-b/claude' }), []);
  }));

test('a repo-wide send skips its sender; one recipient gets message_id', () =>
  withBus(async (ctx) => {
    await ctx.register(['repo-a/claude', 'repo-a/codex']);
    const result = await ctx.bus.send({ from: 'repo-a/claude', to: 'repo-a', body: 'hi' });
    assert.deepEqual(result.recipients, ['repo-a/codex']);
    assert.equal(result.message_id, result.message_ids[0]);
  }));

test('a group with nobody else in it is not an error and writes nothing', () =>
  withBus(async (ctx) => {
    await ctx.register(['repo-a/claude']);
    const result = await ctx.bus.send({ from: 'repo-a/claude', to: 'repo-a', body: 'anyone?' });
    assert.equal(result.kind, 'group');
    assert.deepEqual(result.recipients, []);
    assert.deepEqual(result.message_ids, []);
    assert.deepEqual(ops(ctx), []);
  }));

test('full names, client addresses and single bare agents are direct', () =>
  withBus(async (ctx) => {
    await ctx.register(['repo-a/claude-1', 'repo-a/codex', 'human', 'alpha']);
    const session = await ctx.bus.send({ from: 'human', to: 'repo-a/claude-1', body: 'x' });
    assert.equal(session.kind, 'direct');
    assert.deepEqual(session.recipients, ['repo-a/claude-1']);
    const client = await ctx.bus.send({ from: 'human', to: 'repo-a/claude', body: 'x' });
    assert.equal(client.kind, 'direct');
    assert.deepEqual(client.recipients, ['repo-a/claude']);
    const bare = await ctx.bus.send({ from: 'human', to: 'alpha', body: 'x' });
    assert.equal(bare.kind, 'direct');
    assert.equal(typeof bare.message_id, 'string');
  }));

test('a legacy bare-name agent is a member of its repo', () =>
  withBus(async (ctx) => {
    await ctx.register(['repo-a', 'repo-a/claude', 'repo-a/codex', 'human']);
    const result = await ctx.bus.send({ from: 'human', to: 'repo-a', body: 'x' });
    assert.equal(result.kind, 'group');
    assert.deepEqual(result.recipients, ['repo-a', 'repo-a/claude', 'repo-a/codex']);
  }));

test('* reaches everyone but the sender, one copy per client with sessions', () =>
  withBus(async (ctx) => {
    await ctx.register(['repo-a/claude-1', 'repo-a/claude-2', 'repo-b/codex', 'alpha', 'human']);
    const result = await ctx.bus.send({ from: 'alpha', to: '*', body: 'hello all' });
    assert.equal(result.kind, 'broadcast');
    assert.deepEqual(result.recipients, ['human', 'repo-a/claude', 'repo-b/codex']);
    assert.equal(result.message_id, undefined);
  }));

test('an unknown recipient is an error with hints, and nothing is written', () =>
  withBus(async (ctx) => {
    await ctx.register(['repo-a/claude', 'repo-a/codex', 'alpha']);
    await assert.rejects(
      ctx.bus.send({ from: 'alpha', to: 'repo-a/cluade', body: 'x', register: [{ name: 'newbie', repoPath: '/x', groupName: null, client: null, authoritative: true }] }),
      (error: unknown) => {
        assert.ok(error instanceof UnknownRecipientError);
        assert.match(error.message, /Agents in that repo: repo-a\/claude, repo-a\/codex\./);
        assert.match(error.message, /Nothing was sent/);
        return true;
      },
    );
    await assert.rejects(ctx.bus.send({ from: 'repo-a/claude', to: 'alhpa', body: 'x' }), /Did you mean: alpha\?/);
    await assert.rejects(ctx.bus.send({ from: 'alpha', to: 'repo-a/Claude', body: 'x' }), InvalidNameError);
    const count = ctx.store.connection.prepare('SELECT COUNT(*) AS n FROM messages').get() as { n: number };
    assert.equal(count.n, 0);
    assert.equal(await ctx.store.getAgent('newbie'), null, 'the speaker registration rolled back too');
    assert.deepEqual(ops(ctx), []);
  }));

test('mail to a bare repo name nobody holds is taken by its first reader only', () =>
  withBus(async (ctx) => {
    await ctx.register(['repo-a', 'repo-a/claude', 'repo-a/codex', 'human']);
    await ctx.bus.send({ from: 'human', to: 'repo-a', body: 'to the old name' });
    await ctx.bus.send({ from: 'human', to: '*', body: 'broadcast' });
    // The bare agent is retired (as init does on upgrade): its copies wait for the repo.
    await ctx.bus.forget('repo-a').catch(() => undefined);
    ctx.store.connection.prepare("DELETE FROM agents WHERE name = 'repo-a'").run();
    const counts = new Map((await ctx.bus.agents()).map((agent) => [agent.name, agent.pending_count]));
    const claude = await ctx.bus.readInbox({ reader: 'repo-a/claude', markRead: false });
    assert.equal(counts.get('repo-a/claude'), claude.length, 'roster counts match what a read returns');
    const first = await ctx.bus.readInbox({ reader: 'repo-a/claude' });
    // Its own two copies; the retired name's copies of the same sends are never shown twice.
    assert.deepEqual(first.map((message) => message.body).sort(), ['broadcast', 'to the old name']);
    const second = await ctx.bus.readInbox({ reader: 'repo-a/codex' });
    assert.deepEqual(second.map((message) => message.body).sort(), ['broadcast', 'to the old name']);
    const left = ctx.store.connection.prepare("SELECT COUNT(*) AS n FROM messages WHERE to_agent = 'repo-a' AND read_at IS NULL").get() as { n: number };
    assert.equal(left.n, 2, 'each fan-out reached each member once; the orphan copies are not delivered again');
  }));

test('an old-style row to a bare repo name is drained by exactly one member', () =>
  withBus(async (ctx) => {
    await ctx.register(['repo-a/claude', 'repo-a/codex']);
    ctx.store.connection
      .prepare(
        `INSERT INTO messages (message_id, from_agent, to_agent, body, thread_id, sent_at)
         VALUES ('legacy-1', 'repo-b', 'repo-a', 'from an older agent-bus', 't-1', '2026-01-01T00:00:00.000000Z')`,
      )
      .run();
    const before = new Map((await ctx.bus.agents()).map((agent) => [agent.name, agent.pending_count]));
    assert.equal(before.get('repo-a/claude'), 1);
    assert.equal(before.get('repo-a/codex'), 1);
    assert.equal((await ctx.bus.readInbox({ reader: 'repo-a/codex' }))[0]?.message_id, 'legacy-1');
    assert.deepEqual(await ctx.bus.readInbox({ reader: 'repo-a/claude' }), []);
  }));

test('bare-repo mail stays put while an agent holds that exact name', () =>
  withBus(async (ctx) => {
    await ctx.register(['repo-a', 'repo-a/claude']);
    await ctx.bus.send({ from: 'repo-a/claude', to: 'repo-a', body: 'for the legacy agent' });
    assert.deepEqual(await ctx.bus.readInbox({ reader: 'repo-a/claude' }), []);
    assert.equal((await ctx.bus.readInbox({ reader: 'repo-a' })).length, 1);
  }));

test('idle clients are skipped only when a fresher repo-mate exists', () =>
  withBus(async (ctx) => {
    await ctx.register(['repo-a/claude', 'repo-a/codex', 'repo-b/claude', 'human']);
    await ageAgent(ctx, 'repo-a/codex', 30);
    assert.deepEqual((await ctx.bus.send({ from: 'human', to: 'repo-a', body: 'x' })).recipients, ['repo-a/claude']);
    assert.deepEqual((await ctx.bus.send({ from: 'human', to: '*', body: 'x' })).recipients, ['repo-a/claude', 'repo-b/claude']);
    assert.deepEqual((await ctx.bus.send({ from: 'human', to: 'repo-a/codex', body: 'direct' })).recipients, ['repo-a/codex']);
    await ageAgent(ctx, 'repo-a/claude', 20);
    assert.deepEqual((await ctx.bus.send({ from: 'human', to: 'repo-a', body: 'x' })).recipients, ['repo-a/claude', 'repo-a/codex']);
  }));

test('AGENT_BUS_FANOUT_MAX_IDLE_DAYS=0 skips nobody; a smaller value skips sooner', async () => {
  await withBus(
    async (ctx) => {
      await ctx.register(['repo-a/claude', 'repo-a/codex', 'human']);
      await ageAgent(ctx, 'repo-a/codex', 300);
      assert.deepEqual((await ctx.bus.send({ from: 'human', to: 'repo-a', body: 'x' })).recipients, ['repo-a/claude', 'repo-a/codex']);
    },
    { AGENT_BUS_FANOUT_MAX_IDLE_DAYS: '0' },
  );
  await withBus(
    async (ctx) => {
      await ctx.register(['repo-a/claude', 'repo-a/codex', 'human']);
      await ageAgent(ctx, 'repo-a/codex', 3);
      assert.deepEqual((await ctx.bus.send({ from: 'human', to: 'repo-a', body: 'x' })).recipients, ['repo-a/claude']);
    },
    { AGENT_BUS_FANOUT_MAX_IDLE_DAYS: '2' },
  );
});

test('the first reader of a repo claims it for every copy there, audited once', () =>
  withBus(async (ctx) => {
    await ctx.register(['repo-a/claude', 'repo-a/codex', 'human']);
    await ctx.bus.send({ from: 'human', to: 'repo-a', body: 'please bump' });
    const [mine] = await ctx.bus.readInbox({ reader: 'repo-a/codex' });
    assert.equal(mine?.claimed_by, 'repo-a/codex');
    const [theirs] = await ctx.bus.readInbox({ reader: 'repo-a/claude' });
    assert.equal(theirs?.claimed_by, 'repo-a/codex');
    const claims = readAudit(ctx.paths.audit).filter((row) => row.op === 'claim');
    assert.equal(claims.length, 1);
    assert.deepEqual([claims[0]?.actor, claims[0]?.to, claims[0]?.addressed_to], ['repo-a/codex', 'repo-a/codex', 'repo-a']);
  }));

test('direct mail is never claimed and peeking claims nothing', () =>
  withBus(async (ctx) => {
    await ctx.register(['repo-a/claude', 'repo-a/codex', 'human']);
    await ctx.bus.send({ from: 'human', to: 'repo-a/claude', body: 'direct' });
    await ctx.bus.send({ from: 'human', to: 'repo-a', body: 'group' });
    const peeked = await ctx.bus.readInbox({ reader: 'repo-a/claude', markRead: false });
    assert.equal(peeked.length, 2);
    assert.ok(peeked.every((message) => message.claimed_by === null && message.read_at === null));
    const [group] = await ctx.bus.readInbox({ reader: 'repo-a/codex' });
    assert.equal(group?.claimed_by, 'repo-a/codex', 'the next real reader claims');
    const read = await ctx.bus.readInbox({ reader: 'repo-a/claude' });
    assert.equal(read.find((message) => message.kind === 'direct')?.claimed_by, null);
  }));

test('a broadcast is claimed once per repo', () =>
  withBus(async (ctx) => {
    await ctx.register(['repo-a/claude', 'repo-a/codex', 'repo-b/claude', 'repo-b/codex', 'human']);
    await ctx.bus.send({ from: 'human', to: '*', body: 'all hands' });
    assert.equal((await ctx.bus.readInbox({ reader: 'repo-a/codex' }))[0]?.claimed_by, 'repo-a/codex');
    assert.equal((await ctx.bus.readInbox({ reader: 'repo-b/claude' }))[0]?.claimed_by, 'repo-b/claude');
    assert.equal((await ctx.bus.readInbox({ reader: 'repo-a/claude' }))[0]?.claimed_by, 'repo-a/codex');
    assert.equal((await ctx.bus.readInbox({ reader: 'repo-b/codex' }))[0]?.claimed_by, 'repo-b/claude');
    assert.deepEqual((await ctx.bus.readInbox({ reader: 'human' })).length, 0, 'never back to the sender');
  }));

test('an actionable-only read leaves a repo-mate-claimed copy for a later full read', () =>
  withBus(async (ctx) => {
    await ctx.register(['repo-a/claude', 'repo-a/codex', 'human']);
    await ctx.bus.send({ from: 'human', to: 'repo-a', body: 'group' });
    await ctx.bus.send({ from: 'human', to: 'repo-a/claude', body: 'direct' });
    await ctx.bus.readInbox({ reader: 'repo-a/codex' });
    const actionable = await ctx.bus.readInbox({ reader: 'repo-a/claude', actionableOnly: true });
    assert.deepEqual(actionable.map((message) => message.body), ['direct']);
    assert.equal(await ctx.bus.pendingCount('repo-a/claude'), 1);
    const rest = await ctx.bus.readInbox({ reader: 'repo-a/claude' });
    assert.deepEqual(rest.map((message) => [message.body, message.claimed_by]), [['group', 'repo-a/codex']]);
  }));

test('a lone agent claims silently: the audit shows only send and read', () =>
  withBus(async (ctx) => {
    await ctx.register(['repo-a/claude', 'human']);
    await ctx.bus.send({ from: 'human', to: '*', body: 'solo' });
    const [message] = await ctx.bus.readInbox({ reader: 'repo-a/claude' });
    assert.equal(message?.claimed_by, 'repo-a/claude');
    assert.deepEqual(ops(ctx), ['send', 'read']);
  }));

test('a session takes mail sent to its client address, never its own', () =>
  withBus(async (ctx) => {
    await ctx.register(['repo-a/claude-1', 'repo-a/claude-2', 'human']);
    await ctx.bus.send({ from: 'human', to: 'repo-a/claude', body: 'any claude' });
    await ctx.bus.send({ from: 'repo-a/claude-1', to: 'repo-a/claude', body: 'from a sibling' });
    const first = await ctx.bus.readInbox({ reader: 'repo-a/claude-1' });
    assert.deepEqual(first.map((message) => message.body), ['any claude']);
    const second = await ctx.bus.readInbox({ reader: 'repo-a/claude-2' });
    assert.deepEqual(second.map((message) => message.body), ['from a sibling']);
  }));

test('threads: a send starts one, replies keep it, it reads back in order', () =>
  withBus(async (ctx) => {
    await ctx.register(['alpha', 'beta']);
    const opening = await ctx.bus.send({ from: 'alpha', to: 'beta', body: 'one' });
    assert.match(opening.thread_id ?? '', /^[0-9a-f-]{36}$/);
    await ctx.bus.send({ from: 'beta', to: 'alpha', body: 'two', threadId: opening.thread_id });
    await ctx.bus.send({ from: 'alpha', to: 'beta', body: 'three', threadId: opening.thread_id });
    const other = await ctx.bus.send({ from: 'alpha', to: 'beta', body: 'elsewhere' });
    assert.notEqual(other.thread_id, opening.thread_id);
    const thread = await ctx.bus.thread(opening.thread_id as string);
    assert.deepEqual(thread.map((message) => message.body), ['one', 'two', 'three']);
    assert.deepEqual((await ctx.bus.thread(opening.thread_id as string, 2)).map((message) => message.body), ['one', 'two']);
  }));

test('bodies over the size cap and empty bodies are refused, nothing written', () =>
  withBus(
    async (ctx) => {
      await ctx.register(['alpha', 'beta']);
      await assert.rejects(ctx.bus.send({ from: 'alpha', to: 'beta', body: 'é'.repeat(51) }), (error: unknown) => {
        assert.ok(error instanceof InvalidInputError);
        assert.match(error.message, /102 bytes; the limit is 100 bytes \(AGENT_BUS_MAX_BODY_BYTES\)/);
        return true;
      });
      await ctx.bus.send({ from: 'alpha', to: 'beta', body: 'é'.repeat(50) });
      await assert.rejects(ctx.bus.send({ from: 'alpha', to: 'beta', body: '  \n' }), /body must be non-empty/);
      await assert.rejects(ctx.bus.send({ from: 'alpha', to: '', body: 'x' }), /to must be non-empty/);
      const count = ctx.store.connection.prepare('SELECT COUNT(*) AS n FROM messages').get() as { n: number };
      assert.equal(count.n, 1);
    },
    { AGENT_BUS_MAX_BODY_BYTES: '100' },
  ));

test('audit rows: keys in order, compact, a preview and the body hash', () =>
  withBus(async (ctx) => {
    await ctx.register(['alpha', 'beta', 'gamma']);
    const body = `${'x'.repeat(250)} ünïcode`;
    await ctx.bus.send({ from: 'alpha', to: '*', body });
    await ctx.bus.readInbox({ reader: 'beta', deliver: true });
    const text = readFileSync(ctx.paths.audit, 'utf8');
    const lines = text.trimEnd().split('\n');
    assert.equal(lines.length, 4);
    assert.match(lines[0] ?? '', /^\{"ts":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z","op":"send","actor":"alpha","message_id":/);
    assert.ok(lines.filter((line) => /"op":"send".*"actor":"alpha"/.test(line)).length === 2, 'the grep recipe works');
    const rows = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    assert.deepEqual(Object.keys(rows[0] ?? {}), ['ts', 'op', 'actor', 'message_id', 'from', 'to', 'addressed_to', 'thread_id', 'body_preview', 'body_sha256']);
    assert.deepEqual(rows.map((row) => row.op), ['send', 'send', 'read', 'deliver']);
    assert.deepEqual(rows.map((row) => row.to), ['beta', 'gamma', 'beta', 'beta']);
    assert.equal(rows[0]?.body_preview, 'x'.repeat(200));
    const stored = ctx.store.connection.prepare("SELECT body FROM messages WHERE to_agent = 'beta'").get() as { body: string };
    const { createHash } = await import('node:crypto');
    assert.equal(rows[0]?.body_sha256, createHash('sha256').update(stored.body, 'utf8').digest('hex'));
  }));

test('forget keeps history and refuses a bare repo name with members', () =>
  withBus(async (ctx) => {
    await ctx.register(['repo-a/claude', 'repo-a/codex', 'alpha']);
    await ctx.bus.send({ from: 'alpha', to: 'repo-a/codex', body: 'x' });
    const result = await ctx.bus.forget('repo-a/codex');
    assert.deepEqual(result, { name: 'repo-a/codex', removed: true, pending: 1 });
    assert.deepEqual((await ctx.bus.send({ from: 'alpha', to: 'repo-a', body: 'y' })).recipients, ['repo-a/claude']);
    await assert.rejects(ctx.bus.send({ from: 'alpha', to: 'repo-a/codex', body: 'z' }), UnknownRecipientError);
    await assert.rejects(ctx.bus.forget('repo-a'), /'repo-a' is a repo with 1 agent\(s\): repo-a\/claude.*forget --group repo-a/);
    assert.deepEqual(await ctx.bus.forgetGroup('repo-a'), ['repo-a/claude']);
    const count = ctx.store.connection.prepare('SELECT COUNT(*) AS n FROM messages').get() as { n: number };
    assert.equal(count.n, 2);
  }));

test('sends made together commit together; a failing one undoes only itself', () =>
  withBus(async (ctx) => {
    await ctx.register(['alpha', 'beta', 'gamma']);
    const newbie = { name: 'newbie', repoPath: '/x', groupName: null, client: null, authoritative: true };
    const outcomes = await Promise.allSettled([
      ctx.bus.send({ from: 'alpha', to: 'beta', body: 'first' }),
      ctx.bus.send({ from: 'newbie', to: 'nobody-here', body: 'lost', register: [newbie] }),
      ctx.bus.send({ from: 'alpha', to: '*', body: 'third' }),
      ctx.bus.send({ from: 'alpha', to: 'nobody-else', body: 'refused without registering anyone' }),
      ...Array.from({ length: 300 }, (_, index) => ctx.bus.send({ from: 'gamma', to: 'beta', body: `burst ${index}` })),
    ]);
    assert.deepEqual(outcomes.slice(0, 3).map((outcome) => outcome.status), ['fulfilled', 'rejected', 'fulfilled']);
    assert.equal(outcomes[3]?.status, 'rejected');
    assert.ok(outcomes.slice(4).every((outcome) => outcome.status === 'fulfilled'));
    assert.equal(await ctx.store.getAgent('newbie'), null, "the failed send's registration was undone");
    const count = ctx.store.connection.prepare('SELECT COUNT(*) AS n FROM messages').get() as { n: number };
    assert.equal(count.n, 1 + 2 + 300);
    const beta = await ctx.bus.readInbox({ reader: 'beta', limit: 1000 });
    assert.deepEqual(beta.slice(0, 3).map((message) => message.body), ['first', 'third', 'burst 0']);
    assert.equal(beta.at(-1)?.body, 'burst 299', 'a burst reads back in the order it was sent');
    assert.equal(readAudit(ctx.paths.audit).filter((row) => row.op === 'send').length, 303);
  }));

test('mail a hook has taken is leased: nobody else takes it until it is shown or given back', () =>
  withBus(async (ctx) => {
    await ctx.register(['repo-a/claude', 'human']);
    await ctx.bus.send({ from: 'human', to: 'repo-a/claude', body: 'leased' });
    const seen: string[][] = [];
    const first = ctx.bus.deliverInbox({ reader: 'repo-a/claude' }, (messages) => {
      seen.push(messages.map((message) => message.body));
      throw new Error('the client went away');
    });
    await assert.rejects(first, /the client went away/);
    assert.deepEqual(seen, [['leased']]);
    // Given back at once: the next turn shows it.
    await ctx.bus.deliverInbox({ reader: 'repo-a/claude' }, (messages) => {
      seen.push(messages.map((message) => message.body));
    });
    assert.deepEqual(seen[1], ['leased']);
    await ctx.bus.send({ from: 'human', to: 'repo-a/claude', body: 'second' });
    const reader = { name: 'repo-a/claude', group: 'repo-a', clientAddress: 'repo-a/claude', isSession: false };
    const taken = await ctx.store.takeInbox({
      query: { reader, limit: 10, actionableOnly: false, now: nowStamp() },
      decide: (rows, copies) => decideTake(rows, copies, reader),
      lease: newLease(nowMicros()),
    });
    assert.deepEqual(taken.messages.map((message) => message.body), ['second']);
    assert.deepEqual(await ctx.bus.readInbox({ reader: 'repo-a/claude' }), [], 'a concurrent reader does not take leased mail');
    assert.equal(await ctx.bus.pendingCount('repo-a/claude'), 1, 'still pending');
    ctx.store.connection.prepare("UPDATE messages SET lease_until = '2000-01-01T00:00:00.000000Z' WHERE body = 'second'").run();
    assert.deepEqual((await ctx.bus.readInbox({ reader: 'repo-a/claude' })).map((message) => message.body), ['second'], 'an expired lease frees it');
  }));
