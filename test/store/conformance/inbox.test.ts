/**
 * The inbox port, on both engines: what a reader takes (its own mail, its client address, its
 * bare repo name), the repo-wide claim, leases, and readers racing across processes.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decideTake, LEASE_MICROS, newLease, readerIdentity } from '../../../src/core/inbox.js';
import { formatStamp, nowMicros, nowStamp } from '../../../src/model/clock.js';
import { json, readAudit, runCliAsync, tempBus } from '../../helpers/bus-env.js';
import { ENGINES, conformance, ops } from './harness.js';

conformance('mail to a bare repo name nobody holds is taken by its first reader only', async (ctx) => {
    await ctx.register(['repo-a', 'repo-a/claude', 'repo-a/codex', 'human']);
    await ctx.bus.mail.send({ from: 'human', to: 'repo-a', body: 'to the old name' });
    await ctx.bus.mail.send({ from: 'human', to: '*', body: 'broadcast' });
    // The bare agent is retired (as init does on upgrade): its copies wait for the repo.
    await ctx.bus.roster.forget('repo-a').catch(() => undefined);
    ctx.paths.sql("DELETE FROM agents WHERE name = 'repo-a'");
    const counts = new Map((await ctx.bus.roster.agents()).map((agent) => [agent.name, agent.pending_count]));
    const claude = await ctx.bus.inbox.read({ reader: 'repo-a/claude', markRead: false, via: null });
    assert.equal(counts.get('repo-a/claude'), claude.length, 'roster counts match what a read returns');
    const first = await ctx.bus.inbox.read({ reader: 'repo-a/claude', via: 'read_inbox' });
    // Its own two copies; the retired name's copies of the same sends are never shown twice.
    assert.deepEqual(first.map((message) => message.body).sort(), ['broadcast', 'to the old name']);
    const second = await ctx.bus.inbox.read({ reader: 'repo-a/codex', via: 'read_inbox' });
    assert.deepEqual(second.map((message) => message.body).sort(), ['broadcast', 'to the old name']);
    assert.equal(ctx.count("SELECT COUNT(*) AS n FROM messages WHERE to_agent = 'repo-a' AND read_at IS NULL"), 2, 'each fan-out reached each member once; the orphan copies are not delivered again');
  });

conformance('an old-style row to a bare repo name is drained by exactly one member', async (ctx) => {
    await ctx.register(['repo-a/claude', 'repo-a/codex']);
    ctx.paths.sql(
      `INSERT INTO messages (message_id, from_agent, to_agent, body, thread_id, sent_at)
       VALUES ('legacy-1', 'repo-b', 'repo-a', 'from an older agent-bus', 't-1', '2026-01-01T00:00:00.000000Z')`,
    );
    const before = new Map((await ctx.bus.roster.agents()).map((agent) => [agent.name, agent.pending_count]));
    assert.equal(before.get('repo-a/claude'), 1);
    assert.equal(before.get('repo-a/codex'), 1);
    assert.equal((await ctx.bus.inbox.read({ reader: 'repo-a/codex', via: 'read_inbox' }))[0]?.message_id, 'legacy-1');
    assert.deepEqual(await ctx.bus.inbox.read({ reader: 'repo-a/claude', via: 'read_inbox' }), []);
  });

conformance('bare-repo mail stays put while an agent holds that exact name', async (ctx) => {
    await ctx.register(['repo-a', 'repo-a/claude']);
    await ctx.bus.mail.send({ from: 'repo-a/claude', to: 'repo-a', body: 'for the legacy agent' });
    assert.deepEqual(await ctx.bus.inbox.read({ reader: 'repo-a/claude', via: 'read_inbox' }), []);
    assert.equal((await ctx.bus.inbox.read({ reader: 'repo-a', via: 'read_inbox' })).length, 1);
  });

conformance('the first reader of a repo claims it for every copy there, audited once', async (ctx) => {
    await ctx.register(['repo-a/claude', 'repo-a/codex', 'human']);
    await ctx.bus.mail.send({ from: 'human', to: 'repo-a', body: 'please bump' });
    const [mine] = await ctx.bus.inbox.read({ reader: 'repo-a/codex', via: 'read_inbox' });
    assert.equal(mine?.claimed_by, 'repo-a/codex');
    const [theirs] = await ctx.bus.inbox.read({ reader: 'repo-a/claude', via: 'read_inbox' });
    assert.equal(theirs?.claimed_by, 'repo-a/codex');
    const claims = readAudit(ctx.paths.audit).filter((row) => row.op === 'claim');
    assert.equal(claims.length, 1);
    assert.deepEqual([claims[0]?.actor, claims[0]?.to, claims[0]?.addressed_to], ['repo-a/codex', 'repo-a/codex', 'repo-a']);
  });

conformance('direct mail is never claimed and peeking claims nothing', async (ctx) => {
    await ctx.register(['repo-a/claude', 'repo-a/codex', 'human']);
    await ctx.bus.mail.send({ from: 'human', to: 'repo-a/claude', body: 'direct' });
    await ctx.bus.mail.send({ from: 'human', to: 'repo-a', body: 'group' });
    const peeked = await ctx.bus.inbox.read({ reader: 'repo-a/claude', markRead: false, via: null });
    assert.equal(peeked.length, 2);
    assert.ok(peeked.every((message) => message.claimed_by === null && message.read_at === null));
    const [group] = await ctx.bus.inbox.read({ reader: 'repo-a/codex', via: 'read_inbox' });
    assert.equal(group?.claimed_by, 'repo-a/codex', 'the next real reader claims');
    const read = await ctx.bus.inbox.read({ reader: 'repo-a/claude', via: 'read_inbox' });
    assert.equal(read.find((message) => message.kind === 'direct')?.claimed_by, null);
  });

conformance('a broadcast is claimed once per repo', async (ctx) => {
    await ctx.register(['repo-a/claude', 'repo-a/codex', 'repo-b/claude', 'repo-b/codex', 'human']);
    await ctx.bus.mail.send({ from: 'human', to: '*', body: 'all hands' });
    assert.equal((await ctx.bus.inbox.read({ reader: 'repo-a/codex', via: 'read_inbox' }))[0]?.claimed_by, 'repo-a/codex');
    assert.equal((await ctx.bus.inbox.read({ reader: 'repo-b/claude', via: 'read_inbox' }))[0]?.claimed_by, 'repo-b/claude');
    assert.equal((await ctx.bus.inbox.read({ reader: 'repo-a/claude', via: 'read_inbox' }))[0]?.claimed_by, 'repo-a/codex');
    assert.equal((await ctx.bus.inbox.read({ reader: 'repo-b/codex', via: 'read_inbox' }))[0]?.claimed_by, 'repo-b/claude');
    assert.deepEqual((await ctx.bus.inbox.read({ reader: 'human', via: 'read_inbox' })).length, 0, 'never back to the sender');
  });

conformance('an actionable-only read leaves a repo-mate-claimed copy for a later full read', async (ctx) => {
    await ctx.register(['repo-a/claude', 'repo-a/codex', 'human']);
    await ctx.bus.mail.send({ from: 'human', to: 'repo-a', body: 'group' });
    await ctx.bus.mail.send({ from: 'human', to: 'repo-a/claude', body: 'direct' });
    await ctx.bus.inbox.read({ reader: 'repo-a/codex', via: 'read_inbox' });
    const actionable = await ctx.bus.inbox.read({ reader: 'repo-a/claude', actionableOnly: true, via: 'read_inbox' });
    assert.deepEqual(actionable.map((message) => message.body), ['direct']);
    assert.equal(await ctx.bus.inbox.pending('repo-a/claude'), 1);
    const rest = await ctx.bus.inbox.read({ reader: 'repo-a/claude', via: 'read_inbox' });
    assert.deepEqual(rest.map((message) => [message.body, message.claimed_by]), [['group', 'repo-a/codex']]);
  });

conformance('a lone agent claims silently: the audit shows only send and read', async (ctx) => {
    await ctx.register(['repo-a/claude', 'human']);
    await ctx.bus.mail.send({ from: 'human', to: '*', body: 'solo' });
    const [message] = await ctx.bus.inbox.read({ reader: 'repo-a/claude', via: 'read_inbox' });
    assert.equal(message?.claimed_by, 'repo-a/claude');
    assert.deepEqual(ops(ctx), ['send', 'read']);
  });

conformance('a session takes mail sent to its client address, never its own', async (ctx) => {
    await ctx.register(['repo-a/claude-1', 'repo-a/claude-2', 'human']);
    await ctx.bus.mail.send({ from: 'human', to: 'repo-a/claude', body: 'any claude' });
    await ctx.bus.mail.send({ from: 'repo-a/claude-1', to: 'repo-a/claude', body: 'from a sibling' });
    const first = await ctx.bus.inbox.read({ reader: 'repo-a/claude-1', via: 'read_inbox' });
    assert.deepEqual(first.map((message) => message.body), ['any claude']);
    const second = await ctx.bus.inbox.read({ reader: 'repo-a/claude-2', via: 'read_inbox' });
    assert.deepEqual(second.map((message) => message.body), ['from a sibling']);
  });

conformance('mail a hook has taken is leased: nobody else takes it until it is shown or given back', async (ctx) => {
    await ctx.register(['repo-a/claude', 'human']);
    await ctx.bus.mail.send({ from: 'human', to: 'repo-a/claude', body: 'leased' });
    const seen: string[][] = [];
    const first = ctx.bus.inbox.deliver({ reader: 'repo-a/claude', via: 'hook-user-prompt' }, (messages) => {
      seen.push(messages.map((message) => message.body));
      throw new Error('the client went away');
    });
    await assert.rejects(first, /the client went away/);
    assert.deepEqual(seen, [['leased']]);
    // Given back at once: the next turn shows it.
    await ctx.bus.inbox.deliver({ reader: 'repo-a/claude', via: 'hook-user-prompt' }, (messages) => {
      seen.push(messages.map((message) => message.body));
    });
    assert.deepEqual(seen[1], ['leased']);
    await ctx.bus.mail.send({ from: 'human', to: 'repo-a/claude', body: 'second' });
    const reader = { name: 'repo-a/claude', repo: 'repo-a', clientAddress: 'repo-a/claude', isSession: false };
    const leasedAt = ctx.clock.nowMicros();
    const taken = await ctx.store.leaseInbox({
      query: { reader, limit: 10, actionableOnly: false, now: formatStamp(leasedAt) },
      decide: (rows, copies) => decideTake(rows, copies, reader),
      lease: newLease(leasedAt),
    });
    assert.deepEqual(taken.messages.map((message) => message.body), ['second']);
    assert.deepEqual(await ctx.bus.inbox.read({ reader: 'repo-a/claude', via: 'read_inbox' }), [], 'a concurrent reader does not take leased mail');
    assert.equal(await ctx.bus.inbox.pending('repo-a/claude'), 1, 'still pending');
    ctx.clock.advance(LEASE_MICROS / 1000 + 1);
    assert.deepEqual((await ctx.bus.inbox.read({ reader: 'repo-a/claude', via: 'read_inbox' })).map((message) => message.body), ['second'], 'an expired lease frees it');
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

conformance('pending mail counts leased mail too: in every part of the inbox, mail a hook is showing is still unread while no reader may take it', async (ctx) => {
  await ctx.register(['repo-a/claude-1', 'human']);
  await ctx.bus.mail.send({ from: 'human', to: 'repo-a/claude-1', body: 'its own' });
  await ctx.bus.mail.send({ from: 'human', to: 'repo-a/claude', body: 'at its client address' });
  // Mail to the bare repo name nobody holds (an older agent-bus wrote it so).
  ctx.paths.sql(
    `INSERT INTO messages (message_id, from_agent, to_agent, body, thread_id, sent_at)
     VALUES ('bare-1', 'human', 'repo-a', 'at its bare repo name', 't-bare', '${nowStamp()}')`,
  );
  const reader = readerIdentity('repo-a/claude-1');
  const query = { reader, limit: 10, actionableOnly: false, now: nowStamp() };
  assert.equal(await ctx.store.pendingCount(reader), 3);
  const taken = await ctx.store.leaseInbox({ query, decide: (rows, copies) => decideTake(rows, copies, reader), lease: newLease(nowMicros()) });
  assert.deepEqual(taken.messages.map((message) => message.body).sort(), ['at its bare repo name', 'at its client address', 'its own']);
  assert.deepEqual(await ctx.store.peekInbox({ ...query, now: nowStamp() }), [], 'leased: no reader may take it');
  assert.equal(await ctx.store.pendingCount(reader), 3, 'leased: still pending, in all three parts');
  assert.equal(await ctx.bus.inbox.pending('repo-a/claude-1'), 3);
  await ctx.bus.inbox.read({ reader: 'repo-a/claude-1', via: 'read_inbox' });
  assert.equal(await ctx.store.pendingCount(reader), 3, 'a read takes none of it');
});

conformance('urgent mail: a delivery of urgent mail only takes the urgent copies not claimed by a repo-mate, recorded as hook-pre-tool; plain mail waits', async (ctx) => {
  await ctx.register(['repo-a/claude', 'repo-a/codex', 'human']);
  await ctx.bus.mail.send({ from: 'human', to: 'repo-a/claude', body: 'plain' });
  const urgent = await ctx.bus.mail.send({ from: 'human', to: 'repo-a/claude', body: 'urgent direct', urgent: true });
  await ctx.bus.mail.send({ from: 'human', to: 'repo-a', body: 'urgent to the repo, taken by codex', urgent: true });
  await ctx.bus.inbox.read({ reader: 'repo-a/codex', via: 'read_inbox' });
  const shown: string[][] = [];
  const delivered = await ctx.bus.inbox.deliver({ reader: 'repo-a/claude', via: 'hook-pre-tool', urgentOnly: true }, (messages) => {
    shown.push(messages.map((message) => message.body));
  });
  assert.deepEqual(shown, [['urgent direct']]);
  assert.deepEqual(delivered.map((message) => [message.body, message.urgent, message.delivered_via, message.read_via]), [['urgent direct', true, 'hook-pre-tool', 'hook-pre-tool']]);
  const status = await ctx.bus.receipts.status(urgent.message_ids[0] as string, null);
  assert.equal(status.copies[0]?.delivered_via, 'hook-pre-tool');
  // The turn's end shows the rest: the plain mail, and the repo's copy as for information.
  const rest = await ctx.bus.inbox.read({ reader: 'repo-a/claude', via: 'hook-user-prompt' });
  assert.deepEqual(rest.map((message) => [message.body, message.urgent]), [['plain', false], ['urgent to the repo, taken by codex', true]]);
});

conformance('urgent mail: the mid-turn look finds unread mail for an agent, its sessions and its bare repo, urgent only when asked, and none for others', async (ctx) => {
  await ctx.register(['repo-a/claude', 'repo-a/claude-2', 'repo-a/claudette', 'repo-b/claude', 'human']);
  const look = (agent: string, urgentOnly: boolean): Promise<boolean> => ctx.bus.inbox.midTurnMailMayWait(agent, urgentOnly);
  assert.equal(await look('repo-a/claude', false), false);
  await ctx.bus.mail.send({ from: 'human', to: 'repo-a/claude', body: 'plain' });
  assert.equal(await look('repo-a/claude', false), true, 'plain mail counts when all mail is shown mid-turn');
  assert.equal(await look('repo-a/claude', true), false, 'plain mail is not urgent');
  // Urgent mail to a name that only shares a prefix, or in another repo, is not this agent's.
  await ctx.bus.mail.send({ from: 'human', to: 'repo-a/claudette', body: 'not yours', urgent: true });
  await ctx.bus.mail.send({ from: 'human', to: 'repo-b/claude', body: 'not yours either', urgent: true });
  assert.equal(await look('repo-a/claude', true), false);
  assert.equal(await look('repo-a/claudette', true), true);
  // Urgent mail to one of its session addresses: a session of the agent asks as the client address.
  await ctx.bus.mail.send({ from: 'human', to: 'repo-a/claude-2', body: 'to the second session', urgent: true });
  assert.equal(await look('repo-a/claude', true), true);
  assert.equal(await look('repo-a/claude-2', true), true);
  // Once read, it is looked for no more.
  await ctx.bus.inbox.read({ reader: 'repo-a/claude-2', via: 'read_inbox' });
  assert.equal(await look('repo-a/claude', true), false);
  // Urgent mail to the bare repo name nobody holds.
  ctx.paths.sql("INSERT INTO messages (message_id, from_agent, to_agent, body, thread_id, sent_at, priority) VALUES ('m-bare', 'human', 'repo-a', 'old style', 't-bare', '2026-12-01T00:00:00.000000Z', 'urgent')");
  assert.equal(await look('repo-a/claude', true), true);
});
