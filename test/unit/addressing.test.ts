import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NoSuchRecipient, planSend, rosterQueryFor, trimIdle, unknownRecipient } from '../../src/core/addressing.js';
import { formatStamp } from '../../src/model/clock.js';
import type { AgentRecord } from '../../src/store/ports.js';

const NOW = Date.UTC(2026, 5, 1) * 1000;

function agent(name: string, daysIdle = 0): AgentRecord {
  const slash = name.indexOf('/');
  const rest = slash < 0 ? '' : name.slice(slash + 1);
  return {
    name,
    repoPath: '/r',
    registeredAt: formatStamp(NOW),
    lastSeen: formatStamp(NOW - daysIdle * 86_400_000_000),
    repo: slash < 0 ? null : name.slice(0, slash),
    // Sessions keep the client column empty, as the roster files them.
    client: slash < 0 || rest.includes('-') ? null : rest,
    topic: null,
  };
}

function plan(to: string, roster: AgentRecord[], from = 'human', fanoutMaxIdleDays = 14) {
  return planSend(roster, { to, skip: new Set([from]), threadId: null, nowMicros: NOW, fanoutMaxIdleDays });
}

test('the roster a send needs depends on the address form', () => {
  assert.deepEqual(rosterQueryFor('*'), { kind: 'all' });
  assert.deepEqual(rosterQueryFor('repo-a/claude'), { kind: 'name', name: 'repo-a/claude' });
  assert.deepEqual(rosterQueryFor('repo-a'), { kind: 'repo', repo: 'repo-a' });
});

test('direct, group and broadcast plans', () => {
  const roster = [agent('human'), agent('repo-a/claude'), agent('repo-a/codex'), agent('repo-b/claude')];
  const direct = plan('repo-a/codex', roster);
  assert.equal(direct.kind, 'direct');
  assert.equal(direct.fanoutId, null);
  assert.deepEqual(direct.rows.map((row) => [row.toAgent, row.toGroup]), [['repo-a/codex', null]]);
  const group = plan('repo-a', roster);
  assert.equal(group.kind, 'group');
  assert.match(group.fanoutId ?? '', /^[0-9a-f-]{36}$/);
  assert.deepEqual(group.rows.map((row) => [row.toAgent, row.toGroup]), [['repo-a/claude', 'repo-a'], ['repo-a/codex', 'repo-a']]);
  const everyone = plan('*', roster, 'repo-a/claude');
  assert.equal(everyone.kind, 'broadcast');
  assert.deepEqual(everyone.rows.map((row) => row.toAgent), ['human', 'repo-a/codex', 'repo-b/claude']);
  assert.equal(new Set(everyone.rows.map((row) => row.messageId)).size, 3);
  assert.ok(everyone.threadId);
});

test('an empty fan-out has no thread and no fan-out id', () => {
  const lonely = plan('repo-a', [agent('repo-a/claude')], 'repo-a/claude');
  assert.deepEqual([lonely.kind, lonely.rows.length, lonely.threadId, lonely.fanoutId], ['group', 0, null, null]);
});

test('a given thread id is kept', () => {
  const kept = planSend([agent('beta')], { to: 'beta', skip: new Set(['alpha']), threadId: 't-1', nowMicros: NOW, fanoutMaxIdleDays: 14 });
  assert.equal(kept.threadId, 't-1');
});

test('names nobody holds throw NoSuchRecipient', () => {
  assert.throws(() => plan('repo-a/cluade', [agent('repo-a/claude')]), NoSuchRecipient);
  assert.throws(() => plan('repo-z', [agent('repo-a/claude')]), NoSuchRecipient);
});

test('idle trimming keeps a repo with nobody fresh', () => {
  const members = [agent('repo-a/claude', 1), agent('repo-a/codex', 30), agent('repo-b/claude', 40), agent('repo-b/codex', 50)];
  assert.deepEqual(trimIdle(members, NOW, 14).map((member) => member.name), ['repo-a/claude', 'repo-b/claude', 'repo-b/codex']);
  assert.equal(trimIdle(members, NOW, 0).length, 4);
});

test('unknown-recipient text: the repo agents, else close matches, else nothing', () => {
  const roster = [agent('repo-a/claude'), agent('repo-a/codex'), agent('alpha')];
  assert.match(unknownRecipient('repo-a/cluade', roster).message, /Agents in that repo: repo-a\/claude, repo-a\/codex\./);
  assert.match(unknownRecipient('alhpa', roster).message, /Did you mean: alpha\?/);
  assert.equal(
    unknownRecipient('zzzzzz', roster).message,
    "no agent or group named 'zzzzzz' is on the bus. Nothing was sent; list the agents to see who is reachable.",
  );
});
