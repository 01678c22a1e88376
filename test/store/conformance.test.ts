/**
 * The store's conformance suite: the bus's rules through the core API, the
 * same cases on both engines (a SQLite file, a PostgreSQL database): addressing,
 * fan-out, claims, idle skipping, threads, limits, audit rows, sessions,
 * notices, the brain's reconcile, counters, the wake rate limit, migrations.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { decideTake, newLease } from '../../src/core/inbox.js';
import { Tokens } from '../../src/core/tokens.js';
import { formatStamp, nowMicros, nowStamp } from '../../src/model/clock.js';
import { InvalidInputError, InvalidNameError, UnknownRecipientError } from '../../src/model/errors.js';
import { coreBus, type CoreBus } from '../helpers/core-bus.js';
import { CLI, json, readAudit, runCli, runCliAsync, tempBus, type Engine } from '../helpers/bus-env.js';
import { openStore } from '../../src/store/open.js';
import pg from 'pg';
import { Bus } from '../../src/core/bus.js';
import { busSettings } from '../../src/core/settings.js';
import { livenessFrom } from '../../src/core/liveness.js';
import { openAuditLog } from '../../src/runtime.js';
import type { SessionLiveness } from '../../src/core/liveness.js';
import { keyOf } from '../../src/core/sessions.js';
import { parseSearchQuery } from '../../src/core/search-query.js';
import { systemProcessTable } from '../../src/sessions/procs.js';
import { buildNotice } from '../../src/core/notice-ops.js';
import { noticeCaps } from '../../src/core/notices.js';
import { TARGET_VERSION as SQLITE_VERSION } from '../../src/store/sqlite/schema.js';
import { TARGET_VERSION as POSTGRES_VERSION } from '../../src/store/postgres/schema.js';
import { spawn } from 'node:child_process';

const ENGINES: Engine[] = ['sqlite', 'postgres'];

/** One case, run once per engine. */
function conformance(name: string, work: (ctx: CoreBus) => Promise<void>, env: NodeJS.ProcessEnv = {}, liveness?: SessionLiveness): void {
  for (const engine of ENGINES) {
    test(`${engine}: ${name}`, async () => {
      const ctx = await coreBus(env, engine, liveness);
      try {
        await work(ctx);
      } finally {
        await ctx.close();
      }
    });
  }
}

function ops(ctx: CoreBus): string[] {
  return readAudit(ctx.paths.audit).filter((row) => row.op !== 'audit').map((row) => String(row.op));
}

async function ageAgent(ctx: CoreBus, name: string, days: number): Promise<void> {
  const stamp = formatStamp(nowMicros() - days * 86_400_000_000);
  ctx.paths.sql(`UPDATE agents SET last_seen = '${stamp}' WHERE name = '${name}'`);
}

conformance('a bare repo name reaches every client there, one copy each', async (ctx) => {
    await ctx.register(['repo-a/claude', 'repo-a/codex', 'repo-b/claude', 'human']);
    const result = await ctx.bus.send({ from: 'human', to: 'repo-a', body: 'bump the dependency' });
    assert.equal(result.kind, 'group');
    assert.deepEqual(result.recipients, ['repo-a/claude', 'repo-a/codex']);
    assert.equal(new Set(result.message_ids).size, 2);
    assert.equal(result.message_id, undefined);
    for (const reader of ['repo-a/claude', 'repo-a/codex']) {
      const [message, ...rest] = await ctx.bus.readInbox({ reader, via: 'read_inbox' });
      assert.equal(rest.length, 0);
      assert.equal(message?.to, reader);
      assert.equal(message?.kind, 'group');
      assert.equal(message?.addressed_to, 'repo-a');
    }
    assert.deepEqual(await ctx.bus.readInbox({ reader: 'repo-b/claude', via: 'read_inbox' }), []);
  });

conformance('a repo-wide send skips its sender; one recipient gets message_id', async (ctx) => {
    await ctx.register(['repo-a/claude', 'repo-a/codex']);
    const result = await ctx.bus.send({ from: 'repo-a/claude', to: 'repo-a', body: 'hi' });
    assert.deepEqual(result.recipients, ['repo-a/codex']);
    assert.equal(result.message_id, result.message_ids[0]);
  });

conformance('a group with nobody else in it is not an error and writes nothing', async (ctx) => {
    await ctx.register(['repo-a/claude']);
    const result = await ctx.bus.send({ from: 'repo-a/claude', to: 'repo-a', body: 'anyone?' });
    assert.equal(result.kind, 'group');
    assert.deepEqual(result.recipients, []);
    assert.deepEqual(result.message_ids, []);
    assert.deepEqual(ops(ctx), []);
  });

conformance('full names, client addresses and single bare agents are direct', async (ctx) => {
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
  });

conformance('a legacy bare-name agent is a member of its repo', async (ctx) => {
    await ctx.register(['repo-a', 'repo-a/claude', 'repo-a/codex', 'human']);
    const result = await ctx.bus.send({ from: 'human', to: 'repo-a', body: 'x' });
    assert.equal(result.kind, 'group');
    assert.deepEqual(result.recipients, ['repo-a', 'repo-a/claude', 'repo-a/codex']);
  });

conformance('* reaches everyone but the sender, one copy per client with sessions', async (ctx) => {
    await ctx.register(['repo-a/claude-1', 'repo-a/claude-2', 'repo-b/codex', 'alpha', 'human']);
    const result = await ctx.bus.send({ from: 'alpha', to: '*', body: 'hello all' });
    assert.equal(result.kind, 'broadcast');
    assert.deepEqual(result.recipients, ['human', 'repo-a/claude', 'repo-b/codex']);
    assert.equal(result.message_id, undefined);
  });

conformance('an unknown recipient is an error with hints, and nothing is written', async (ctx) => {
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
    assert.equal(ctx.count('SELECT COUNT(*) AS n FROM messages'), 0);
    assert.equal(await ctx.store.getAgent('newbie'), null, 'the speaker registration rolled back too');
    assert.deepEqual(ops(ctx), []);
  });

conformance('mail to a bare repo name nobody holds is taken by its first reader only', async (ctx) => {
    await ctx.register(['repo-a', 'repo-a/claude', 'repo-a/codex', 'human']);
    await ctx.bus.send({ from: 'human', to: 'repo-a', body: 'to the old name' });
    await ctx.bus.send({ from: 'human', to: '*', body: 'broadcast' });
    // The bare agent is retired (as init does on upgrade): its copies wait for the repo.
    await ctx.bus.forget('repo-a').catch(() => undefined);
    ctx.paths.sql("DELETE FROM agents WHERE name = 'repo-a'");
    const counts = new Map((await ctx.bus.agents()).map((agent) => [agent.name, agent.pending_count]));
    const claude = await ctx.bus.readInbox({ reader: 'repo-a/claude', markRead: false, via: null });
    assert.equal(counts.get('repo-a/claude'), claude.length, 'roster counts match what a read returns');
    const first = await ctx.bus.readInbox({ reader: 'repo-a/claude', via: 'read_inbox' });
    // Its own two copies; the retired name's copies of the same sends are never shown twice.
    assert.deepEqual(first.map((message) => message.body).sort(), ['broadcast', 'to the old name']);
    const second = await ctx.bus.readInbox({ reader: 'repo-a/codex', via: 'read_inbox' });
    assert.deepEqual(second.map((message) => message.body).sort(), ['broadcast', 'to the old name']);
    assert.equal(ctx.count("SELECT COUNT(*) AS n FROM messages WHERE to_agent = 'repo-a' AND read_at IS NULL"), 2, 'each fan-out reached each member once; the orphan copies are not delivered again');
  });

conformance('an old-style row to a bare repo name is drained by exactly one member', async (ctx) => {
    await ctx.register(['repo-a/claude', 'repo-a/codex']);
    ctx.paths.sql(
      `INSERT INTO messages (message_id, from_agent, to_agent, body, thread_id, sent_at)
       VALUES ('legacy-1', 'repo-b', 'repo-a', 'from an older agent-bus', 't-1', '2026-01-01T00:00:00.000000Z')`,
    );
    const before = new Map((await ctx.bus.agents()).map((agent) => [agent.name, agent.pending_count]));
    assert.equal(before.get('repo-a/claude'), 1);
    assert.equal(before.get('repo-a/codex'), 1);
    assert.equal((await ctx.bus.readInbox({ reader: 'repo-a/codex', via: 'read_inbox' }))[0]?.message_id, 'legacy-1');
    assert.deepEqual(await ctx.bus.readInbox({ reader: 'repo-a/claude', via: 'read_inbox' }), []);
  });

conformance('bare-repo mail stays put while an agent holds that exact name', async (ctx) => {
    await ctx.register(['repo-a', 'repo-a/claude']);
    await ctx.bus.send({ from: 'repo-a/claude', to: 'repo-a', body: 'for the legacy agent' });
    assert.deepEqual(await ctx.bus.readInbox({ reader: 'repo-a/claude', via: 'read_inbox' }), []);
    assert.equal((await ctx.bus.readInbox({ reader: 'repo-a', via: 'read_inbox' })).length, 1);
  });

conformance('idle clients are skipped only when a fresher repo-mate exists', async (ctx) => {
    await ctx.register(['repo-a/claude', 'repo-a/codex', 'repo-b/claude', 'human']);
    await ageAgent(ctx, 'repo-a/codex', 30);
    assert.deepEqual((await ctx.bus.send({ from: 'human', to: 'repo-a', body: 'x' })).recipients, ['repo-a/claude']);
    assert.deepEqual((await ctx.bus.send({ from: 'human', to: '*', body: 'x' })).recipients, ['repo-a/claude', 'repo-b/claude']);
    assert.deepEqual((await ctx.bus.send({ from: 'human', to: 'repo-a/codex', body: 'direct' })).recipients, ['repo-a/codex']);
    await ageAgent(ctx, 'repo-a/claude', 20);
    assert.deepEqual((await ctx.bus.send({ from: 'human', to: 'repo-a', body: 'x' })).recipients, ['repo-a/claude', 'repo-a/codex']);
  });

conformance(
  'AGENT_BUS_FANOUT_MAX_IDLE_DAYS=0 skips nobody',
  async (ctx) => {
    await ctx.register(['repo-a/claude', 'repo-a/codex', 'human']);
    await ageAgent(ctx, 'repo-a/codex', 300);
    assert.deepEqual((await ctx.bus.send({ from: 'human', to: 'repo-a', body: 'x' })).recipients, ['repo-a/claude', 'repo-a/codex']);
  },
  { AGENT_BUS_FANOUT_MAX_IDLE_DAYS: '0' },
);

