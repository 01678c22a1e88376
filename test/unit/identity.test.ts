import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { IdentityError, repoName, repoRoot, requestedHandle, resolveIdentity, sessionsEnabled, type IdentityLookups } from '../../src/adapters/identity.js';
import type { AgentRecord } from '../../src/store/ports.js';

function lookups(agents: AgentRecord[] = []): IdentityLookups {
  return {
    at: async (path) => agents.filter((agent) => agent.repoPath === path),
    get: async (name) => agents.find((agent) => agent.name === name) ?? null,
  };
}

function agent(name: string, repoPath: string, client: string | null): AgentRecord {
  return { name, repoPath, registeredAt: '', lastSeen: '', repo: name.split('/')[0] ?? null, client, topic: null };
}

function scratch(): { root: string; cleanup(): void } {
  const root = mkdtempSync(join(tmpdir(), 'agent-bus-identity-'));
  return { root, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

test('the repo root is the nearest folder with .git; names come from it or .agent-bus-name', () => {
  const { root, cleanup } = scratch();
  try {
    const repo = join(root, 'acme.dev');
    mkdirSync(join(repo, 'src', 'a'), { recursive: true });
    writeFileSync(join(repo, '.git'), 'gitdir: elsewhere\n');
    assert.equal(repoRoot(join(repo, 'src', 'a')), repo);
    assert.equal(repoRoot(root), root, 'no .git anywhere: the folder itself');
    assert.equal(repoName(repo), 'acme-dev');
    writeFileSync(join(repo, '.agent-bus-name'), '  Web App  \nsecond line\n');
    assert.equal(repoName(repo), 'web-app');
  } finally {
    cleanup();
  }
});

test('session and instance requests', () => {
  assert.equal(requestedHandle({ AGENT_BUS_SESSION: 'Release Notes', AGENT_BUS_INSTANCE: '3' }), 'release-notes');
  assert.equal(requestedHandle({ AGENT_BUS_INSTANCE: '01' }), '1');
  assert.equal(requestedHandle({}), null);
  for (const bad of ['0', '100', 'two', '-3']) assert.throws(() => requestedHandle({ AGENT_BUS_INSTANCE: bad }), /AGENT_BUS_INSTANCE must be a number 1\.\.99/);
  assert.throws(() => requestedHandle({ AGENT_BUS_SESSION: '42' }), /^IdentityError: AGENT_BUS_SESSION: invalid session label/);
  assert.equal(sessionsEnabled({ AGENT_BUS_SESSIONS: ' OFF ' }), false);
  assert.equal(sessionsEnabled({ AGENT_BUS_SESSIONS: '1' }), true);
});

test('AGENT_BUS_NAME wins; a handle in it is a pinned session; a handle needs a client part', async () => {
  const { root, cleanup } = scratch();
  try {
    const explicit = await resolveIdentity({ env: { AGENT_BUS_NAME: 'repo-a/claude-docs', AGENT_BUS_REPO: root, AGENT_BUS_CLIENT: 'codex' }, cwd: root }, lookups(), 'server');
    assert.deepEqual(explicit, { kind: 'agent', name: 'repo-a/claude', repoPath: root, client: 'claude', pinnedHandle: 'docs', derived: false, warnings: [] });
    await assert.rejects(resolveIdentity({ env: { AGENT_BUS_NAME: 'alpha', AGENT_BUS_INSTANCE: '2' }, cwd: root }, lookups(), 'server'), /has no client part/);
    await assert.rejects(resolveIdentity({ env: { AGENT_BUS_NAME: 'repo/Claude' }, cwd: root }, lookups(), 'server'), IdentityError);
  } finally {
    cleanup();
  }
});

test('a derived name prefers the roster; hooks stay silent where the client is not registered', async () => {
  const { root, cleanup } = scratch();
  try {
    const repo = join(root, 'shop');
    mkdirSync(join(repo, '.git'), { recursive: true });
    const fresh = await resolveIdentity({ env: {}, client: 'codex', cwd: repo }, lookups(), 'server');
    assert.equal(fresh.kind === 'agent' && fresh.name, 'shop/codex');
    assert.deepEqual(await resolveIdentity({ env: {}, client: 'codex', cwd: repo }, lookups(), 'hook'), { kind: 'nobody' });
    const pinnedEarlier = lookups([agent('storefront/codex', repo, 'codex'), agent('storefront/codex-2', repo, null)]);
    const known = await resolveIdentity({ env: {}, client: 'codex', payloadDir: join(repo), cwd: root }, pinnedEarlier, 'hook');
    assert.equal(known.kind === 'agent' && known.name, 'storefront/codex');
    await assert.rejects(resolveIdentity({ env: {}, cwd: repo }, lookups(), 'server'), /cannot tell which agent this is/);
  } finally {
    cleanup();
  }
});
