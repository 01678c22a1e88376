/** The dashboard's folding of a thread and its roster pages (src/core/overview.ts). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { foldThread, rosterPage, THREAD_ROWS } from '../../src/core/overview.js';
import type { AgentView } from '../../src/core/views.js';
import type { MessageRecord } from '../../src/store/ports.js';

function copy(index: number, fanoutId: string | null, overrides: Partial<MessageRecord> = {}): MessageRecord {
  return {
    messageId: `m${index}`,
    fromAgent: 'human',
    toAgent: `repo-${index}/claude`,
    body: `body ${fanoutId ?? index}`,
    threadId: 't',
    sentAt: `2026-12-01T10:00:${String(index % 60).padStart(2, '0')}.000000Z`,
    readAt: index % 2 === 0 ? '2026-12-01T11:00:00.000000Z' : null,
    deliveredAt: null,
    addressedTo: fanoutId === null ? null : '*',
    fanoutId,
    toGroup: null,
    claimedBy: null,
    ...overrides,
  } as MessageRecord;
}

test('a broadcast is one send: its first 50 copies shown, the counts over all of them', () => {
  const view = foldThread(Array.from({ length: 120 }, (_, index) => copy(index, 'f1')));
  assert.equal(view.sends.length, 1);
  const [send] = view.sends;
  assert.deepEqual([send?.kind, send?.to, send?.copies.length, send?.copyCount, send?.readCount, send?.claimedBy], ['broadcast', '*', 50, 120, 60, null]);
  assert.equal(view.truncated, false);
});

test('a repo-wide send says who claimed it; a long thread is cut at 200 sends and says so', () => {
  const claimed = foldThread([copy(1, 'f2', { addressedTo: 'repo', claimedBy: null }), copy(2, 'f2', { addressedTo: 'repo', claimedBy: 'repo/codex' })]);
  assert.deepEqual([claimed.sends[0]?.kind, claimed.sends[0]?.claimedBy], ['group', 'repo/codex']);
  const long = foldThread(Array.from({ length: 250 }, (_, index) => copy(index, null)));
  assert.deepEqual([long.sends.length, long.truncated, long.sends[0]?.body], [200, true, 'body 0']);
  assert.equal(foldThread(Array.from({ length: THREAD_ROWS }, () => copy(1, 'f3'))).truncated, true, 'as many copies as a view reads: there may be more');
});

test('roster pages are repos in order, a filter matching names or topics', () => {
  const agent = (name: string, topic: string | null = null, pending = 0, live: boolean | null = null): AgentView => ({
    name,
    kind: live === null ? 'client' : 'session',
    group: name.split('/')[0] as string,
    client: 'claude',
    topic,
    repo_path: '/r',
    registered_at: '',
    last_seen: '',
    pending_count: pending,
    live,
    state: 'unknown',
    state_since: null,
    task: null,
    wake: null,
    server_gone: live === null ? null : false,
  });
  const agents = [agent('b/claude', null, 2), agent('b/claude-1', 'billing', 1, true), agent('a/claude'), agent('c/codex', 'docs', 0, false)];
  const page = rosterPage(agents, 0, 2);
  assert.deepEqual([page.repos.map((repo) => repo.repo), page.totalRepos, page.totalAgents], [['a', 'b'], 3, 4]);
  assert.deepEqual([page.repos[1]?.unread, page.repos[1]?.running], [3, 1]);
  assert.deepEqual(rosterPage(agents, 2, 2).repos.map((repo) => repo.repo), ['c']);
  assert.deepEqual(rosterPage(agents, 0, 10, 'BILL').repos.map((repo) => repo.agents.map((one) => one.name)), [['b/claude-1']]);
});
