/** `agent-bus search` and MCP `search_messages`, locally and over the hub, on a real bus. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { CLI, ENGINE, json, runCli, tempBus, withTempBus, type TempBus, messageLines } from '../helpers/bus-env.js';
import { connectHttp, createToken, withHub } from '../helpers/hub.js';
import { connect } from '../helpers/mcp.js';
import { waitUntil } from '../helpers/wait.js';

interface Hit {
  message_id: string;
  thread_id: string;
  from: string;
  to: string;
  sent_at: string;
  snippet: Array<{ text: string; match: boolean }>;
}

function cli(bus: TempBus, args: string[], env: NodeJS.ProcessEnv = {}): string {
  const result = runCli(args, { env: { ...bus.env, ...env } });
  assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

/** A small fleet's mail: two repos, a person, a repo-wide send. */
function corpus(bus: TempBus): void {
  for (const name of ['web/claude', 'web/codex', 'api/claude']) cli(bus, ['send', `${name} is here`, '--to', '*', '--name', name]);
  cli(bus, ['send', 'please review the login form before merge', '--to', 'web/claude']);
  cli(bus, ['send', 'the deployment to staging failed', '--to', 'web', '--name', 'api/claude']);
  cli(bus, ['send', 'Login Form redesign ships Friday', '--to', 'api/claude', '--name', 'maria']);
}

const texts = (hits: Hit[]): string[] => hits.map((hit) => hit.snippet.map((part) => part.text).join(''));

test('search finds mail newest first with who wrote to whom and its thread; plain under NO_COLOR, bold on a terminal', withTempBus((bus) => {
  corpus(bus);
  const hits = json<Hit[]>(runCli(['search', 'login', 'form', '--json'], { env: bus.env }));
  assert.deepEqual(texts(hits), ['Login Form redesign ships Friday', 'please review the login form before merge']);
  assert.deepEqual([hits[1]?.from, hits[1]?.to], ['human', 'web/claude']);
  assert.deepEqual(hits[0]?.snippet.filter((part) => part.match).map((part) => part.text), ['Login', 'Form']);
  // A repo-wide send is one result, found by a prefix.
  assert.deepEqual(texts(json<Hit[]>(runCli(['search', 'deploy*', '--json'], { env: bus.env }))), ['the deployment to staging failed']);
  const plain = cli(bus, ['search', '"login form"']);
  assert.match(plain, /^just now {2}maria → api\/claude {2}[0-9a-f]{12} {2}\(thread [0-9a-f]{12}\)\n {4}Login Form redesign ships Friday\n/);
  assert.ok(!plain.includes('\u001b['), 'no colour under NO_COLOR');
  const terminal = spawnSync('script', ['-qec', `${process.execPath} ${CLI} search staging`, '/dev/null'], { env: { ...bus.env, NO_COLOR: '', TERM: 'xterm' }, encoding: 'utf8' }).stdout;
  assert.ok(terminal.includes('\u001b[1mstaging\u001b[22m'), `the match in bold: ${JSON.stringify(terminal)}`);
  assert.equal(cli(bus, ['search', 'nothing-like-this']), 'no mail matches\n');
}));

test('search --name finds only what that agent may read; filters by sender, recipient, thread and time', withTempBus((bus) => {
  corpus(bus);
  assert.deepEqual(texts(json<Hit[]>(runCli(['search', 'login', '--name', 'api/claude', '--json'], { env: bus.env }))), ['Login Form redesign ships Friday']);
  assert.deepEqual(texts(json<Hit[]>(runCli(['search', 'login', '--name', 'web/codex', '--json'], { env: bus.env }))), ['please review the login form before merge']);
  assert.deepEqual(texts(json<Hit[]>(runCli(['search', 'login', '--name', 'maria', '--json'], { env: bus.env }))), ['Login Form redesign ships Friday']);
  assert.deepEqual(texts(json<Hit[]>(runCli(['search', 'login', '--from', 'maria', '--json'], { env: bus.env }))), ['Login Form redesign ships Friday']);
  assert.deepEqual(texts(json<Hit[]>(runCli(['search', 'staging', '--to', 'web', '--json'], { env: bus.env }))), ['the deployment to staging failed']);
  const [first] = json<Hit[]>(runCli(['search', 'review', '--json'], { env: bus.env }));
  assert.equal(json<Hit[]>(runCli(['search', 'login', '--thread', (first?.thread_id ?? '').slice(0, 8), '--json'], { env: bus.env })).length, 1);
  assert.equal(json<Hit[]>(runCli(['search', 'login', '--since', '1h', '--json'], { env: bus.env })).length, 2);
  assert.equal(json<Hit[]>(runCli(['search', 'login', '--since', '2999-01-01', '--json'], { env: bus.env })).length, 0);
  assert.equal(json<Hit[]>(runCli(['search', 'login', '--limit', '1', '--json'], { env: bus.env })).length, 1);
}));