conformance(
  'a smaller AGENT_BUS_FANOUT_MAX_IDLE_DAYS skips sooner',
  async (ctx) => {
    await ctx.register(['repo-a/claude', 'repo-a/codex', 'human']);
    await ageAgent(ctx, 'repo-a/codex', 3);
    assert.deepEqual((await ctx.bus.send({ from: 'human', to: 'repo-a', body: 'x' })).recipients, ['repo-a/claude']);
  },
  { AGENT_BUS_FANOUT_MAX_IDLE_DAYS: '2' },
);

conformance('the first reader of a repo claims it for every copy there, audited once', async (ctx) => {
    await ctx.register(['repo-a/claude', 'repo-a/codex', 'human']);
    await ctx.bus.send({ from: 'human', to: 'repo-a', body: 'please bump' });
    const [mine] = await ctx.bus.readInbox({ reader: 'repo-a/codex', via: 'read_inbox' });
    assert.equal(mine?.claimed_by, 'repo-a/codex');
    const [theirs] = await ctx.bus.readInbox({ reader: 'repo-a/claude', via: 'read_inbox' });
    assert.equal(theirs?.claimed_by, 'repo-a/codex');
    const claims = readAudit(ctx.paths.audit).filter((row) => row.op === 'claim');
    assert.equal(claims.length, 1);
    assert.deepEqual([claims[0]?.actor, claims[0]?.to, claims[0]?.addressed_to], ['repo-a/codex', 'repo-a/codex', 'repo-a']);
  });

conformance('direct mail is never claimed and peeking claims nothing', async (ctx) => {
    await ctx.register(['repo-a/claude', 'repo-a/codex', 'human']);
    await ctx.bus.send({ from: 'human', to: 'repo-a/claude', body: 'direct' });
    await ctx.bus.send({ from: 'human', to: 'repo-a', body: 'group' });
    const peeked = await ctx.bus.readInbox({ reader: 'repo-a/claude', markRead: false, via: null });
    assert.equal(peeked.length, 2);
    assert.ok(peeked.every((message) => message.claimed_by === null && message.read_at === null));
    const [group] = await ctx.bus.readInbox({ reader: 'repo-a/codex', via: 'read_inbox' });
    assert.equal(group?.claimed_by, 'repo-a/codex', 'the next real reader claims');
    const read = await ctx.bus.readInbox({ reader: 'repo-a/claude', via: 'read_inbox' });
    assert.equal(read.find((message) => message.kind === 'direct')?.claimed_by, null);
  });

conformance('a broadcast is claimed once per repo', async (ctx) => {
    await ctx.register(['repo-a/claude', 'repo-a/codex', 'repo-b/claude', 'repo-b/codex', 'human']);
    await ctx.bus.send({ from: 'human', to: '*', body: 'all hands' });
    assert.equal((await ctx.bus.readInbox({ reader: 'repo-a/codex', via: 'read_inbox' }))[0]?.claimed_by, 'repo-a/codex');
    assert.equal((await ctx.bus.readInbox({ reader: 'repo-b/claude', via: 'read_inbox' }))[0]?.claimed_by, 'repo-b/claude');
    assert.equal((await ctx.bus.readInbox({ reader: 'repo-a/claude', via: 'read_inbox' }))[0]?.claimed_by, 'repo-a/codex');
    assert.equal((await ctx.bus.readInbox({ reader: 'repo-b/codex', via: 'read_inbox' }))[0]?.claimed_by, 'repo-b/claude');
    assert.deepEqual((await ctx.bus.readInbox({ reader: 'human', via: 'read_inbox' })).length, 0, 'never back to the sender');
  });

conformance('an actionable-only read leaves a repo-mate-claimed copy for a later full read', async (ctx) => {
    await ctx.register(['repo-a/claude', 'repo-a/codex', 'human']);
    await ctx.bus.send({ from: 'human', to: 'repo-a', body: 'group' });
    await ctx.bus.send({ from: 'human', to: 'repo-a/claude', body: 'direct' });
    await ctx.bus.readInbox({ reader: 'repo-a/codex', via: 'read_inbox' });
    const actionable = await ctx.bus.readInbox({ reader: 'repo-a/claude', actionableOnly: true, via: 'read_inbox' });
    assert.deepEqual(actionable.map((message) => message.body), ['direct']);
    assert.equal(await ctx.bus.pendingCount('repo-a/claude'), 1);
    const rest = await ctx.bus.readInbox({ reader: 'repo-a/claude', via: 'read_inbox' });
    assert.deepEqual(rest.map((message) => [message.body, message.claimed_by]), [['group', 'repo-a/codex']]);
  });

conformance('a lone agent claims silently: the audit shows only send and read', async (ctx) => {
    await ctx.register(['repo-a/claude', 'human']);
    await ctx.bus.send({ from: 'human', to: '*', body: 'solo' });
    const [message] = await ctx.bus.readInbox({ reader: 'repo-a/claude', via: 'read_inbox' });
    assert.equal(message?.claimed_by, 'repo-a/claude');
    assert.deepEqual(ops(ctx), ['send', 'read']);
  });

conformance('a session takes mail sent to its client address, never its own', async (ctx) => {
    await ctx.register(['repo-a/claude-1', 'repo-a/claude-2', 'human']);
    await ctx.bus.send({ from: 'human', to: 'repo-a/claude', body: 'any claude' });
    await ctx.bus.send({ from: 'repo-a/claude-1', to: 'repo-a/claude', body: 'from a sibling' });
    const first = await ctx.bus.readInbox({ reader: 'repo-a/claude-1', via: 'read_inbox' });
    assert.deepEqual(first.map((message) => message.body), ['any claude']);
    const second = await ctx.bus.readInbox({ reader: 'repo-a/claude-2', via: 'read_inbox' });
    assert.deepEqual(second.map((message) => message.body), ['from a sibling']);
  });

conformance('threads: a send starts one, replies keep it, it reads back in order', async (ctx) => {
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
  });

conformance(
  'bodies over the size cap and empty bodies are refused, nothing written',
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
      assert.equal(ctx.count('SELECT COUNT(*) AS n FROM messages'), 1);
    },
    { AGENT_BUS_MAX_BODY_BYTES: '100' },
  );

