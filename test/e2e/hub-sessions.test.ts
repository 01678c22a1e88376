/**
 * Session addresses over the hub: a token for a client address (`shop/codex`)
 * gives each session id a client sends an address of its own, by the rules a
 * local server follows, with the session's liveness judged by when it was last
 * heard from instead of by a process.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { ON_POSTGRES, runCli, tempBus, type TempBus } from '../helpers/bus-env.js';
import { connectHttp, createToken, startHub, withHub, type HttpMcp } from '../helpers/hub.js';
import { connect } from '../helpers/mcp.js';
import { waitUntil } from '../helpers/wait.js';

const homes: string[] = [];
after(() => {
  for (const home of homes) rmSync(home, { recursive: true, force: true });
});

function remoteEnv(url: string, token: string): NodeJS.ProcessEnv {
  const home = mkdtempSync(join(tmpdir(), 'agent-bus-remote-'));
  homes.push(home);
  return { PATH: process.env.PATH, HOME: home, NO_COLOR: '1', AGENT_BUS_URL: url, AGENT_BUS_TOKEN: token };
}

/** What Codex 0.171 puts in a tool call's metadata: its thread id inside the turn metadata. */
const codexTurn = (thread: string) => ({ callId: 'call_1', 'x-codex-turn-metadata': { session_id: thread, thread_id: thread, turn_id: `turn-${thread}` } });

interface Whoami {
  name: string;
  warnings: string[];
}

async function whoami(mcp: HttpMcp, meta?: Record<string, unknown>): Promise<Whoami> {
  const result = (await mcp.client.callTool({ name: 'whoami', arguments: {}, ...(meta === undefined ? {} : { _meta: meta }) })) as { content: Array<{ text: string }> };
  return JSON.parse(result.content[0]?.text ?? '{}') as Whoami;
}

/** A remote prompt hook for `client` in the session `sessionId`: what it showed the model. */
function promptHook(env: NodeJS.ProcessEnv, client: string, sessionId: string): string {
  const hook = runCli(['hook-user-prompt', '--client', client], { env, input: JSON.stringify({ session_id: sessionId, hook_event_name: 'UserPromptSubmit' }) });
  assert.equal(hook.code, 0, hook.stderr);
  return hook.stdout;
}

function statusName(env: NodeJS.ProcessEnv, sessionId: string): string {
  const status = runCli(['statusline', '--json'], { env, input: JSON.stringify({ session_id: sessionId }) });
  assert.equal(status.code, 0, status.stderr);
  return (JSON.parse(status.stdout) as { name: string }).name;
}

function liveAgents(bus: TempBus): Array<[string, boolean | null]> {
  const agents = JSON.parse(runCli(['agents', '--json'], { env: bus.env }).stdout) as Array<{ name: string; live: boolean | null }>;
  return agents.filter((agent) => agent.name.startsWith('shop/')).map((agent) => [agent.name, agent.live]);
}

test('a token for a client address gives each session id an address of its own: Codex thread ids over MCP, hook session ids, the X-Agent-Bus-Session header; a call with none speaks as the client address and says so', withHub({}, async (bus, hub) => {
  const { token } = createToken(bus, 'shop/codex');
  assert.equal(runCli(['send', 'joining', '--to', 'shop/codex'], { env: bus.env }).code, 0);
  runCli(['inbox', '--name', 'shop/codex'], { env: bus.env });
  const mcp = await connectHttp(hub.url, token);
  try {
    assert.equal((await whoami(mcp, codexTurn('t-1'))).name, 'shop/codex-1');
    assert.equal((await whoami(mcp, codexTurn('t-2'))).name, 'shop/codex-2');
    assert.equal((await whoami(mcp, { threadId: 't-1' })).name, 'shop/codex-1', 'the same thread finds the same address');
    // Requests that arrive together for a session id never seen get one address between them.
    const racing = await Promise.all(Array.from({ length: 8 }, () => whoami(mcp, codexTurn('t-3'))));
    assert.deepEqual([...new Set(racing.map((me) => me.name))], ['shop/codex-3']);
    const shared = await whoami(mcp);
    assert.equal(shared.name, 'shop/codex');
    assert.match(shared.warnings.join(' '), /this call sent no session id .* so it speaks as 'shop\/codex', the address every session of this client shares/);

    const sent = (await mcp.client.callTool({ name: 'send_message', arguments: { to: 'human', body: 'from thread one' }, _meta: codexTurn('t-1') })) as { isError?: boolean };
    assert.notEqual(sent.isError, true);
    assert.deepEqual(bus.rows("SELECT from_agent FROM messages WHERE body = 'from thread one'"), [{ from_agent: 'shop/codex-1' }]);
  } finally {
    await mcp.close();
  }
  const header = await connectHttp(hub.url, token, { 'x-agent-bus-session': 'h-1' });
  try {
    assert.equal((await whoami(header)).name, 'shop/codex-4', 'the X-Agent-Bus-Session header names the session');
  } finally {
    await header.close();
  }
  assert.deepEqual(liveAgents(bus), [
    ['shop/codex', null],
    ['shop/codex-1', true],
    ['shop/codex-2', true],
    ['shop/codex-3', true],
    ['shop/codex-4', true],
  ]);
  assert.deepEqual(bus.rows("SELECT DISTINCT server_pid, boot_id FROM sessions WHERE client_address = 'shop/codex'"), [{ server_pid: 0, boot_id: 'hub' }], 'rows of the hub, with no process');

  // A session's mail reaches that session's hooks only; the shared address's mail reaches one of them.
  const remote = remoteEnv(hub.url, token);
  assert.equal(runCli(['send', 'for thread two', '--to', 'shop/codex-2'], { env: bus.env }).code, 0);
  assert.equal(runCli(['send', 'for any codex', '--to', 'shop/codex'], { env: bus.env }).code, 0);
  const first = promptHook(remote, 'codex', 't-1');
  assert.match(first, /for any codex/);
  assert.doesNotMatch(first, /for thread two/);
  const second = promptHook(remote, 'codex', 't-2');
  assert.match(second, /for thread two/);
  assert.doesNotMatch(second, /for any codex/);
  assert.equal(statusName(remote, 't-2'), 'shop/codex-2');
}));