test('a bad query, --since or --limit is one line on stderr and exit 1 or 2, never a stack trace', withTempBus((bus) => {
  corpus(bus);
  for (const [args, code, message] of [
    [['search', '"login form'], 2, /^agent-bus: the query has an unbalanced quote/],
    [['search', '*'], 2, /^agent-bus: a prefix needs letters before its \*/],
    [['search', 'a', 'OR', '(b'], 0, null],
    [['search', 'login', '--since', 'yesterday-ish'], 2, /^agent-bus: bad --since 'yesterday-ish'/],
    [['search', 'login', '--limit', '0'], 2, /--limit must be a whole number of at least 1/],
    [['search'], 2, /QUERY|say what to look for/],
  ] as const) {
    const result = runCli([...args], { env: bus.env });
    assert.equal(result.code, code, `${args.join(' ')}: ${result.stderr}`);
    if (message !== null) {
      assert.equal(messageLines(result.stderr).length, 1, result.stderr);
      assert.match(result.stderr, message);
    }
  }
}));

test("over the hub a token's search_messages finds only what its agent may read, and the remote CLI searches through it", withHub({}, async (bus, hub) => {
  corpus(bus);
  const { token } = createToken(bus, 'api/claude');
  const client = await connectHttp(hub.url, token);
  try {
    const found = await client.call('search_messages', { query: 'login' });
    assert.equal(found.isError, false, found.text);
    assert.deepEqual((found.value as Array<{ snippet: string }>).map((hit) => hit.snippet), ['**Login** Form redesign ships Friday']);
    const refused = await client.call('search_messages', { query: '"unbalanced' });
    assert.equal(refused.isError, true);
    assert.match(refused.text, /unbalanced quote/);
  } finally {
    await client.close();
  }
  const remote = tempBus({ AGENT_BUS_URL: hub.url, AGENT_BUS_TOKEN: token });
  try {
    const found = json<Hit[]>(runCli(['search', 'login', '--json'], { env: remote.env }));
    assert.deepEqual(texts(found), ['Login Form redesign ships Friday']);
  } finally {
    remote.cleanup();
  }
}));

/** The index rows of a bus, read in its database: what a search would not have to index any more. */
function indexedRows(bus: TempBus): number {
  return bus.rows<{ n: number }>('SELECT COUNT(*)::int AS n FROM message_search')[0]?.n ?? -1;
}

/** Wait for the index to hold every message, failing after a while: nothing here searches. */
async function untilIndexed(bus: TempBus, what: string): Promise<void> {
  const rows = bus.rows<{ n: number }>('SELECT COUNT(*)::int AS n FROM messages')[0]?.n ?? 0;
  await waitUntil(() => indexedRows(bus) === rows, () => `${what}: the index holds ${indexedRows(bus)} rows, not ${rows}, and no search ran`, 15_000, 50);
}

test('on PostgreSQL the hub and an MCP server index their sends as they commit, before any search; a one-shot send leaves it to the search', { skip: ENGINE !== 'postgres' && 'background indexing is for PostgreSQL: SQLite indexes at the search' }, withHub({}, async (bus, hub) => {
  cli(bus, ['send', 'web/claude is here', '--to', '*', '--name', 'web/claude']);
  cli(bus, ['send', 'a one-shot send of the cli', '--to', 'web/claude']);
  assert.ok(bus.rows('SELECT 1 FROM messages').length > 0, 'mail is stored');
  assert.equal(indexedRows(bus), 0, 'a one-shot command does not index: the next search does');
  const { token } = createToken(bus, 'api/claude');
  const remote = await connectHttp(hub.url, token);
  try {
    for (const body of ['over the hub, the first', 'over the hub, the second']) {
      const sent = await remote.call('send_message', { to: 'web/claude', body });
      assert.equal(sent.isError, false, sent.text);
    }
  } finally {
    await remote.close();
  }
  // The hub's round indexes what is pending, the cli's sends too.
  await untilIndexed(bus, 'the hub');
  const server = await connect({ ...bus.env, AGENT_BUS_NAME: 'web/codex', AGENT_BUS_REPO: '/repos/web' });
  try {
    await server.call('send_message', { to: 'web/claude', body: 'from the mcp server' });
    await untilIndexed(bus, 'the MCP server');
  } finally {
    await server.close();
  }
  assert.deepEqual(texts(json<Hit[]>(runCli(['search', 'hub', '--json'], { env: bus.env }))), ['over the hub, the second', 'over the hub, the first']);
}));