conformance('audit rows: keys in order, compact, a preview and the body hash', async (ctx) => {
    await ctx.register(['alpha', 'beta', 'gamma']);
    const body = `${'x'.repeat(250)} ünïcode`;
    await ctx.bus.send({ from: 'alpha', to: '*', body });
    await ctx.bus.readInbox({ reader: 'beta', deliver: true, via: 'read_inbox' });
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

conformance('forget keeps history and refuses a bare repo name with members', async (ctx) => {
    await ctx.register(['repo-a/claude', 'repo-a/codex', 'alpha']);
    await ctx.bus.send({ from: 'alpha', to: 'repo-a/codex', body: 'x' });
    const result = await ctx.bus.forget('repo-a/codex');
    assert.deepEqual(result, { name: 'repo-a/codex', removed: true, pending: 1 });
    assert.deepEqual((await ctx.bus.send({ from: 'alpha', to: 'repo-a', body: 'y' })).recipients, ['repo-a/claude']);
    await assert.rejects(ctx.bus.send({ from: 'alpha', to: 'repo-a/codex', body: 'z' }), UnknownRecipientError);
    await assert.rejects(ctx.bus.forget('repo-a'), /'repo-a' is a repo with 1 agent\(s\): repo-a\/claude.*forget --group repo-a/);
    assert.deepEqual(await ctx.bus.forgetGroup('repo-a'), ['repo-a/claude']);
    assert.equal(ctx.count('SELECT COUNT(*) AS n FROM messages'), 2);
  });

conformance('sends made together commit together; a failing one undoes only itself', async (ctx) => {
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
    assert.equal(ctx.count('SELECT COUNT(*) AS n FROM messages'), 1 + 2 + 300);
    const beta = await ctx.bus.readInbox({ reader: 'beta', limit: 1000, via: 'read_inbox' });
    assert.deepEqual(beta.slice(0, 3).map((message) => message.body), ['first', 'third', 'burst 0']);
    assert.equal(beta.at(-1)?.body, 'burst 299', 'a burst reads back in the order it was sent');
    assert.equal(readAudit(ctx.paths.audit).filter((row) => row.op === 'send').length, 303);
  });

conformance('mail a hook has taken is leased: nobody else takes it until it is shown or given back', async (ctx) => {
    await ctx.register(['repo-a/claude', 'human']);
    await ctx.bus.send({ from: 'human', to: 'repo-a/claude', body: 'leased' });
    const seen: string[][] = [];
    const first = ctx.bus.deliverInbox({ reader: 'repo-a/claude', via: 'hook-user-prompt' }, (messages) => {
      seen.push(messages.map((message) => message.body));
      throw new Error('the client went away');
    });
    await assert.rejects(first, /the client went away/);
    assert.deepEqual(seen, [['leased']]);
    // Given back at once: the next turn shows it.
    await ctx.bus.deliverInbox({ reader: 'repo-a/claude', via: 'hook-user-prompt' }, (messages) => {
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
    assert.deepEqual(await ctx.bus.readInbox({ reader: 'repo-a/claude', via: 'read_inbox' }), [], 'a concurrent reader does not take leased mail');
    assert.equal(await ctx.bus.pendingCount('repo-a/claude'), 1, 'still pending');
    ctx.paths.sql("UPDATE messages SET lease_until = '2000-01-01T00:00:00.000000Z' WHERE body = 'second'");
    assert.deepEqual((await ctx.bus.readInbox({ reader: 'repo-a/claude', via: 'read_inbox' })).map((message) => message.body), ['second'], 'an expired lease frees it');
  });

// ---------------------------------------------------------------------------
// Fan-out is all or nothing, and claims hold across processes
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
  await assert.rejects(ctx.bus.send({ from: 'human', to: 'repo-a', body: 'all or nothing' }), /refused/);
  assert.equal(ctx.count('SELECT COUNT(*) AS n FROM messages'), 0, 'no copy was written');
  assert.ok(!ops(ctx).includes('send'), 'nothing was audited');
  const direct = await ctx.bus.send({ from: 'human', to: 'repo-a/claude', body: 'still works' });
  assert.equal(direct.recipients.length, 1);
});

for (const engine of ENGINES) {
  test(`${engine}: processes racing to read one repo's mail: each message is claimed exactly once`, async () => {
    const bus = tempBus({}, { engine });
    try {
      const join = (name: string) => runCliAsync(['send', 'joining', '--to', name], { env: { ...bus.env, AGENT_BUS_NAME: name, AGENT_BUS_REPO: '/repos/a' } });
      for (const name of ['repo-a/claude', 'repo-a/codex', 'repo-a/agy', 'repo-a/opencode']) await join(name);
      const readers = ['repo-a/claude', 'repo-a/codex', 'repo-a/agy', 'repo-a/opencode'];
      for (const reader of readers) await runCliAsync(['inbox', '--name', reader], { env: bus.env });
      const ROUNDS = 5;
      for (let round = 0; round < ROUNDS; round++) await runCliAsync(['send', `task ${round}`, '--to', 'repo-a'], { env: bus.env });
      const results = await Promise.all(readers.map((reader) => runCliAsync(['inbox', '--name', reader, '--json'], { env: bus.env })));
      const claimers = new Map<string, Set<string>>();
      for (const result of results) {
        for (const message of json<Array<{ body: string; claimed_by: string | null }>>(result)) {
          const set = claimers.get(message.body) ?? new Set<string>();
          if (message.claimed_by) set.add(message.claimed_by);
          claimers.set(message.body, set);
        }
      }
      assert.equal(claimers.size, ROUNDS, 'every reader saw every task');
      for (const [body, set] of claimers) assert.equal(set.size, 1, `${body}: one claimer named on every copy`);
      const rows = bus.rows<{ claimers: number; unclaimed: number }>(
        "SELECT COUNT(DISTINCT claimed_by) AS claimers, SUM(CASE WHEN claimed_by IS NULL THEN 1 ELSE 0 END) AS unclaimed FROM messages WHERE addressed_to = 'repo-a' GROUP BY fanout_id",
      );
      assert.equal(rows.length, ROUNDS);
      for (const row of rows) assert.deepEqual([Number(row.claimers), Number(row.unclaimed)], [1, 0]);
      assert.equal(readAudit(bus.audit).filter((row) => row.op === 'claim').length, ROUNDS, 'one claim audited per task');
    } finally {
      bus.cleanup();
    }
  });
}

// ---------------------------------------------------------------------------
// Sessions: claim, end, rename, give up, resume
// ---------------------------------------------------------------------------

/** Servers whose process has "ended", for the liveness judge below. */
const endedServers = new Set<number>();
const fakeLiveness: SessionLiveness = (row) => row.endedAt === null && !endedServers.has(row.serverPid);
let nextPid = 70_000;

function sessionRow(clientAddress: string, sessionKey: string | null, pid = nextPid++) {
  const stamp = nowStamp();
  return {
    serverPid: pid,
    serverStarted: `start-${pid}`,
    clientAddress,
    repoPath: '/repos/a',
    lineage: JSON.stringify([[pid + 100_000, `client-${pid}`, 'claude']]),
    sessionKey,
    bootId: null,
    pidNs: null,
    startedAt: stamp,
    lastSeen: stamp,
  };
}

async function claim(ctx: CoreBus, clientAddress: string, options: { sessionKey?: string | null; pinned?: string | null; pid?: number; resumeHours?: number } = {}) {
  const row = sessionRow(clientAddress, options.sessionKey ?? null, options.pid);
  const result = await ctx.bus.claimSession(
    { clientAddress, clientProcess: JSON.parse(row.lineage)[0], sessionKey: row.sessionKey, pinned: options.pinned ?? null },
    row,
    { nowMicros: nowMicros(), resumeHours: options.resumeHours ?? 1 },
  );
  return { ...result, key: keyOf(row), pid: row.serverPid };
}

conformance(
  'sessions: numbered in turn, a label on request, the lowest free number again after an end',
  async (ctx) => {
    await ctx.register(['human']);
    const one = await claim(ctx, 'repo-a/claude', { sessionKey: 's-1' });
    const two = await claim(ctx, 'repo-a/claude', { sessionKey: 's-2' });
    const docs = await claim(ctx, 'repo-a/claude', { sessionKey: 's-3', pinned: 'docs' });
    assert.deepEqual([one.name, two.name, docs.name], ['repo-a/claude-1', 'repo-a/claude-2', 'repo-a/claude-docs']);
    const agents = (await ctx.bus.agents('repo-a')).map((agent) => [agent.name, agent.kind, agent.live]);
    assert.deepEqual(agents, [
      ['repo-a/claude', 'client', null],
      ['repo-a/claude-1', 'session', true],
      ['repo-a/claude-2', 'session', true],
      ['repo-a/claude-docs', 'session', true],
    ]);
    // Mail for session 1 while it runs; then it ends: its numbered address is given up to the client address.
    await ctx.bus.send({ from: 'human', to: 'repo-a/claude-1', body: 'for number one' });
    await ctx.bus.endSession(one.key);
    assert.equal(await ctx.bus.getAgent('repo-a/claude-1'), null, 'the numbered name leaves the roster');
    const shared = await ctx.bus.readInbox({ reader: 'repo-a/claude', markRead: false, via: null });
    assert.deepEqual(shared.map((message) => [message.to, message.body]), [['repo-a/claude', 'for number one']], 'its unread mail moved to the client address');
    // A new session takes the lowest number that is neither held nor kept for an ended session's comeback…
    const again = await claim(ctx, 'repo-a/claude', { sessionKey: 's-4' });
    assert.equal(again.name, 'repo-a/claude-3');
    // …and with no resume window, the lowest number free.
    const lowest = await claim(ctx, 'repo-a/claude', { sessionKey: 's-5', resumeHours: 0 });
    assert.equal(lowest.name, 'repo-a/claude-1');
    const ended = readAudit(ctx.paths.audit).filter((row) => row.op === 'session').map((row) => String(row.body_preview));
    assert.ok(ended.some((text) => text.startsWith("session end: 'repo-a/claude-1' ended; 1 unread message(s) moved to 'repo-a/claude'")), ended.join(' | '));
  },
  {},
  fakeLiveness,
);

conformance(
  'sessions: a crashed session is found at the next claim, a labelled one keeps its mail, a resumed conversation gets its address back',
  async (ctx) => {
    await ctx.register(['human']);
    const docs = await claim(ctx, 'repo-a/claude', { sessionKey: 'conv-docs', pinned: 'docs' });
    const crashing = await claim(ctx, 'repo-a/claude', { sessionKey: 'conv-crash' });
    assert.equal(crashing.name, 'repo-a/claude-1');
    await ctx.bus.send({ from: 'human', to: 'repo-a/claude-docs', body: 'docs work' });
    await ctx.bus.send({ from: 'human', to: 'repo-a/claude-1', body: 'unfinished' });
    // The labelled session ends cleanly: its address and mail wait for the label.
    await ctx.bus.endSession(docs.key);
    assert.ok(await ctx.bus.getAgent('repo-a/claude-docs'), 'a label is kept');
    // Session 1 dies without saying so; the next claim finds it ended and gives its number up.
    endedServers.add(crashing.pid);
    const next = await claim(ctx, 'repo-a/claude', { sessionKey: 'conv-new' });
    assert.equal(next.name, 'repo-a/claude-2', 'the crashed number is still reserved for its comeback');
    assert.deepEqual((await ctx.bus.readInbox({ reader: 'repo-a/claude', markRead: false, via: null })).map((message) => message.body), ['unfinished'], 'its mail went to the client address');
    // The docs conversation comes back: same label, its mail still there.
    const resumed = await claim(ctx, 'repo-a/claude', { sessionKey: 'conv-docs' });
    assert.equal(resumed.name, 'repo-a/claude-docs');
    // Its own mail, and (a session reads its client address too) the mail the crashed session left there.
    assert.deepEqual((await ctx.bus.readInbox({ reader: 'repo-a/claude-docs', via: 'read_inbox' })).map((message) => message.body), ['docs work', 'unfinished']);
    // The crashed conversation resumes too: it gets its number back.
    const back = await claim(ctx, 'repo-a/claude', { sessionKey: 'conv-crash' });
    assert.equal(back.name, 'repo-a/claude-1');
  },
  {},
  fakeLiveness,
);

conformance(
  'sessions: a rename moves the unread mail and keeps the topic; a label held by a running session is refused',
  async (ctx) => {
    await ctx.register(['human']);
    const first = await claim(ctx, 'repo-a/codex', { sessionKey: 'thread-1' });
    const second = await claim(ctx, 'repo-a/codex', { sessionKey: 'thread-2' });
    await ctx.bus.setTopic(first.name, 'login form');
    await ctx.bus.send({ from: 'human', to: first.name, body: 'about the login form' });
    const renamed = await ctx.bus.renameSession(first.key, 'frontend');
    assert.equal(renamed, 'repo-a/codex-frontend');
    assert.equal(await ctx.bus.getAgent(first.name), null);
    assert.equal((await ctx.bus.getAgent(renamed))?.topic, 'login form', 'the topic moved with it');
    assert.deepEqual((await ctx.bus.readInbox({ reader: renamed, via: 'read_inbox' })).map((message) => message.body), ['about the login form']);
    await assert.rejects(ctx.bus.renameSession(second.key, 'frontend'), /held by another running session/);
    const audit = readAudit(ctx.paths.audit).filter((row) => row.op === 'session').map((row) => String(row.body_preview));
    assert.ok(audit.includes("session rename: 'repo-a/codex-1' is now 'repo-a/codex-frontend'; 1 unread message(s) moved"), audit.join(' | '));
  },
  {},
  fakeLiveness,
);

conformance(
  'sessions held over a hub: one address per session id, found again and noted as heard from; a local claim judged by the process table never takes one for a process that has gone',
  async (ctx) => {
    const first = await ctx.bus.hubSession('repo-a/codex', '/repos/a', 'thread-1', 1);
    assert.equal(first.name, 'repo-a/codex-1');
    const [row] = await ctx.store.sessionRows('repo-a/codex');
    assert.equal(row?.bootId, 'hub');
    assert.equal(row?.serverPid, 0);
    // Heard from again later: the same address, and its row noted as seen then.
    const old = '2026-01-01T00:00:00.000000Z';
    await ctx.store.touchSession(first.key, old);
    assert.equal((await ctx.store.sessionRows('repo-a/codex'))[0]?.lastSeen, row?.lastSeen, 'a touch never moves last_seen back');
    assert.equal((await ctx.bus.hubSession('repo-a/codex', '/repos/a', 'thread-1', 1)).name, 'repo-a/codex-1');
    // A server of this process claims beside it: the hub's row has no process, and is not ended for it.
    const table = systemProcessTable();
    const me = { ...sessionRow('repo-a/codex', 'thread-local', process.pid), serverStarted: table.get(process.pid)?.started ?? '', bootId: table.bootId(), pidNs: table.pidNamespace(), lineage: '[]' };
    const local = await ctx.bus.claimSession({ clientAddress: 'repo-a/codex', clientProcess: null, sessionKey: 'thread-local', pinned: null }, me, { nowMicros: nowMicros(), resumeHours: 1 });
    assert.equal(local.name, 'repo-a/codex-2');
    assert.deepEqual((await ctx.bus.agents('repo-a')).map((agent) => [agent.name, agent.live]), [
      ['repo-a/codex', null],
      ['repo-a/codex-1', true],
      ['repo-a/codex-2', true],
    ]);
    assert.equal((await ctx.bus.hubSession('repo-a/codex', '/repos/a', 'thread-2', 1)).name, 'repo-a/codex-3');
  },
  { AGENT_BUS_HUB_SESSION_IDLE_MINUTES: '5' },
);

// ---------------------------------------------------------------------------
// Notices: publish, cap, due-ness, rotation, receipts, acknowledge
// ---------------------------------------------------------------------------

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
    const expiring = await ctx.bus.notices.publish({ channel: 'd', message: 'soon gone' });
    ctx.paths.sql(`UPDATE notices SET expires_at = '2000-01-01T00:00:00.000000Z' WHERE notice_id = '${expiring.notice_id}'`);
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
    const start = Date.now();
    while (seen.size < 7 && Date.now() - start < 10_000) {
      for (const body of await due(ctx, 'pre-tool', 's-1', ['ops'], { AGENT_BUS_NOTICES_PER_TURN: '3' })) seen.add(body);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    assert.equal(seen.size, 7, `every critical notice was shown in turn: ${[...seen].join(', ')}`);
  },
);

// ---------------------------------------------------------------------------
// The brain's reconcile, counters, the wake rate limit
// ---------------------------------------------------------------------------

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
  const entry = (message: string, priority = 5) => buildNotice({ channel: 'brain', message, priority, source: 'brain-adapter' });
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
  assert.equal(await ctx.bus.brain.takeMarker('m-1', 's', nowStamp()), true);
  assert.equal(await ctx.bus.brain.takeMarker('m-1', 's', nowStamp()), false, 'a marker is taken once');
});