test('over the hub a session with an address takes a label; one without is refused, and a token for one name never gets sessions', withHub({}, async (bus, hub) => {
  const codex = createToken(bus, 'shop/codex');
  const mcp = await connectHttp(hub.url, codex.token);
  try {
    assert.equal((await whoami(mcp, codexTurn('t-1'))).name, 'shop/codex-1');
    assert.equal(runCli(['send', 'unread before the label', '--to', 'shop/codex-1'], { env: bus.env }).code, 0);
    const labelled = (await mcp.client.callTool({ name: 'set_session', arguments: { label: 'frontend' }, _meta: codexTurn('t-1') })) as { isError?: boolean; content: Array<{ text: string }> };
    assert.notEqual(labelled.isError, true, labelled.content[0]?.text);
    assert.equal((await whoami(mcp, codexTurn('t-1'))).name, 'shop/codex-frontend', 'the thread speaks as its label from then on');
    assert.deepEqual(bus.rows("SELECT to_agent FROM messages WHERE body = 'unread before the label'"), [{ to_agent: 'shop/codex-frontend' }], 'its unread mail moved with it');
    const bare = (await mcp.client.callTool({ name: 'set_session', arguments: { label: 'docs' } })) as { isError?: boolean; content: Array<{ text: string }> };
    assert.equal(bare.isError, true);
    assert.match(bare.content[0]?.text ?? '', /holds no session address of its own to name/);
  } finally {
    await mcp.close();
  }
  // A token for one session's address (or a name with no client) speaks as that name alone.
  const plain = createToken(bus, 'shop/claude-docs');
  const one = await connectHttp(hub.url, plain.token);
  try {
    const me = await whoami(one, codexTurn('t-9'));
    assert.equal(me.name, 'shop/claude-docs', 'a name that is no client address has no sessions');
    assert.deepEqual(me.warnings, []);
  } finally {
    await one.close();
  }
}));

test("an agent's name on its machine (AGENT_BUS_NAME, as spawn gives it) is the address its conversation holds over the hub, whichever request comes first: its status, its relay's tool calls and its hooks speak as it; a name of another client address, the client address itself, or one a live conversation holds is not taken", withHub({}, async (bus, hub) => {
  const { token } = createToken(bus, 'shop/claude');
  const writer = { ...remoteEnv(hub.url, token), AGENT_BUS_NAME: 'shop/claude-writer' };
  // The conversation's first request is its status line (a call); its relay's tool calls come after.
  assert.equal(statusName(writer, 's-1'), 'shop/claude-writer');
  const relay = await connect({ ...writer, CLAUDE_CODE_SESSION_ID: 's-1' }, { args: ['--client', 'claude'] });
  try {
    assert.equal((await relay.call<Whoami>('whoami')).name, 'shop/claude-writer');
    const sent = await relay.call<{ message_id: string }>('send_message', { to: 'human', body: 'from the writer' });
    assert.deepEqual(bus.rows(`SELECT from_agent FROM messages WHERE message_id = '${sent.message_id}'`), [{ from_agent: 'shop/claude-writer' }]);
  } finally {
    await relay.close();
  }
  assert.equal(runCli(['send', 'for the writer', '--to', 'shop/claude-writer'], { env: bus.env }).code, 0);
  assert.match(promptHook(writer, 'claude', 's-1'), /for the writer/);
  // A conversation whose hook comes first holds its name too.
  const reviewer = { ...remoteEnv(hub.url, token), AGENT_BUS_NAME: 'shop/claude-reviewer' };
  assert.doesNotMatch(promptHook(reviewer, 'claude', 's-2'), /for the writer/);
  assert.equal(statusName(reviewer, 's-2'), 'shop/claude-reviewer');

  // The token alone says who may speak: another client address's name, or the client address, pins nothing.
  assert.equal(statusName({ ...writer, AGENT_BUS_NAME: 'lab/claude-writer' }, 's-3'), 'shop/claude-1');
  assert.equal(statusName({ ...writer, AGENT_BUS_NAME: 'shop/claude' }, 's-4'), 'shop/claude-2');
  // A name a live conversation holds is not taken from it: another conversation gets a number.
  assert.equal(statusName(writer, 's-5'), 'shop/claude-3');
  assert.equal(statusName(writer, 's-1'), 'shop/claude-writer');
  assert.deepEqual(bus.rows("SELECT name, session_key FROM sessions WHERE client_address = 'shop/claude' ORDER BY name"), [
    { name: 'shop/claude-1', session_key: 's-3' },
    { name: 'shop/claude-2', session_key: 's-4' },
    { name: 'shop/claude-3', session_key: 's-5' },
    { name: 'shop/claude-reviewer', session_key: 's-2' },
    { name: 'shop/claude-writer', session_key: 's-1' },
  ]);
}));

