/**
 * The sessions port, on both engines: numbering, labels, ends, crashes, renames, resumes, and
 * sessions held over a hub.
 */
import assert from 'node:assert/strict';
import { nowMicros, nowStamp } from '../../../src/model/clock.js';
import { readAudit } from '../../helpers/bus-env.js';
import type { SessionLiveness } from '../../../src/core/liveness.js';
import { registrationsFor } from '../../../src/core/roster.js';
import { rowKeyOf } from '../../../src/core/sessions.js';
import { systemProcessTable } from '../../../src/adapters/procs.js';
import { conformance, type CoreBus } from './harness.js';

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
  const result = await ctx.bus.sessions.start(
    { clientAddress, clientProcess: JSON.parse(row.lineage)[0], sessionKey: row.sessionKey, pinned: options.pinned ?? null },
    row,
    { nowMicros: nowMicros(), resumeHours: options.resumeHours ?? 1 },
  );
  return { ...result, key: rowKeyOf(row), pid: row.serverPid };
}

conformance(
  'sessions: numbered in turn, a label on request, the lowest free number again after an end',
  async (ctx) => {
    await ctx.register(['human']);
    const one = await claim(ctx, 'repo-a/claude', { sessionKey: 's-1' });
    const two = await claim(ctx, 'repo-a/claude', { sessionKey: 's-2' });
    const docs = await claim(ctx, 'repo-a/claude', { sessionKey: 's-3', pinned: 'docs' });
    assert.deepEqual([one.name, two.name, docs.name], ['repo-a/claude-1', 'repo-a/claude-2', 'repo-a/claude-docs']);
    const agents = (await ctx.bus.roster.agents('repo-a')).map((agent) => [agent.name, agent.kind, agent.live]);
    assert.deepEqual(agents, [
      ['repo-a/claude', 'client', null],
      ['repo-a/claude-1', 'session', true],
      ['repo-a/claude-2', 'session', true],
      ['repo-a/claude-docs', 'session', true],
    ]);
    // Mail for session 1 while it runs; then it ends: its numbered address is given up to the client address.
    await ctx.bus.mail.send({ from: 'human', to: 'repo-a/claude-1', body: 'for number one' });
    await ctx.bus.sessions.end(one.key);
    assert.equal(await ctx.bus.roster.get('repo-a/claude-1'), null, 'the numbered name leaves the roster');
    const shared = await ctx.bus.inbox.read({ reader: 'repo-a/claude', markRead: false, via: null });
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
    await ctx.bus.mail.send({ from: 'human', to: 'repo-a/claude-docs', body: 'docs work' });
    await ctx.bus.mail.send({ from: 'human', to: 'repo-a/claude-1', body: 'unfinished' });
    // The labelled session ends cleanly: its address and mail wait for the label.
    await ctx.bus.sessions.end(docs.key);
    assert.ok(await ctx.bus.roster.get('repo-a/claude-docs'), 'a label is kept');
    // Session 1 dies without saying so; the next claim finds it ended and gives its number up.
    endedServers.add(crashing.pid);
    const next = await claim(ctx, 'repo-a/claude', { sessionKey: 'conv-new' });
    assert.equal(next.name, 'repo-a/claude-2', 'the crashed number is still reserved for its comeback');
    assert.deepEqual((await ctx.bus.inbox.read({ reader: 'repo-a/claude', markRead: false, via: null })).map((message) => message.body), ['unfinished'], 'its mail went to the client address');
    // The docs conversation comes back: same label, its mail still there.
    const resumed = await claim(ctx, 'repo-a/claude', { sessionKey: 'conv-docs' });
    assert.equal(resumed.name, 'repo-a/claude-docs');
    // Its own mail, and (a session reads its client address too) the mail the crashed session left there.
    assert.deepEqual((await ctx.bus.inbox.read({ reader: 'repo-a/claude-docs', via: 'read_inbox' })).map((message) => message.body), ['docs work', 'unfinished']);
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
    await ctx.bus.roster.setTopic(first.name, 'login form');
    await ctx.bus.mail.send({ from: 'human', to: first.name, body: 'about the login form' });
    const renamed = await ctx.bus.sessions.rename(first.key, 'frontend');
    assert.equal(renamed, 'repo-a/codex-frontend');
    assert.equal(await ctx.bus.roster.get(first.name), null);
    assert.equal((await ctx.bus.roster.get(renamed))?.topic, 'login form', 'the topic moved with it');
    assert.deepEqual((await ctx.bus.inbox.read({ reader: renamed, via: 'read_inbox' })).map((message) => message.body), ['about the login form']);
    await assert.rejects(ctx.bus.sessions.rename(second.key, 'frontend'), /held by another running session/);
    const audit = readAudit(ctx.paths.audit).filter((row) => row.op === 'session').map((row) => String(row.body_preview));
    assert.ok(audit.includes("session rename: 'repo-a/codex-1' is now 'repo-a/codex-frontend'; 1 unread message(s) moved"), audit.join(' | '));
  },
  {},
  fakeLiveness,
);