conformance('counters count across connections; the wake rate limit holds within its hour', async (ctx) => {
  const other = openStore(ctx.paths.db, { connectTimeoutMs: 5000 });
  try {
    assert.equal(await ctx.bus.brain.countToolCall('s-1', nowStamp()), 1);
    assert.equal(await other.tick('s-1', 'tool_calls', nowStamp()), 2);
    assert.equal(await ctx.bus.brain.countToolCall('s-1', nowStamp()), 3);
    assert.equal(await ctx.bus.brain.countToolCall('s-2', nowStamp()), 1);
    const micros = nowMicros();
    const results = [];
    for (let index = 0; index < 3; index++) results.push(await ctx.bus.wakes.take('repo-a/claude', micros + index, 2));
    assert.deepEqual(results, [true, true, false], 'two wakes an hour');
    assert.equal(await ctx.bus.wakes.take('repo-a/codex', micros, 2), true, 'per agent');
    assert.equal(await ctx.bus.wakes.take('repo-a/claude', micros + 3_600_000_001, 2), true, 'an hour later it may wake again');
    assert.equal(await ctx.bus.wakes.take('repo-a/claude', micros, 0), true, '0: no limit');
  } finally {
    await other.close();
  }
});

// ---------------------------------------------------------------------------
// Migrations with concurrent starters
// ---------------------------------------------------------------------------

conformance('messages by position: each stored takes a greater one; past a position, and at positions asked for, in order', async (ctx) => {
  await ctx.register(['shop/claude', 'shop/codex']);
  const store = openStore(ctx.paths.db, { connectTimeoutMs: 5000 });
  try {
    await ctx.bus.send({ from: 'shop/claude', to: 'shop/codex', body: 'one' });
    const afterOne = await store.lastPosition();
    assert.ok(afterOne > 0);
    await ctx.bus.send({ from: 'shop/codex', to: 'shop/claude', body: 'two' });
    await ctx.bus.send({ from: 'shop/claude', to: 'shop/codex', body: 'three' });
    const all = await store.messagesByPosition(0, [], 100);
    assert.deepEqual(all.map((row) => row.body), ['one', 'two', 'three']);
    assert.ok(all.every((row, index) => index === 0 || row.position > (all[index - 1]?.position ?? 0)), 'positions increase');
    assert.equal(all[0]?.position, afterOne);
    assert.equal(await store.lastPosition(), all[2]?.position);
    const [one, two, three] = all.map((row) => row.position) as [number, number, number];
    assert.deepEqual((await store.messagesByPosition(two, [], 100)).map((row) => row.body), ['three']);
    assert.deepEqual((await store.messagesByPosition(three, [one], 100)).map((row) => row.body), ['one'], 'a position asked for again');
    assert.deepEqual((await store.messagesByPosition(0, [], 2)).map((row) => row.body), ['one', 'two'], 'at most the limit');
    assert.deepEqual(await store.messagesByPosition(three, [], 100), []);
  } finally {
    await store.close();
  }
});

conformance('sends arriving in ticks of their own while a batch commits all land, each once, in one resolved promise each', async (ctx) => {
  await ctx.register(['shop/claude', 'shop/codex']);
  const sends: Array<Promise<unknown>> = [];
  for (let wave = 0; wave < 20; wave++) {
    // A hub's requests: each in an I/O tick of its own, some while an earlier batch is being written.
    await new Promise((resolve) => setImmediate(resolve));
    for (let i = 0; i < 5; i++) sends.push(ctx.bus.send({ from: 'shop/claude', to: 'shop/codex', body: `wave ${wave} send ${i}` }));
  }
  const results = await Promise.all(sends);
  assert.equal(results.length, 100);
  assert.equal(ctx.count("SELECT COUNT(*) AS n FROM messages WHERE body LIKE 'wave %'"), 100);
  assert.equal(ctx.count("SELECT COUNT(DISTINCT body) AS n FROM messages WHERE body LIKE 'wave %'"), 100);
  const inbox = await ctx.bus.readInbox({ reader: 'shop/codex', markRead: false, limit: 1000, via: null });
  assert.equal(inbox.length, 100);
});