test('a hub session lives while it is heard from: silent past AGENT_BUS_HUB_SESSION_IDLE_MINUTES it counts as ended, its mail goes to the client address at the next claim, and the same session id comes back to its address', async () => {
  const bus = tempBus();
  // Every process that judges sessions reads the limit: the hub, and the CLI on its machine.
  bus.env.AGENT_BUS_HUB_SESSION_IDLE_MINUTES = '0.05';
  const hub = await startHub(bus);
  try {
    const { token } = createToken(bus, 'shop/claude');
    const remote = remoteEnv(hub.url, token);
    assert.equal(statusName(remote, 's-1'), 'shop/claude-1');
    assert.equal(runCli(['send', 'left for one', '--to', 'shop/claude-1'], { env: bus.env }).code, 0);
    assert.deepEqual(liveAgents(bus), [['shop/claude', null], ['shop/claude-1', true]]);
    // Unheard for longer than the limit (0.05 minutes) since the session was last heard from.
    const heard = Date.parse(bus.rows<{ last_seen: string }>("SELECT last_seen FROM sessions WHERE session_key = 's-1'")[0]?.last_seen ?? '');
    assert.ok(!Number.isNaN(heard), 'the session was heard from');
    await waitUntil(() => Date.now() > heard + 3_000 + 1, 'the idle limit to pass');
    assert.deepEqual(liveAgents(bus), [['shop/claude', null], ['shop/claude-1', false]], 'unheard for longer than the idle limit');
    // A new session takes the next number (the silent one's is kept for its comeback) and ends the silent one.
    assert.equal(statusName(remote, 's-2'), 'shop/claude-2');
    assert.deepEqual(bus.rows("SELECT to_agent FROM messages WHERE body = 'left for one'"), [{ to_agent: 'shop/claude' }], 'its unread mail went to the client address');
    assert.deepEqual(bus.rows("SELECT name, ended_at IS NOT NULL AS ended FROM sessions WHERE session_key = 's-1'").map((row) => [row.name, Boolean(row.ended)]), [['shop/claude-1', true]]);
    // The silent session speaks again: it gets its number back, and sees the mail through the shared address.
    const back = promptHook(remote, 'claude', 's-1');
    assert.match(back, /left for one/);
    assert.equal(statusName(remote, 's-1'), 'shop/claude-1');
    assert.deepEqual(liveAgents(bus), [['shop/claude', null], ['shop/claude-1', true], ['shop/claude-2', true]]);
  } finally {
    await hub.stop();
    bus.cleanup();
  }
});

test('two hubs on one database find a session id\'s address alike: no sticky sessions', { skip: !ON_POSTGRES && 'hubs share a bus across machines through PostgreSQL; this suite runs on SQLite (the PostgreSQL run covers it)' }, async () => {
  const bus = tempBus();
  const east = await startHub(bus);
  const west = await startHub(bus);
  try {
    const { token } = createToken(bus, 'shop/codex');
    const [a, b] = [await connectHttp(east.url, token), await connectHttp(west.url, token)];
    try {
      const racing = await Promise.all([...Array.from({ length: 4 }, () => whoami(a, codexTurn('t-1'))), ...Array.from({ length: 4 }, () => whoami(b, codexTurn('t-1')))]);
      assert.deepEqual([...new Set(racing.map((me) => me.name))], ['shop/codex-1'], 'first requests at both hubs at once get one address');
      assert.equal((await whoami(b, codexTurn('t-2'))).name, 'shop/codex-2');
      assert.equal((await whoami(a, codexTurn('t-2'))).name, 'shop/codex-2');
      assert.equal(runCli(['send', 'for thread one', '--to', 'shop/codex-1'], { env: bus.env }).code, 0);
      assert.match(promptHook(remoteEnv(west.url, token), 'codex', 't-1'), /for thread one/, 'a hook at the other hub reads as the same session');
    } finally {
      await a.close();
      await b.close();
    }
  } finally {
    await east.stop();
    await west.stop();
    bus.cleanup();
  }
});