conformance(
  'sessions held over a hub: one address per session id, found again and noted as heard from; a local claim judged by the process table never takes one for a process that has gone',
  async (ctx) => {
    const first = await ctx.bus.sessions.hubSession('repo-a/codex', '/repos/a', 'thread-1', 1);
    assert.equal(first.name, 'repo-a/codex-1');
    const [row] = await ctx.store.sessionRows('repo-a/codex');
    assert.equal(row?.bootId, 'hub');
    assert.equal(row?.serverPid, 0);
    // Heard from again later: the same address, and its row noted as seen then.
    const old = '2026-01-01T00:00:00.000000Z';
    await ctx.store.touchSession(first.key, old);
    assert.equal((await ctx.store.sessionRows('repo-a/codex'))[0]?.lastSeen, row?.lastSeen, 'a touch never moves last_seen back');
    assert.equal((await ctx.bus.sessions.hubSession('repo-a/codex', '/repos/a', 'thread-1', 1)).name, 'repo-a/codex-1');
    // A server of this process claims beside it: the hub's row has no process, and is not ended for it.
    const table = systemProcessTable();
    const me = { ...sessionRow('repo-a/codex', 'thread-local', process.pid), serverStarted: table.get(process.pid)?.started ?? '', bootId: table.bootId(), pidNs: table.pidNamespace(), lineage: '[]' };
    const local = await ctx.bus.sessions.start({ clientAddress: 'repo-a/codex', clientProcess: null, sessionKey: 'thread-local', pinned: null }, me, { nowMicros: nowMicros(), resumeHours: 1 });
    assert.equal(local.name, 'repo-a/codex-2');
    assert.deepEqual((await ctx.bus.roster.agents('repo-a')).map((agent) => [agent.name, agent.live]), [
      ['repo-a/codex', null],
      ['repo-a/codex-1', true],
      ['repo-a/codex-2', true],
    ]);
    assert.equal((await ctx.bus.sessions.hubSession('repo-a/codex', '/repos/a', 'thread-2', 1)).name, 'repo-a/codex-3');
  },
  { AGENT_BUS_HUB_SESSION_IDLE_MINUTES: '5' },
);

conformance("a rename: the new name keeps a topic of its own, else takes the old name's; renamed away from the client address, the old name keeps its row, topic and mail", async (ctx) => {
  await ctx.register(['human', 'repo-a/codex-1', 'repo-a/codex-2', 'repo-a/codex-docs', 'repo-b/codex']);
  const topic = async (name: string) => (await ctx.store.getAgent(name))?.topic;
  // The store's part of a rename, as the core plans it (no session row is needed for the roster's part).
  const rename = (from: string, to: string, moveMail: boolean) =>
    ctx.store.renameSession({
      key: { serverPid: nextPid++, serverStarted: 'x', clientAddress: to.slice(0, to.lastIndexOf('-')) },
      to,
      now: nowStamp(),
      plan: () => ({ from, replace: [], moveMail, registrations: registrationsFor(to, '/repos/a', true) }),
    });
  await ctx.bus.roster.setTopic('repo-a/codex-1', 'the old name\'s');
  await ctx.bus.roster.setTopic('repo-a/codex-docs', 'its own');
  await ctx.bus.roster.setTopic('repo-a/codex-2', 'the second');
  // Into a name that has a topic of its own: it keeps it.
  await rename('repo-a/codex-1', 'repo-a/codex-docs', true);
  assert.equal(await topic('repo-a/codex-docs'), 'its own');
  assert.equal(await ctx.store.getAgent('repo-a/codex-1'), null, 'the old name left the roster, its topic with it');
  // Into a name that has none: it takes the old name's.
  await rename('repo-a/codex-2', 'repo-a/codex-web', true);
  assert.equal(await topic('repo-a/codex-web'), 'the second');
  // Away from the shared client address: it keeps its row, its topic and its mail; the new name takes its topic.
  await ctx.bus.roster.setTopic('repo-b/codex', 'shared');
  await ctx.bus.mail.send({ from: 'human', to: 'repo-b/codex', body: 'for any codex of repo-b' });
  const renamed = await rename('repo-b/codex', 'repo-b/codex-api', false);
  assert.deepEqual(renamed, { from: 'repo-b/codex', moved: 0 });
  assert.equal(await topic('repo-b/codex'), 'shared');
  assert.equal(await topic('repo-b/codex-api'), 'shared');
  assert.equal(ctx.count("SELECT COUNT(*) AS n FROM messages WHERE to_agent = 'repo-b/codex' AND read_at IS NULL"), 1);
});