conformance('tokens: made with their agent on the roster, found by id, revoked by id or agent, a use noted at most once a minute', async (ctx) => {
  const clock = { now: Date.parse('2026-12-01T10:00:00Z') };
  const tokens = new Tokens(ctx.store, () => clock.now);
  const made = await tokens.create({ agent: 'shop/claude', repoPath: null, expiresInMs: 60_000, scopes: 'metrics' });
  clock.now += 1; // Listed in the order made.
  const other = await tokens.create({ agent: 'shop/claude', repoPath: '/srv/shop', expiresInMs: null, scopes: '' });
  assert.ok((await ctx.bus.getAgent('shop/claude')) !== null, 'the agent is on the roster');
  const checked = await tokens.check(made.token);
  assert.ok(checked.ok);
  assert.equal(checked.token.agent, 'shop/claude');
  assert.equal(checked.token.lastUsedAt, null, 'the record as it was before this use');
  const noted = (await tokens.list()).find((row) => row.tokenId === made.record.tokenId);
  assert.equal(noted?.lastUsedAt, '2026-12-01T10:00:00.001000Z');
  clock.now += 30_000;
  await tokens.check(made.token);
  assert.equal((await ctx.store.tokenById(made.record.tokenId))?.lastUsedAt, '2026-12-01T10:00:00.001000Z', 'not noted again within the minute');
  assert.deepEqual(await tokens.check(made.token.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'))), { ok: false, reason: 'unknown' });
  assert.deepEqual(await tokens.check('abt_0000000000000000_' + 'A'.repeat(43)), { ok: false, reason: 'unknown' });
  assert.deepEqual(await tokens.check('Bearer x'), { ok: false, reason: 'malformed' });
  clock.now += 30_000;
  assert.deepEqual(await tokens.check(made.token), { ok: false, reason: 'expired' });
  assert.deepEqual(await tokens.revoke(other.record.tokenId), [other.record.tokenId]);
  assert.deepEqual(await tokens.check(other.token), { ok: false, reason: 'revoked' });
  assert.deepEqual(await tokens.revoke('shop/claude'), [made.record.tokenId], 'only those not revoked yet');
  assert.deepEqual(await tokens.revoke('shop/claude'), []);
  const listed = await tokens.list();
  assert.deepEqual(listed.map((row) => [row.repoPath, row.scopes, row.revokedAt !== null]), [['shop', 'metrics', true], ['/srv/shop', '', true]]);
  assert.ok(listed.every((row) => /^[0-9a-f]{64}$/.test(row.secretHash) && !made.token.includes(row.secretHash)));
});

// ---------------------------------------------------------------------------
// The change feed
// ---------------------------------------------------------------------------

conformance('every kind of write another connection commits moves a waiting feed on', async (ctx) => {
  const writer = openStore(ctx.paths.db, { connectTimeoutMs: 5000 });
  const reader = openStore(ctx.paths.db, { connectTimeoutMs: 5000 });
  const feed = reader.changes();
  try {
    const now = nowStamp();
    const route = { threadId: 't-1', agent: 'shop/codex', client: 'codex', executable: 'codex', clientPid: 1, clientStarted: 'x', repoPath: '/repos/shop', updatedAt: now, turnState: 'idle' as const };
    const writes: Array<[string, () => Promise<unknown>]> = [
      ['register', () => writer.register([{ name: 'shop/codex', repoPath: '/repos/shop', groupName: 'shop', client: 'codex', authoritative: true }], now)],
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

test('both engines carry the same schema version', () => {
  assert.equal(POSTGRES_VERSION, SQLITE_VERSION);
});

for (const engine of ENGINES) {
  test(`${engine}: processes starting together on a new database migrate it once`, async () => {
    const bus = tempBus({}, { engine, emptyDatabase: true });
    try {
      const starters = Array.from({ length: 6 }, () =>
        new Promise<{ code: number | null; stderr: string }>((resolve) => {
          const child = spawn(process.execPath, [CLI, 'agents', '--json'], { env: bus.env, stdio: ['ignore', 'pipe', 'pipe'] });
          let stderr = '';
          child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
          child.on('close', (code) => resolve({ code, stderr }));
        }),
      );
      for (const started of await Promise.all(starters)) assert.equal(started.code, 0, started.stderr);
      if (engine === 'postgres') {
        assert.deepEqual(bus.rows('SELECT version FROM agent_bus_schema'), [{ version: POSTGRES_VERSION }], 'one version row, at the target');
      } else {
        assert.deepEqual(bus.rows('PRAGMA user_version'), [{ user_version: SQLITE_VERSION }]);
      }
      // Every table the steps create is there, once.
      const tables = engine === 'postgres'
        ? bus.rows<{ name: string }>("SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename")
        : bus.rows<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name");
      for (const table of ['agents', 'messages', 'sessions', 'notices', 'notice_receipts', 'brain_state', 'session_counters', 'brain_markers', 'wakes', 'watchers', 'client_routes']) {
        assert.ok(tables.some((row) => row.name === table), `${table} exists`);
      }
    } finally {
      bus.cleanup();
    }
  });
}

test('postgres: a database from a newer schema epoch is refused with exit 3', () => {
  const bus = tempBus({}, { engine: 'postgres', emptyDatabase: true });
  try {
    const seeded = runCli(['agents'], { env: bus.env });
    assert.equal(seeded.code, 0, seeded.stderr);
    bus.sql('UPDATE agent_bus_schema SET version = 2001');
    const refused = runCli(['send', 'hi', '--to', '*'], { env: bus.env });
    assert.equal(refused.code, 3, refused.stderr);
    assert.match(refused.stderr, /^agent-bus: this database was written by a newer agent-bus \(schema 2001; this one knows \d+\)\. Upgrade agent-bus to use it\.\n$/);
    assert.equal(bus.rows('SELECT name FROM agents').length, 0, 'nothing was written');
  } finally {
    bus.cleanup();
  }
});

conformance('the dashboard pages threads newest first, a fan-out counted as one send', async (ctx) => {
  await ctx.register(['repo-a/claude', 'repo-a/codex', 'human']);
  const first = await ctx.bus.send({ from: 'human', to: 'repo-a/claude', body: 'first thread' });
  const second = await ctx.bus.send({ from: 'human', to: 'repo-a', body: 'second thread, to the repo' });
  await ctx.bus.send({ from: 'repo-a/claude', to: 'human', body: 'reply in the first', threadId: first.thread_id });
  await ctx.bus.readInbox({ reader: 'repo-a/claude', via: 'read_inbox' });
  const page = await ctx.bus.threadPage(null, 10);
  assert.deepEqual(page.threads.map((thread) => thread.threadId), [first.thread_id, second.thread_id]);
  assert.equal(page.next, null);
  const [one, two] = page.threads;
  assert.deepEqual([one?.sends, one?.copies, one?.unread, one?.last.from, one?.last.to, one?.last.preview], [2, 2, 1, 'repo-a/claude', 'human', 'reply in the first']);
  // The repo-wide send reached both clients (two copies, one send); claude's read claimed it, and codex's copy stays unread.
  assert.deepEqual([two?.sends, two?.copies, two?.unread, two?.last.to], [1, 2, 1, 'repo-a']);
  const firstPage = await ctx.bus.threadPage(null, 1);
  assert.deepEqual(firstPage.threads.map((thread) => thread.threadId), [first.thread_id]);
  assert.notEqual(firstPage.next, null);
  const secondPage = await ctx.bus.threadPage(firstPage.next, 1);
  assert.deepEqual(secondPage.threads.map((thread) => thread.threadId), [second.thread_id]);
  const { sends, truncated } = await ctx.bus.threadView(second.thread_id as string);
  assert.equal(truncated, false);
  assert.equal(sends.length, 1);
  assert.deepEqual([sends[0]?.claimedBy, sends[0]?.copyCount, sends[0]?.readCount], ['repo-a/claude', 2, 1]);
  assert.deepEqual(sends[0]?.copies.map((copy) => [copy.to, copy.claimedBy, copy.readAt !== null]).sort(), [
    ['repo-a/claude', 'repo-a/claude', true],
    ['repo-a/codex', 'repo-a/claude', false],
  ]);
  // A thread with newer mail is on the first page only: the second page skips it though older mail of it is there.
  const older = await ctx.bus.threadPage(page.threads.find((thread) => thread.threadId === first.thread_id)?.lastPosition ?? null, 10);
  assert.deepEqual(older.threads.map((thread) => thread.threadId), [second.thread_id]);
  assert.deepEqual((await ctx.bus.threadView(first.thread_id as string)).sends.map((send) => [send.from, send.body, send.copies[0]?.readAt !== null]), [
    ['human', 'first thread', true],
    ['repo-a/claude', 'reply in the first', false],
  ]);
});

conformance('the dashboard counts the last day of mail by hour and by sender and address', async (ctx) => {
  await ctx.register(['repo-a/claude', 'repo-a/codex', 'human']);
  const old = await ctx.bus.send({ from: 'human', to: 'repo-a/claude', body: 'two days old' });
  const earlier = await ctx.bus.send({ from: 'human', to: 'repo-a/codex', body: 'three hours old' });
  await ctx.bus.send({ from: 'human', to: '*', body: 'to everyone' });
  await ctx.bus.send({ from: 'repo-a/claude', to: 'human', body: 'answer' });
  const micros = nowMicros();
  ctx.paths.sql(`UPDATE messages SET sent_at = '${formatStamp(micros - 48 * 3_600_000_000)}' WHERE message_id = '${old.message_ids[0]}'`);
  ctx.paths.sql(`UPDATE messages SET sent_at = '${formatStamp(micros - 3 * 3_600_000_000)}' WHERE message_id = '${earlier.message_ids[0]}'`);
  const day = await ctx.bus.mailDay();
  assert.equal(day.hours.length, 24);
  assert.equal(day.hours.reduce((sum, hour) => sum + hour.sends, 0), 3, 'the broadcast counts once, the two-day-old send not at all');
  assert.equal(day.hours.at(-1)?.hour, formatStamp(micros).slice(0, 13));
  assert.equal(day.hours.at(-1)?.sends, 2);
  assert.equal(day.hours.at(-4)?.sends, 1);
  assert.deepEqual(
    day.pairs.map((pair) => `${pair.from}>${pair.to}:${pair.sends}`).sort(),
    ['human>*:1', 'human>repo-a/codex:1', 'repo-a/claude>human:1'],
  );
});

conformance('search finds words, "phrases" and prefixes the same on both engines, each send once, newest first, as each reader may see it', async (ctx) => {
  await ctx.register(['repo-a/claude', 'repo-a/codex', 'repo-b/claude', 'human', 'maria']);
  const send = async (from: string, to: string, body: string, threadId?: string): Promise<string> => {
    const sent = await ctx.bus.send({ from, to, body, ...(threadId ? { threadId } : {}) });
    return sent.message_ids[0] as string;
  };
  const find = async (query: string, options: { reader?: string | null; from?: string; to?: string; thread?: string; since?: string } = {}): Promise<string[]> =>
    (await ctx.bus.search({ query, reader: options.reader ?? null, ...options })).map((hit) => hit.snippet.map((part) => part.text).join(''));
  const m1 = await send('human', 'repo-a/claude', 'please review the login form before merge');
  const thread = (await ctx.bus.recentMessages(1))[0]?.thread_id as string;
  await send('repo-a/claude', 'human', 'reviewed: the login form looks fine', thread);
  await send('human', 'repo-a', 'deploy freeze until the release');
  await send('repo-b/claude', 'maria', 'the deployment to staging failed');
  await send('maria', 'repo-b/claude', 'Login Form redesign ships Friday');
  await send('repo-a/codex', 'repo-a/claude', 'a form for login is missing');

  assert.deepEqual(await find('login form'), ['a form for login is missing', 'Login Form redesign ships Friday', 'reviewed: the login form looks fine', 'please review the login form before merge']);
  assert.deepEqual(await find('"login form"'), ['Login Form redesign ships Friday', 'reviewed: the login form looks fine', 'please review the login form before merge']);
  // A fan-out to the repo is one result, found by a prefix like the word it starts.
  assert.deepEqual(await find('deploy*'), ['the deployment to staging failed', 'deploy freeze until the release']);
  assert.deepEqual(await find('deploy'), ['deploy freeze until the release']);
  // Who sees what: a reader's own mail and its repo's; a person's own mail only.
  assert.deepEqual(await find('login', { reader: 'repo-b/claude' }), ['Login Form redesign ships Friday']);
  assert.deepEqual(await find('login', { reader: 'repo-a/codex' }), ['a form for login is missing', 'reviewed: the login form looks fine', 'please review the login form before merge']);
  assert.deepEqual(await find('login', { reader: 'human' }), ['reviewed: the login form looks fine', 'please review the login form before merge']);
  assert.deepEqual(await find('deploy', { reader: 'repo-a/codex' }), ['deploy freeze until the release']);
  // Filters.
  assert.deepEqual(await find('login', { from: 'repo-a' }), ['a form for login is missing', 'reviewed: the login form looks fine']);
  assert.deepEqual(await find('deploy*', { to: 'repo-a' }), ['deploy freeze until the release']);
  assert.deepEqual(await find('login', { thread: thread.slice(0, 8) }), ['reviewed: the login form looks fine', 'please review the login form before merge']);
  ctx.paths.sql(`UPDATE messages SET sent_at = '${formatStamp(nowMicros() - 3 * 86_400_000_000)}' WHERE message_id = '${m1}'`);
  assert.deepEqual(await find('review*', { since: '1d' }), ['reviewed: the login form looks fine']);
  // Mail stored after a search is found by the next; mail removed is found no more.
  await send('repo-b/claude', 'repo-a/codex', 'a brand new login flow');
  assert.deepEqual((await find('login')).slice(0, 1), ['a brand new login flow']);
  ctx.paths.sql("DELETE FROM messages WHERE body = 'a brand new login flow'");
  assert.deepEqual((await find('brand new')), []);
  // A hit says who wrote to whom, in which thread, and where it matched.
  const [hit] = await ctx.bus.search({ query: 'staging', reader: null });
  assert.deepEqual([hit?.from, hit?.to, hit?.snippet.filter((part) => part.match).map((part) => part.text)], ['repo-b/claude', 'maria', ['staging']]);
});

// ---------------------------------------------------------------------------
// Receipts: each copy sent, then delivered, then read, each step with its time and way
// ---------------------------------------------------------------------------

conformance('receipts: a read records read and delivered with its way; a model\'s peek records delivered only, once', async (ctx) => {
  await ctx.register(['repo-a/claude', 'human']);
  const id = (await ctx.bus.send({ from: 'human', to: 'repo-a/claude', body: 'look at this' })).message_id as string;
  const copy = async () => (await ctx.bus.messageStatus(id, null)).copies[0];
  assert.deepEqual(await copy(), { message_id: id, to: 'repo-a/claude', state: 'sent', claimed_by: null, delivered_at: null, delivered_via: null, read_at: null, read_via: null });
  // A look nobody is shown (the watcher's count) records nothing.
  await ctx.bus.readInbox({ reader: 'repo-a/claude', markRead: false, via: null });
  assert.equal((await copy())?.state, 'sent');
  const [peeked] = await ctx.bus.readInbox({ reader: 'repo-a/claude', markRead: false, via: 'read_inbox' });
  assert.deepEqual([peeked?.delivered_via, peeked?.read_at], ['read_inbox', null], 'the peek answers with the receipt it made');
  const delivered = await copy();
  assert.deepEqual([delivered?.state, delivered?.delivered_via, delivered?.read_at], ['delivered', 'read_inbox', null]);
  await ctx.bus.readInbox({ reader: 'repo-a/claude', markRead: false, via: 'read_inbox' });
  assert.equal((await copy())?.delivered_at, delivered?.delivered_at, 'a second showing keeps the first delivery');
  const [read] = await ctx.bus.readInbox({ reader: 'repo-a/claude', via: 'inbox' });
  assert.deepEqual([read?.read_via, read?.delivered_via, read?.delivered_at], ['inbox', 'read_inbox', delivered?.delivered_at]);
  const after = await copy();
  assert.deepEqual([after?.state, after?.read_via, after?.delivered_via, after?.delivered_at], ['read', 'inbox', 'read_inbox', delivered?.delivered_at]);
  const rows = readAudit(ctx.paths.audit).filter((row) => row.message_id === id).map((row) => `${String(row.op)}:${String(row.via ?? '')}`);
  assert.deepEqual(rows, ['send:', 'deliver:read_inbox', 'read:inbox']);
  assert.deepEqual(ctx.paths.rows(`SELECT delivered_via, read_via FROM messages WHERE message_id = '${id}'`), [{ delivered_via: 'read_inbox', read_via: 'inbox' }], 'stored, not only answered');
});

conformance('receipts: a hook records its way only once it has shown the mail; one that fails to show records nothing', async (ctx) => {
  await ctx.register(['repo-a/claude', 'human']);
  const id = (await ctx.bus.send({ from: 'human', to: 'repo-a/claude', body: 'stop and read' })).message_id as string;
  await assert.rejects(
    ctx.bus.deliverInbox({ reader: 'repo-a/claude', via: 'hook-stop' }, async (messages) => {
      assert.equal(messages.length, 1);
      assert.equal((await ctx.bus.messageStatus(id, null)).state, 'sent', 'taken for showing is not delivered yet');
      throw new Error('the hook died before printing');
    }),
    /died/,
  );
  assert.equal((await ctx.bus.messageStatus(id, null)).state, 'sent');
  const shown = await ctx.bus.deliverInbox({ reader: 'repo-a/claude', via: 'hook-stop' }, () => undefined);
  assert.deepEqual([shown[0]?.delivered_via, shown[0]?.read_via], ['hook-stop', 'hook-stop']);
  const [copy] = (await ctx.bus.messageStatus(id, null)).copies;
  assert.deepEqual([copy?.state, copy?.delivered_via, copy?.read_via, copy?.delivered_at === copy?.read_at], ['read', 'hook-stop', 'hook-stop', true]);
});

conformance('receipts: a fan-out is one send, named by any copy, its fan-out id or the start of one; its state is the least advanced copy', async (ctx) => {
  await ctx.register(['repo-a/claude', 'repo-a/codex', 'repo-b/claude', 'human']);
  const sent = await ctx.bus.send({ from: 'human', to: 'repo-a', body: 'release at five' });
  const fanout = sent.fanout_id as string;
  assert.ok(fanout);
  const byCopy = await ctx.bus.messageStatus(sent.message_ids[1] as string, null);
  for (const id of [sent.message_ids[0] as string, fanout, fanout.slice(0, 8)]) assert.deepEqual(await ctx.bus.messageStatus(id, null), byCopy, id);
  assert.deepEqual([byCopy.fanout_id, byCopy.to, byCopy.kind, byCopy.recipients, byCopy.state], [fanout, 'repo-a', 'group', 2, 'sent']);
  assert.deepEqual(byCopy.copies.map((copy) => copy.to), ['repo-a/claude', 'repo-a/codex']);
  await ctx.bus.deliverInbox({ reader: 'repo-a/claude', via: 'hook-user-prompt' }, () => undefined);
  let status = await ctx.bus.messageStatus(fanout, null);
  assert.deepEqual([status.state, status.delivered, status.read], ['sent', 1, 1], 'one copy read: the send is not delivered until both are');
  assert.equal(status.copies[0]?.claimed_by, 'repo-a/claude');
  // The dashboard draws the thread for repo-a/codex's person: delivered, not read.
  const thread = await ctx.bus.threadView(sent.thread_id as string, { reader: 'repo-a/codex', via: 'web' });
  assert.equal(thread.sends[0]?.copies.find((copy) => copy.to === 'repo-a/codex')?.deliveredVia, 'web');
  status = await ctx.bus.messageStatus(fanout, null);
  assert.deepEqual([status.state, status.delivered, status.read, status.copies[1]?.delivered_via], ['delivered', 2, 1, 'web']);
  await ctx.bus.readInbox({ reader: 'repo-a/codex', via: 'read_inbox' });
  status = await ctx.bus.messageStatus(fanout, null);
  assert.deepEqual([status.state, status.read, status.copies[1]?.read_via, status.copies[1]?.delivered_via], ['read', 2, 'read_inbox', 'web']);
  // Who may ask: the sender and the recipients (a session through its client address); nobody else learns it exists.
  assert.equal((await ctx.bus.messageStatus(fanout, 'human')).recipients, 2);
  assert.equal((await ctx.bus.messageStatus(fanout, 'repo-a/codex')).recipients, 2);
  assert.equal((await ctx.bus.messageStatus(fanout, 'repo-a/codex-2')).recipients, 2, 'a session of a recipient client address');
  await assert.rejects(ctx.bus.messageStatus(fanout, 'repo-b/claude'), (error: Error) => error.name === 'NoSuchMessageError' && /that 'repo-b\/claude' sent or received/.test(error.message));
  await assert.rejects(ctx.bus.messageStatus(fanout.slice(0, 8), 'repo-b/claude'), /no message/, 'not by a prefix either');
  await assert.rejects(ctx.bus.messageStatus('no-such-id', null), (error: Error) => error.name === 'NoSuchMessageError');
  // Two sends whose ids start alike: the start is not enough, and the error names them.
  const one = (await ctx.bus.send({ from: 'human', to: 'repo-b/claude', body: 'first' })).message_id as string;
  const two = (await ctx.bus.send({ from: 'human', to: 'repo-b/claude', body: 'second' })).message_id as string;
  let shared = 0;
  while (one[shared] === two[shared]) shared++;
  assert.ok(shared >= 4, 'time-ordered ids made together share their start');
  await assert.rejects(ctx.bus.messageStatus(one.slice(0, shared), null), (error: Error) => error instanceof InvalidInputError && error.message.includes(one) && error.message.includes(two));
  assert.equal((await ctx.bus.messageStatus(one.slice(0, 30), null)).message_id, one, 'enough of it names one');
});

conformance('receipts: a read that settles a copy at the client address records it with the same way', async (ctx) => {
  await ctx.register(['repo-a/claude', 'repo-a/claude-1', 'human']);
  // An older sender addressed both the session and its client address: reading one settles the other.
  for (const [id, to] of [['both-1', 'repo-a/claude'], ['both-2', 'repo-a/claude-1']]) {
    ctx.paths.sql(
      `INSERT INTO messages (message_id, from_agent, to_agent, body, thread_id, sent_at, addressed_to, fanout_id, to_group)
       VALUES ('${id}', 'human', '${to}', 'to both', 't-both', '${nowStamp()}', 'repo-a', 'fan-both', 'repo-a')`,
    );
  }
  await ctx.bus.readInbox({ reader: 'repo-a/claude-1', via: 'read_inbox' });
  const status = await ctx.bus.messageStatus('fan-both', null);
  assert.deepEqual(status.copies.map((copy) => [copy.to, copy.state, copy.read_via]), [['repo-a/claude', 'read', 'read_inbox'], ['repo-a/claude-1', 'read', 'read_inbox']]);
});

conformance('receipts: a sender waiting hears each move another process makes, and gives up at its timeout', async (ctx) => {
  await ctx.register(['repo-a/claude', 'human']);
  const id = (await ctx.bus.send({ from: 'human', to: 'repo-a/claude', body: 'wait for me' })).message_id as string;
  const timedOut = await ctx.bus.awaitReceipts(id, null, 'delivered', 300);
  assert.deepEqual([timedOut.reached, timedOut.status.state], [false, 'sent']);
  // Another process (a store of its own on the same database) shows the mail, then reads it.
  const other = openStore(ctx.paths.db, { connectTimeoutMs: 5000 });
  try {
    const moves: string[] = [];
    const waiting = ctx.bus.awaitReceipts(id, 'human', 'read', 30_000, (status) => moves.push(status.state));
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.deepEqual(await other.recordDelivered([id], nowStamp(), 'web'), [id]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const reader = { name: 'repo-a/claude', group: 'repo-a', clientAddress: 'repo-a/claude', isSession: false };
    await other.readInbox({ query: { reader, limit: 10, actionableOnly: false, now: nowStamp() }, decide: (rows, copies) => decideTake(rows, copies, reader), via: 'hook-user-prompt' });
    const outcome = await waiting;
    assert.deepEqual([outcome.reached, outcome.status.state, outcome.status.copies[0]?.read_via], [true, 'read', 'hook-user-prompt']);
    assert.deepEqual(moves, ['delivered', 'read'], 'each move heard as it happened');
    assert.deepEqual(await other.recordDelivered([id], nowStamp(), 'web'), [], 'delivered already: nothing marked');
  } finally {
    await other.close();
  }
});

/** Send direct mail and return its id. */
async function sendMail(ctx: CoreBus, from: string, to: string, body: string): Promise<string> {
  return (await ctx.bus.send({ from, to, body })).message_ids[0] as string;
}

/** The ids a search finds, newest first. */
async function found(ctx: CoreBus, query: string, reader: string | null, limit?: number): Promise<string[]> {
  return (await ctx.bus.search({ query, reader, ...(limit === undefined ? {} : { limit }) })).map((hit) => hit.message_id);
}

conformance("a reader's search finds its own and its repo's mail whether its repo has much mail and few matches or little mail among many", async (ctx) => {
  await ctx.register(['repo-a/claude', 'repo-a/codex', 'repo-b/claude', 'repo-b/codex', 'repo-c/claude', 'human']);
  const routine: string[] = [];
  for (let index = 0; index < 30; index++) routine.push(await sendMail(ctx, 'repo-a/claude', 'repo-a/codex', `routine sync ${index}`));
  const toA = await sendMail(ctx, 'human', 'repo-a/codex', 'a zebra for repo-a');
  const toB: string[] = [];
  for (let index = 0; index < 30; index++) toB.push(await sendMail(ctx, 'repo-b/claude', 'repo-b/codex', `zebra chatter ${index}`));
  const fromA = await sendMail(ctx, 'repo-a/codex', 'repo-b/claude', 'a zebra from repo-a');
  toB.push(fromA);
  for (let index = 0; index < 10; index++) toB.push(await sendMail(ctx, 'human', 'repo-b/codex', `routine zebra ${index}`));
  const toC = await sendMail(ctx, 'repo-b/codex', 'repo-c/claude', 'routine for repo-c');

  // Much mail in the reader's repo, two of it matching among many matches elsewhere.
  assert.deepEqual(await found(ctx, 'zebra', 'repo-a/claude'), [fromA, toA]);
  assert.deepEqual(await found(ctx, 'zebra', 'repo-b/claude', 500), [...toB].reverse());
  // A word in most mail, and a reader with one message of it; a limit keeps the newest.
  assert.deepEqual(await found(ctx, 'routine', 'repo-c/claude'), [toC]);
  assert.deepEqual(await found(ctx, 'routine', 'repo-a/codex', 3), routine.slice(-3).reverse());
  assert.deepEqual(await found(ctx, 'routine zebra', null, 500), toB.slice(-10).reverse());
  // A person finds what was sent by or to them alone, not the mail of a repo that has their name.
  await ctx.register(['ops', 'ops/claude']);
  await sendMail(ctx, 'ops/claude', 'repo-a/codex', 'a zebra from the ops repo');
  const fromOps = await sendMail(ctx, 'ops', 'repo-b/codex', 'a zebra from ops');
  assert.deepEqual(await found(ctx, 'zebra', 'ops'), [fromOps]);
  // Mail to the repo reaches an agent filed under it by its repo column alone (an older roster's row).
  await ctx.register(['legacy/bot']);
  ctx.paths.sql("UPDATE agents SET group_name = 'repo-d' WHERE name = 'legacy/bot'");
  await ctx.bus.send({ from: 'human', to: 'repo-d', body: 'a zebra for everyone in repo-d' });
  const [toRepoD] = await found(ctx, 'zebra', null);
  assert.deepEqual(await found(ctx, 'zebra', 'repo-d/claude'), [toRepoD]);
});

conformance('a prefix finds every word it starts: a few, more than SQLite looks up one by one, none, and beyond ASCII', async (ctx) => {
  await ctx.register(['repo-a/claude', 'repo-a/codex', 'repo-b/claude', 'human']);
  const deploys = [
    await sendMail(ctx, 'human', 'repo-a/claude', 'deploy now'),
    await sendMail(ctx, 'human', 'repo-a/codex', 'deployed it'),
    await sendMail(ctx, 'repo-a/claude', 'human', 'deploying soon'),
    await sendMail(ctx, 'repo-b/claude', 'human', 'the deployment broke'),
  ];
  await sendMail(ctx, 'human', 'repo-a/claude', 'an unrelated note');
  const waves = Array.from({ length: 40 }, (_, index) => `wave${String(index).padStart(2, '0')}`);
  const early = await sendMail(ctx, 'human', 'repo-a/claude', waves.slice(0, 20).join(' '));
  const late = await sendMail(ctx, 'human', 'repo-b/claude', waves.slice(20).join(' '));
  const cafes = [await sendMail(ctx, 'human', 'repo-a/codex', 'café au lait'), await sendMail(ctx, 'repo-a/codex', 'human', 'two cafés downtown')];

  assert.deepEqual(await found(ctx, 'deploy*', null), [...deploys].reverse());
  assert.deepEqual(await found(ctx, 'deploy*', 'repo-a/codex'), deploys.slice(0, 3).reverse());
  assert.deepEqual(await found(ctx, 'deployi*', null), [deploys[2]]);
  assert.deepEqual(await found(ctx, 'deploy* now', null), [deploys[0]]);
  assert.deepEqual(await found(ctx, 'wave*', null), [late, early]);
  assert.deepEqual(await found(ctx, 'wave*', 'repo-a/claude'), [early]);
  assert.deepEqual(await found(ctx, 'wave3*', null), [late]);
  assert.deepEqual(await found(ctx, 'zzz*', null), []);
  assert.deepEqual(await found(ctx, 'zzz* deploy', null), []);
  assert.deepEqual(await found(ctx, 'caf*', null), [...cafes].reverse());
  assert.deepEqual(await found(ctx, 'café*', 'repo-a/claude'), [...cafes].reverse());
});

/** What a search ran to index new mail before the index held each message's parties: bodies alone. */
const INDEXING_BEFORE_PARTIES = {
  sqlite: `INSERT INTO message_search (rowid, body) SELECT rowid, body FROM messages WHERE rowid > (SELECT position FROM search_index WHERE name = 'messages');
    INSERT OR REPLACE INTO search_index (name, position) VALUES ('messages', COALESCE((SELECT MAX(rowid) FROM messages), 0));`,
  postgres: `WITH indexed AS (SELECT position FROM search_index WHERE name = 'messages'),
      added AS (
        INSERT INTO message_search (seq, tsv)
        SELECT m.seq, to_tsvector('simple', m.body) FROM messages m
         WHERE m.seq > COALESCE((SELECT position FROM indexed), 0) - 1000
           AND NOT EXISTS (SELECT 1 FROM message_search s WHERE s.seq = m.seq)
        ON CONFLICT DO NOTHING
        RETURNING seq)
    UPDATE search_index SET position = GREATEST(position, COALESCE((SELECT MAX(seq) FROM added), 0)) WHERE name = 'messages'`,
};

conformance('mail an older agent-bus indexed, its bodies alone, is indexed again for a reader to find', async (ctx) => {
  await ctx.register(['repo-a/claude', 'repo-a/codex', 'repo-b/claude', 'human']);
  const first = await sendMail(ctx, 'human', 'repo-a/claude', 'the first zebra');
  assert.deepEqual(await found(ctx, 'zebra', 'repo-a/codex'), [first]);
  const second = await sendMail(ctx, 'repo-b/claude', 'repo-a/codex', 'the second zebra');
  const third = await sendMail(ctx, 'repo-b/claude', 'human', 'the third zebra, not for repo-a');
  ctx.paths.sql(INDEXING_BEFORE_PARTIES[ctx.engine]);
  assert.deepEqual(await found(ctx, 'zebra', 'repo-a/codex'), [second, first]);
  assert.deepEqual(await found(ctx, 'zebra', 'human'), [third, first]);
  assert.deepEqual(await found(ctx, 'zebra', null), [third, second, first]);
  // The index holds each message once: what the older agent-bus wrote is gone.
  const copies = await ctx.store.searchMessages(parseSearchQuery('zebra'), { visibleTo: null, from: null, to: null, thread: null, since: null, before: null }, 100);
  assert.deepEqual(copies.map((copy) => copy.messageId), [third, second, first]);
});

conformance('search: a bus whose mail is not indexed yet is indexed in batches, every message of it found', async (ctx) => {
  await ctx.register(['repo-a/claude', 'human']);
  const rows = 60_000;
  // Mail stored without the search's knowledge (as an upgrade finds it): more than one batch on either engine.
  ctx.paths.sql(
    ctx.engine === 'sqlite'
      ? `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${rows})
         INSERT INTO messages (message_id, from_agent, to_agent, body, thread_id, sent_at) SELECT 'bulk-' || i, 'human', 'repo-a/claude', 'filler number ' || i, 't-bulk', '2026-01-01T00:00:00.000000Z' FROM n`
      : `INSERT INTO messages (message_id, from_agent, to_agent, body, thread_id, sent_at) SELECT 'bulk-' || i, 'human', 'repo-a/claude', 'filler number ' || i, 't-bulk', '2026-01-01T00:00:00.000000Z' FROM generate_series(1, ${rows}) AS i`,
  );
  await ctx.bus.send({ from: 'human', to: 'repo-a/claude', body: 'the needle after the bulk' });
  const hits = await ctx.bus.search({ query: 'needle', reader: 'repo-a/claude' });
  assert.deepEqual(hits.map((hit) => hit.snippet.map((part) => part.text).join('')), ['the needle after the bulk']);
  assert.equal((await ctx.bus.search({ query: '"filler number 1"', reader: null })).length, 1, 'the first of the bulk');
  assert.equal((await ctx.bus.search({ query: `"number ${rows}"`, reader: 'repo-a/claude' })).length, 1, 'the last of the bulk');
  assert.equal(ctx.count('SELECT COUNT(*) AS n FROM message_search'), rows + 1, 'every message indexed once');
});

conformance('search: a broadcast to many is one result however many of its copies come first, and older mail is still found behind it', async (ctx) => {
  const agents = Array.from({ length: 40 }, (_, index) => `repo-${index}/claude`);
  await ctx.register([...agents, 'human']);
  await ctx.bus.send({ from: 'human', to: 'repo-1/claude', body: 'the older review request' });
  await ctx.bus.send({ from: 'human', to: 'repo-2/claude', body: 'a second review, older still than the broadcast' });
  await ctx.bus.send({ from: 'human', to: '*', body: 'review day for everyone' });
  const bodies = async (limit: number): Promise<string[]> =>
    (await ctx.bus.search({ query: 'review', reader: null, limit })).map((hit) => hit.snippet.map((part) => part.text).join(''));
  assert.deepEqual(await bodies(3), ['review day for everyone', 'a second review, older still than the broadcast', 'the older review request']);
  assert.deepEqual(await bodies(2), ['review day for everyone', 'a second review, older still than the broadcast']);
  assert.equal((await ctx.bus.search({ query: 'review', reader: 'repo-1/claude', limit: 5 })).length, 2, 'a reader pages too: the broadcast and its own');
});

conformance('search reads words the same on both engines: paths, branches, addresses, versions, snake_case, Unicode punctuation and case, emoji', async (ctx) => {
  await ctx.register(['repo-a/claude', 'human']);
  const bodies = [
    'merged feat/login into main',
    'mail bob@example.com about v1.2.3',
    'done\u2014thanks for the \u201cquick\u201d fix',
    'the snake_case_name and an x-ray',
    '\u00dcN\u00cfC\u00d6D\u00c9 CAF\u00c9 menu',
    'see /usr/local/bin/agent-bus for 3.14 details',
    'great\u{1f44d}thanks',
  ];
  const ids: string[] = [];
  for (const body of bodies) ids.push(await sendMail(ctx, 'human', 'repo-a/claude', body));
  const expected: Record<string, number[]> = {
    login: [0],
    '"feat login"': [0],
    'feat/login': [0],
    bob: [1],
    'example.com': [1],
    '"v1 2 3"': [1],
    thanks: [6, 2],
    quick: [2],
    '"thanks for the quick"': [2],
    snake: [3],
    '"case name"': [3],
    '"x ray"': [3],
    'caf\u00e9': [4],
    '\u00fcn\u00efc\u00f6d\u00e9': [4],
    'CAF\u00c9': [4],
    'caf*': [4],
    usr: [5],
    '"local bin agent bus"': [5],
    '14': [5],
    great: [6],
  };
  for (const [query, want] of Object.entries(expected)) {
    assert.deepEqual(await found(ctx, query, null), want.map((index) => ids[index]), `${query} on ${ctx.engine}`);
    assert.deepEqual(await found(ctx, query, 'repo-a/claude'), want.map((index) => ids[index]), `${query} as the reader on ${ctx.engine}`);
  }
});

test('postgres: mail the agent-bus before this one indexed, reading feat/login as one word, is indexed again and found by its parts', async () => {
  const ctx = await coreBus({}, 'postgres');
  try {
    await ctx.register(['repo-a/claude', 'human']);
    const id = await sendMail(ctx, 'human', 'repo-a/claude', 'merged feat/login into main');
    assert.deepEqual(await found(ctx, 'login', 'repo-a/claude'), [id]);
    // As that version left it: the body through the parser alone, its own marker, no 'words' mark.
    ctx.paths.sql(`UPDATE message_search s SET tsv = to_tsvector('simple', m.body) || array_to_tsvector(ARRAY['/ parties']) FROM messages m WHERE m.seq = s.seq;
      DELETE FROM search_index WHERE name = 'words'`);
    assert.equal(ctx.count(`SELECT COUNT(*) AS n FROM message_search WHERE tsv @@ to_tsquery('simple', 'login')`), 0, 'the old reading');
    assert.deepEqual(await found(ctx, 'login', 'repo-a/claude'), [id]);
    assert.deepEqual(await found(ctx, '"feat login"', null), [id]);
    assert.equal(ctx.count('SELECT COUNT(*) AS n FROM message_search'), 1);
  } finally {
    await ctx.close();
  }
});

conformance('search: pruned mail leaves the index with it, and what is kept is still found', async (ctx) => {
  await ctx.register(['repo-a/claude', 'human']);
  const old = await sendMail(ctx, 'human', 'repo-a/claude', 'an old zebra, read long ago');
  const kept = await sendMail(ctx, 'human', 'repo-a/claude', 'a new zebra, unread');
  assert.deepEqual(await found(ctx, 'zebra', null), [kept, old]);
  assert.equal(ctx.count('SELECT COUNT(*) AS n FROM message_search'), 2);
  const longAgo = formatStamp(nowMicros() - 40 * 86_400_000_000);
  ctx.paths.sql(`UPDATE messages SET sent_at = '${longAgo}', read_at = '${longAgo}' WHERE message_id = '${old}'`);
  const pruned = await ctx.store.prune({ mailBefore: formatStamp(nowMicros() - 30 * 86_400_000_000), now: nowStamp(), sessionsEndedBefore: longAgo, dryRun: false });
  assert.equal(pruned.messages, 1);
  assert.equal(ctx.count('SELECT COUNT(*) AS n FROM message_search'), 1, 'the pruned message is out of the index');
  assert.deepEqual(await found(ctx, 'zebra', null), [kept]);
});

test('postgres: an index row whose message is gone (an older agent-bus pruned it) goes at the next prune', async () => {
  const ctx = await coreBus({}, 'postgres');
  try {
    await ctx.register(['repo-a/claude', 'human']);
    const old = await sendMail(ctx, 'human', 'repo-a/claude', 'old mail');
    await found(ctx, 'mail', null);
    // The index keeps no key to messages (schema step 18): a row for no message can be there.
    ctx.paths.sql("INSERT INTO message_search (seq, tsv) VALUES (987654321, to_tsvector('simple', 'ghost'))");
    const longAgo = formatStamp(nowMicros() - 40 * 86_400_000_000);
    ctx.paths.sql(`UPDATE messages SET sent_at = '${longAgo}', read_at = '${longAgo}' WHERE message_id = '${old}'`);
    await ctx.store.prune({ mailBefore: formatStamp(nowMicros() - 30 * 86_400_000_000), now: nowStamp(), sessionsEndedBefore: longAgo, dryRun: false });
    assert.equal(ctx.count('SELECT COUNT(*) AS n FROM message_search'), 0);
  } finally {
    await ctx.close();
  }
});

/**
 * A writer that takes its position and is slow to commit ('the slow walrus'), while 3,000 messages
 * after it commit: returns its connection, in the open transaction, and its position.
 */
async function slowWriterBehindThousands(ctx: CoreBus): Promise<{ slow: pg.Client; position: number }> {
  const slow = new pg.Client({ connectionString: ctx.paths.db });
  await slow.connect();
  await slow.query('BEGIN');
  const inserted = await slow.query<{ seq: string }>(`INSERT INTO messages (message_id, from_agent, to_agent, body, thread_id, sent_at)
    VALUES ('slow-1', 'human', 'repo-a/claude', 'the slow walrus', 't-slow', '${nowStamp()}') RETURNING seq`);
  ctx.paths.sql(`INSERT INTO messages (message_id, from_agent, to_agent, body, thread_id, sent_at)
    SELECT 'quick-' || i, 'human', 'repo-a/claude', 'quick mail ' || i, 't-quick', '${nowStamp()}' FROM generate_series(1, 3000) AS i`);
  return { slow, position: Number(inserted.rows[0]?.seq) };
}

test('postgres: a message that commits after thousands with later positions is still found, by the background and by a search', async () => {
  const ctx = await coreBus({}, 'postgres');
  let slow: pg.Client | null = null;
  try {
    await ctx.register(['repo-a/claude', 'human']);
    ctx.store.keepSearchIndexCurrent();
    for (let index = 0; index < 3; index++) await ctx.bus.send({ from: 'human', to: 'repo-a/claude', body: `early mail ${index}` });
    assert.equal((await ctx.bus.search({ query: 'early', reader: null })).length, 3);
    const behind = await slowWriterBehindThousands(ctx);
    slow = behind.slow;
    const position = behind.position;
    for (let index = 0; index < 5; index++) await ctx.bus.send({ from: 'human', to: 'repo-a/claude', body: `a send to index ${index}` });
    assert.deepEqual(await found(ctx, 'walrus', null), [], 'not committed yet');
    await ctx.bus.send({ from: 'human', to: 'repo-a/claude', body: 'one more send, another round' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const mark = (): number => ctx.count("SELECT position AS n FROM search_index WHERE name = 'parties'");
    assert.ok(mark() >= 3 && mark() < position, `the mark (${mark()}) is past the early mail, not past the slow writer's position (${position})`);
    await slow.query('COMMIT');
    await ctx.bus.send({ from: 'human', to: 'repo-a/claude', body: 'a send after the slow one committed' });
    const deadline = Date.now() + 10_000;
    while (ctx.count(`SELECT COUNT(*) AS n FROM message_search s JOIN messages m ON m.seq = s.seq WHERE m.message_id = 'slow-1'`) === 0) {
      assert.ok(Date.now() < deadline, 'the background indexed the late message');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.equal((await ctx.bus.search({ query: 'walrus', reader: null })).length, 1);
    while (mark() < position) {
      assert.ok(Date.now() < deadline, 'the mark moves on past it');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    await slow?.end();
    await ctx.close();
  }
});

test('postgres: a search alone finds a message that committed after thousands with later positions', async () => {
  const ctx = await coreBus({}, 'postgres');
  let slow: pg.Client | null = null;
  try {
    await ctx.register(['repo-a/claude', 'human']);
    slow = (await slowWriterBehindThousands(ctx)).slow;
    assert.equal((await ctx.bus.search({ query: 'quick', reader: null, limit: 1 })).length, 1);
    await slow.query('COMMIT');
    assert.equal((await ctx.bus.search({ query: 'walrus', reader: null })).length, 1, 'the late message is found');
    assert.equal((await ctx.bus.search({ query: 'quick', reader: null, limit: 1 })).length, 1);
  } finally {
    await slow?.end();
    await ctx.close();
  }
});

test('postgres: two processes keeping the index current as they send index every message once, with no search, and close at once', async () => {
  const ctx = await coreBus({}, 'postgres');
  const other = openStore(ctx.paths.db, { connectTimeoutMs: 5000 });
  try {
    await ctx.register(['repo-a/claude', 'repo-b/claude']);
    ctx.store.keepSearchIndexCurrent();
    other.keepSearchIndexCurrent();
    const otherBus = new Bus(other, openAuditLog(ctx.paths.audit, ctx.paths.env), busSettings(ctx.paths.env), () => livenessFrom(systemProcessTable()));
    const burst = (bus: Bus, from: string, to: string) =>
      Promise.all(Array.from({ length: 8 }, async (_, sender) => {
        for (let index = 0; index < 60; index++) await bus.send({ from, to, body: `burst ${from} ${sender} ${index}` });
      }));
    await Promise.all([burst(ctx.bus, 'repo-a/claude', 'repo-b/claude'), burst(otherBus, 'repo-b/claude', 'repo-a/claude')]);
    const messages = ctx.count('SELECT COUNT(*) AS n FROM messages');
    assert.equal(messages, 960);
    const deadline = Date.now() + 20_000;
    while (ctx.count(`SELECT COUNT(*) AS n FROM message_search WHERE tsv @@ '''/ parties'''::tsquery`) < messages) {
      assert.ok(Date.now() < deadline, 'the background indexing caught up');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.equal(ctx.count('SELECT COUNT(*) AS n FROM message_search'), messages, 'each message once');
    // A round after the last that indexed anything moves the mark past it.
    while (ctx.count("SELECT position AS n FROM search_index WHERE name = 'parties'") < ctx.count('SELECT MAX(seq) AS n FROM messages')) {
      assert.ok(Date.now() < deadline, 'the mark moved past the last message');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await otherBus.send({ from: 'repo-b/claude', to: 'repo-a/claude', body: 'the last one, then close' });
    await otherBus.close();
    assert.equal((await ctx.bus.search({ query: 'burst', reader: null, limit: 500 })).length, 500);
    assert.equal((await ctx.bus.search({ query: 'last', reader: 'repo-a/claude' })).length, 1);
  } finally {
    await other.close();
    await ctx.close();
  }
});
