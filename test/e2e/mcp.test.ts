/** The MCP server as clients see it: spawned over stdio and driven with the official client SDK. */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { CLI, readAudit, runCli, tempBus, type TempBus } from '../helpers/bus-env.js';
import { connect, type McpSession } from '../helpers/mcp.js';
import { waitForExit, waitUntil } from '../helpers/wait.js';

interface Whoami {
  name: string;
  group: string;
  client: string | null;
  client_address: string | null;
  session: string | null;
  instance: number | null;
  topic: string | null;
  repo_path: string;
  mcp_client: string | null;
  group_members: Array<{ name: string; live: boolean | null }>;
  warnings: string[];
}

interface Sent {
  to: string;
  kind: string;
  message_ids: string[];
  recipients: string[];
  thread_id: string;
  sent_at: string;
  message_id?: string;
  note?: string;
}

interface Message {
  message_id: string;
  from: string;
  to: string;
  body: string;
  thread_id: string;
  kind: string;
}

function claudeEnv(bus: TempBus, key: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { ...bus.env, AGENT_BUS_NAME: 'repo-a/claude', AGENT_BUS_REPO: '/repos/a', CLAUDE_CODE_SESSION_ID: key, ...extra };
}

async function withServers(work: (bus: TempBus, open: (env: NodeJS.ProcessEnv, args?: string[], cwd?: string) => Promise<McpSession>) => Promise<void>): Promise<void> {
  const bus = tempBus();
  const sessions: McpSession[] = [];
  try {
    await work(bus, async (env, args, cwd) => {
      const session = await connect(env, { args, cwd });
      sessions.push(session);
      return session;
    });
  } finally {
    for (const session of sessions) await session.close().catch(() => undefined);
    bus.cleanup();
  }
}

test('whoami, list_agents and the tool list have the documented shapes', () =>
  withServers(async (bus, open) => {
    const alpha = await open(claudeEnv(bus, 'k-1'));
    const tools = (await alpha.client.listTools()).tools.map((tool) => tool.name).sort();
    assert.deepEqual(tools, ['agent_logs', 'brain_refresh', 'brain_status', 'cancel_task', 'channel_acknowledge', 'channel_list', 'channel_publish', 'client_hook', 'complete_task', 'create_task', 'fail_task', 'get_task', 'list_agents', 'list_reservations', 'list_tasks', 'message_status', 'notify_when', 'read_inbox', 'read_thread', 'release_files', 'reserve_files', 'search_messages', 'send_message', 'set_session', 'spawn_agent', 'stop_agent', 'tail_audit', 'take_task', 'whoami']);
    const info = alpha.client.getServerVersion();
    assert.equal(info?.name, 'agent-bus');
    assert.match(alpha.client.getInstructions() ?? '', /You are 'repo-a\/claude-1'.*'repo\/client-N'.*'\*': everyone/s);
    const me = await alpha.call<Whoami>('whoami');
    assert.deepEqual(Object.keys(me), ['name', 'group', 'client', 'client_address', 'session', 'instance', 'topic', 'repo_path', 'registered_at', 'last_seen', 'mcp_client', 'group_members', 'warnings']);
    assert.deepEqual([me.name, me.group, me.client, me.client_address, me.session, me.instance], ['repo-a/claude-1', 'repo-a', 'claude', 'repo-a/claude', '1', 1]);
    assert.equal(me.repo_path, '/repos/a');
    assert.equal(me.mcp_client, 'agent-bus-tests');
    assert.deepEqual(me.group_members.map((member) => [member.name, member.live]), [['repo-a/claude', null], ['repo-a/claude-1', true]]);
    const rows = await alpha.call<Array<Record<string, unknown>>>('list_agents');
    assert.deepEqual(Object.keys(rows[0] ?? {}), ['name', 'kind', 'group', 'client', 'topic', 'repo_path', 'registered_at', 'last_seen', 'pending_count', 'live', 'state', 'state_since', 'task', 'wake', 'server_gone']);
    const structured = await alpha.client.callTool({ name: 'list_agents', arguments: { group: 'repo-a' } });
    assert.deepEqual((structured.structuredContent as { result: unknown[] }).result.length, 2, 'structured content beside the text');
    assert.deepEqual(await alpha.call('list_agents', { group: 'nowhere' }), []);
  }));

test('two servers exchange mail and read the thread back in order', () =>
  withServers(async (bus, open) => {
    const alpha = await open({ ...bus.env, AGENT_BUS_NAME: 'alpha', AGENT_BUS_REPO: '/repos/alpha' });
    const beta = await open({ ...bus.env, AGENT_BUS_NAME: 'beta', AGENT_BUS_REPO: '/repos/beta' });
    const sent = await alpha.call<Sent>('send_message', { to: 'beta', body: 'hello beta' });
    assert.deepEqual(Object.keys(sent), ['to', 'kind', 'message_ids', 'recipients', 'thread_id', 'sent_at', 'fanout_id', 'message_id']);
    assert.equal(sent.message_id, sent.message_ids[0]);
    const [received, ...none] = await beta.call<Message[]>('read_inbox');
    assert.equal(none.length, 0);
    assert.deepEqual([received?.from, received?.body, received?.kind], ['alpha', 'hello beta', 'direct']);
    await beta.call('send_message', { to: 'alpha', body: 'hello alpha', thread_id: sent.thread_id });
    await alpha.call('send_message', { to: 'beta', body: 'third', thread_id: sent.thread_id });
    const thread = await beta.call<Message[]>('read_thread', { thread_id: sent.thread_id });
    assert.deepEqual(thread.map((message) => message.body), ['hello beta', 'hello alpha', 'third']);
    assert.deepEqual((await beta.call<Message[]>('read_thread', { thread_id: sent.thread_id, limit: 1 })).length, 1);
    const peek = await alpha.call<Message[]>('read_inbox', { mark_read: false });
    assert.equal(peek.length, 1);
    assert.equal((await alpha.call<Message[]>('read_inbox', { limit: 0 })).length, 0);
    assert.equal((await alpha.call<Message[]>('read_inbox')).length, 1, 'peeking left it unread');
    const everyone = await alpha.call<Sent>('send_message', { to: '*', body: 'to all' });
    assert.deepEqual(everyone.recipients, ['beta']);
    // The spec: message_id whenever exactly one agent received it, a one-recipient broadcast included.
    assert.equal(everyone.message_id, everyone.message_ids[0]);
    assert.equal(typeof everyone.message_id, 'string');
    const audit = await alpha.call<Array<{ op: string }>>('tail_audit', { limit: 3 });
    assert.equal(audit.length, 3);
    assert.deepEqual(Object.keys(audit[0] ?? {}).slice(0, 4), ['ts', 'op', 'actor', 'message_id']);
  }));

test('bad recipients, labels and arguments are tool errors, and the server keeps serving', () =>
  withServers(async (bus, open) => {
    const alpha = await open(claudeEnv(bus, 'k-1'));
    assert.match(await alpha.fails('send_message', { to: 'repo-a/cluade', body: 'x' }), /Agents in that repo: .*repo-a\/claude/);
    assert.equal(await alpha.fails('send_message', { to: 'alpha', body: '' }), 'body must be non-empty');
    assert.equal(await alpha.fails('send_message', { to: '', body: 'x' }), "to must be non-empty (use '*' to broadcast)");
    assert.match(await alpha.fails('send_message', { to: '*', body: 'x', thread_id: '' }), /^thread id must be 1 to 200 characters/);
    assert.match(await alpha.fails('set_session', { label: '42' }), /invalid session label '42'/);
    assert.match(await alpha.fails('read_thread', {}), /thread_id|required/i);
    assert.equal((await alpha.call<Whoami>('whoami')).name, 'repo-a/claude-1', 'still serving');
  }));

test('null for an optional argument is taken as not given; a limit of 0 or less is none, above 10000 is 10000', () =>
  withServers(async (bus, open) => {
    const alpha = await open(claudeEnv(bus, 'k-1'));
    const sent = await alpha.call<{ thread_id: string; recipients: string[] }>('send_message', { to: 'repo-a/claude-1', body: 'to myself', thread_id: null });
    assert.match(sent.thread_id, /^[0-9a-f-]{36}$/);
    assert.ok((await alpha.call<unknown[]>('list_agents', { group: null })).length > 0);
    assert.equal((await alpha.call<{ topic: string | null }>('set_session', { label: null, topic: 'work' })).topic, 'work');
    assert.deepEqual(await alpha.call('read_inbox', { limit: 0 }), []);
    assert.deepEqual(await alpha.call('read_inbox', { limit: -1, mark_read: null }), []);
    assert.equal((await alpha.call<unknown[]>('read_inbox', { limit: null, mark_read: false })).length, 1, 'null: the default limit');
    assert.equal((await alpha.call<unknown[]>('read_thread', { thread_id: sent.thread_id, limit: 99_999_999 })).length, 1);
    assert.ok((await alpha.call<unknown[]>('tail_audit', { limit: null })).length > 0);
    const notice = await alpha.call<{ channel: string | null; severity: string }>('channel_publish', { channel: null, message: 'all hands', severity: null, ttl: null });
    assert.deepEqual([notice.channel, notice.severity], [null, 'info']);
  }));

test('two sessions of one client get -1 and -2; servers that cannot be told apart share', () =>
  withServers(async (bus, open) => {
    const one = await open(claudeEnv(bus, 'k-1'));
    const two = await open(claudeEnv(bus, 'k-2'));
    assert.equal((await one.call<Whoami>('whoami')).name, 'repo-a/claude-1');
    assert.equal((await two.call<Whoami>('whoami')).name, 'repo-a/claude-2');
    const plain = { ...bus.env, AGENT_BUS_NAME: 'repo-b/codex', AGENT_BUS_REPO: '/repos/b' };
    const first = await open({ ...plain, AGENT_BUS_CLIENT: 'opencode', AGENT_BUS_NAME: 'repo-b/opencode' });
    const second = await open({ ...plain, AGENT_BUS_CLIENT: 'opencode', AGENT_BUS_NAME: 'repo-b/opencode' });
    assert.equal((await first.call<Whoami>('whoami')).name, 'repo-b/opencode-1');
    assert.equal((await second.call<Whoami>('whoami')).name, 'repo-b/opencode-1', 'one client process, no session ids: one address');
    assert.match(await second.fails('set_session', { label: 'mine' }), /shared with other sessions the bus cannot tell apart.*set only a topic/);
    const note = await one.call<Sent>('send_message', { to: 'repo-a/claude', body: 'any claude' });
    assert.equal(note.note, undefined, 'a sibling is running to take it');
    assert.deepEqual((await two.call<Message[]>('read_inbox')).map((message) => message.body), ['any claude']);
    assert.deepEqual(await one.call('read_inbox'), [], 'never its own send back');
    const claims = readAudit(bus.audit).filter((row) => row.op === 'session').map((row) => row.body_preview);
    assert.ok(claims.includes("session claim: 'repo-a/claude-1' started") && claims.includes("session claim: 'repo-a/claude-2' started"));
    const rendered = spawnSync(process.execPath, [CLI, 'agents'], { env: bus.env, encoding: 'utf8' }).stdout;
    assert.match(rendered, /\n {4}repo-a\/claude-1\s+running {2}seen/);
    assert.match(rendered, /\n {4}repo-a\/claude-2\s+running {2}seen/);
  }));

test('AGENT_BUS_SESSION and AGENT_BUS_INSTANCE pin an address; AGENT_BUS_SESSIONS=0 shares one', () =>
  withServers(async (bus, open) => {
    const labelled = await open(claudeEnv(bus, 'k-1', { AGENT_BUS_SESSION: 'Release Notes' }));
    assert.equal((await labelled.call<Whoami>('whoami')).name, 'repo-a/claude-release-notes');
    const numbered = await open(claudeEnv(bus, 'k-2', { AGENT_BUS_INSTANCE: '07' }));
    assert.equal((await numbered.call<Whoami>('whoami')).name, 'repo-a/claude-7');
    const clash = await open(claudeEnv(bus, 'k-3', { AGENT_BUS_INSTANCE: '7' }));
    const me = await clash.call<Whoami>('whoami');
    assert.equal(me.name, 'repo-a/claude-1');
    assert.match(me.warnings.join(' '), /'repo-a\/claude-7' is held by another running session/);
    const shared = await open(claudeEnv(bus, 'k-4', { AGENT_BUS_SESSIONS: '0' }));
    assert.equal((await shared.call<Whoami>('whoami')).name, 'repo-a/claude');
    assert.match(await shared.fails('set_session', { label: 'mine' }), /not a session of a client/);
  }));

test('a label moves unread mail with the session; a topic is set and cleared', () =>
  withServers(async (bus, open) => {
    const worker = await open(claudeEnv(bus, 'k-1'));
    const human = await open({ ...bus.env, AGENT_BUS_NAME: 'human', AGENT_BUS_REPO: '/repos/h' });
    await human.call('send_message', { to: 'repo-a/claude-1', body: 'waiting for you' });
    const renamed = await worker.call<{ name: string; client_address: string; topic: string | null }>('set_session', { label: 'Front End', topic: 'login form' });
    assert.deepEqual(renamed, { name: 'repo-a/claude-front-end', client_address: 'repo-a/claude', topic: 'login form' });
    assert.equal((await worker.call<Whoami>('whoami')).name, 'repo-a/claude-front-end');
    assert.deepEqual((await worker.call<Message[]>('read_inbox')).map((message) => message.body), ['waiting for you']);
    const names = (await human.call<Array<{ name: string; topic: string | null }>>('list_agents', { group: 'repo-a' })).map((row) => [row.name, row.topic]);
    assert.deepEqual(names, [['repo-a/claude', null], ['repo-a/claude-front-end', 'login form']]);
    assert.equal((await worker.call<{ topic: string | null }>('set_session', { topic: '' })).topic, null);
    const rename = readAudit(bus.audit).find((row) => row.op === 'session' && String(row.body_preview).startsWith('session rename'));
    assert.equal(rename?.body_preview, "session rename: 'repo-a/claude-1' is now 'repo-a/claude-front-end'; 1 unread message(s) moved");
    const note = await human.call<Sent>('send_message', { to: 'repo-a/claude-1', body: 'x' }).catch((error: Error) => error.message);
    assert.match(String(note), /no agent or group named 'repo-a\/claude-1'/);
  }));

test("a killed server's numbered address hands its mail to the client address", () =>
  withServers(async (bus, open) => {
    const doomed = await open(claudeEnv(bus, 'k-1'));
    const human = await open({ ...bus.env, AGENT_BUS_NAME: 'human', AGENT_BUS_REPO: '/repos/h' });
    assert.equal((await doomed.call<Whoami>('whoami')).name, 'repo-a/claude-1');
    await human.call('send_message', { to: 'repo-a/claude-1', body: 'left behind' });
    const pid = doomed.pid();
    assert.ok(pid);
    process.kill(pid, 'SIGKILL');
    await waitForExit(pid);
    const listed = await human.call<Array<{ name: string; live: boolean | null }>>('list_agents', { group: 'repo-a' });
    assert.equal(listed.find((row) => row.name === 'repo-a/claude-1')?.live, false, 'judged ended from the process table');
    const note = await human.call<Sent>('send_message', { to: 'repo-a/claude-1', body: 'too late' });
    assert.ok(note.recipients.length === 1);
    const rendered = spawnSync(process.execPath, [CLI, 'agents'], { env: bus.env, encoding: 'utf8' }).stdout;
    assert.match(rendered, /\n {4}repo-a\/claude-1\s+gone [^\n]*seen/);
    const successor = await open(claudeEnv(bus, 'k-2'));
    const me = await successor.call<Whoami>('whoami');
    assert.equal(me.name, 'repo-a/claude-2', 'a fresh number, not the dead one');
    const bodies = (await successor.call<Message[]>('read_inbox')).map((message) => message.body).sort();
    assert.deepEqual(bodies, ['left behind', 'too late']);
    const ended = readAudit(bus.audit).find((row) => row.op === 'session' && String(row.body_preview).startsWith("session end: 'repo-a/claude-1'"));
    assert.match(String(ended?.body_preview), /2 unread message\(s\) moved to 'repo-a\/claude'/);
  }));

test('a session that comes back inside the resume window gets its address back', () =>
  withServers(async (bus, open) => {
    const first = await open(claudeEnv(bus, 'resumed-conversation'));
    const other = await open(claudeEnv(bus, 'someone-else'));
    assert.equal((await first.call<Whoami>('whoami')).name, 'repo-a/claude-1');
    assert.equal((await other.call<Whoami>('whoami')).name, 'repo-a/claude-2');
    const pid = first.pid();
    await first.close();
    if (pid) await waitForExit(pid);
    const newcomer = await open(claudeEnv(bus, 'brand-new'));
    assert.equal((await newcomer.call<Whoami>('whoami')).name, 'repo-a/claude-3', 'an ended address stays reserved');
    const back = await open(claudeEnv(bus, 'resumed-conversation'));
    assert.equal((await back.call<Whoami>('whoami')).name, 'repo-a/claude-1');
  }));

test('with AGENT_BUS_SESSION_RESUME_HOURS=0 an ended number is free again', () =>
  withServers(async (bus, open) => {
    const first = await open(claudeEnv(bus, 'k-1', { AGENT_BUS_SESSION_RESUME_HOURS: '0' }));
    assert.equal((await first.call<Whoami>('whoami')).name, 'repo-a/claude-1');
    const pid = first.pid();
    await first.close();
    if (pid) await waitForExit(pid);
    const next = await open(claudeEnv(bus, 'k-2', { AGENT_BUS_SESSION_RESUME_HOURS: '0' }));
    assert.equal((await next.call<Whoami>('whoami')).name, 'repo-a/claude-1');
  }));

test('Codex threads are bound to an address at their first tool call, from the thread id in the call\'s metadata', () =>
  withServers(async (bus, open) => {
    const repo = join(bus.dir, 'web-app');
    mkdirSync(join(repo, '.git'), { recursive: true });
    const env = { ...bus.env, AGENT_BUS_CLIENT: 'codex' };
    const threadA = await open(env, [], repo);
    const threadB = await open(env, [], repo);
    const whoami = async (session: McpSession, meta: Record<string, unknown>): Promise<string> => {
      const result = await session.client.callTool({ name: 'whoami', arguments: {}, _meta: meta });
      return (JSON.parse((result.content as Array<{ text: string }>)[0]?.text ?? '{}') as Whoami).name;
    };
    assert.equal(await whoami(threadA, { threadId: 'thread-a' }), 'web-app/codex-1');
    // What Codex 0.171 sends: the thread id inside its turn metadata.
    const codexMeta = { callId: 'call_1', 'x-codex-turn-metadata': { session_id: 'thread-b', thread_id: 'thread-b', turn_id: 'turn-1' } };
    assert.equal(await whoami(threadB, codexMeta), 'web-app/codex-2');
    assert.equal(await whoami(threadA, { threadId: 'thread-a' }), 'web-app/codex-1');
    assert.deepEqual(bus.rows("SELECT name, session_key FROM sessions WHERE client_address = 'web-app/codex' ORDER BY name"), [
      { name: 'web-app/codex-1', session_key: 'thread-a' },
      { name: 'web-app/codex-2', session_key: 'thread-b' },
    ]);
    // So the thread's hooks find its address by the payload's session id.
    assert.equal(runCli(['send', 'for thread b', '--to', 'web-app/codex-2'], { env: bus.env }).code, 0);
    const hook = runCli(['hook-user-prompt', '--client', 'codex'], { env: bus.env, cwd: repo, input: JSON.stringify({ session_id: 'thread-b', cwd: repo, hook_event_name: 'UserPromptSubmit' }) });
    assert.equal(hook.code, 0, hook.stderr);
    assert.match(hook.stdout, /for thread b/);
  }));

test('identity from --client and the repo, .agent-bus-name, and a warning for a name moved between repos', () =>
  withServers(async (bus, open) => {
    const repo = join(bus.dir, 'My_Repo.dev');
    mkdirSync(join(repo, '.git'), { recursive: true });
    mkdirSync(join(repo, 'src', 'deep'), { recursive: true });
    const derived = await open({ ...bus.env }, ['--client', 'claude'], join(repo, 'src', 'deep'));
    const me = await derived.call<Whoami>('whoami');
    assert.equal(me.name, 'my-repo-dev/claude-1');
    assert.equal(me.repo_path, repo);
    const pinned = join(bus.dir, 'other');
    mkdirSync(join(pinned, '.git'), { recursive: true });
    writeFileSync(join(pinned, '.agent-bus-name'), 'My Repo.dev\nignored second line\n');
    const clash = await open({ ...bus.env, AGENT_BUS_CLIENT: 'claude', CLAUDE_CODE_SESSION_ID: 'x' }, [], pinned);
    const them = await clash.call<Whoami>('whoami');
    assert.equal(them.client_address, 'my-repo-dev/claude');
    assert.match(them.warnings.join(' '), /'my-repo-dev\/claude' was last registered for .*My_Repo\.dev, not .*other: both repos share one inbox/);
    assert.match(clash.stderr(), /warning: 'my-repo-dev\/claude' was last registered/);
  }));

test('no identity, a bad setting or an opted-out repo: the server exits 2 and says why', () => {
  const bus = tempBus();
  try {
    const serve = (env: NodeJS.ProcessEnv, cwd: string, args: string[] = []) =>
      spawnSync(process.execPath, [CLI, 'serve', ...args], { env, cwd, encoding: 'utf8', input: '', timeout: 20_000 });
    const none = serve(bus.env, bus.env.HOME as string);
    assert.equal(none.status, 2);
    assert.equal(none.stdout, '', 'nothing but protocol on stdout');
    assert.match(none.stderr, /cannot tell which agent this is: set AGENT_BUS_NAME.*--client.*env block/);
    const badClient = serve(bus.env, bus.env.HOME as string, ['--client', 'Claude']);
    assert.equal(badClient.status, 2);
    assert.match(badClient.stderr, /invalid client id/);
    const badInstance = serve({ ...bus.env, AGENT_BUS_NAME: 'r/claude', AGENT_BUS_INSTANCE: '100' }, bus.env.HOME as string);
    assert.equal(badInstance.status, 2);
    assert.match(badInstance.stderr, /AGENT_BUS_INSTANCE must be a number 1\.\.99, got '100'/);
    const repo = join(bus.dir, 'private');
    mkdirSync(join(repo, '.git'), { recursive: true });
    mkdirSync(join(repo, 'sub'));
    writeFileSync(join(repo, '.agent-bus-ignore'), '');
    for (const env of [bus.env, { ...bus.env, AGENT_BUS_NAME: 'private/claude' }]) {
      const opted = serve(env, join(repo, 'sub'), ['--client', 'claude']);
      assert.equal(opted.status, 2);
      assert.match(opted.stderr, /private is opted out of the bus by its \.agent-bus-ignore file\. Remove that file/);
      assert.doesNotMatch(opted.stderr, /env block/);
    }
  } finally {
    bus.cleanup();
  }
});

test('stdout carries only JSON-RPC, and reads do not rewrite last_seen on every call', () =>
  withServers(async (bus, open) => {
    const child = spawn(process.execPath, [CLI, 'serve'], { env: { ...bus.env, AGENT_BUS_NAME: 'alpha', AGENT_BUS_REPO: '/r' }, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const request = (id: number, method: string, params: unknown) => child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    request(1, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } });
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
    request(2, 'tools/call', { name: 'whoami', arguments: {} });
    request(3, 'tools/call', { name: 'send_message', arguments: { to: 'nobody', body: 'x' } });
    await waitUntil(() => out.split('\n').filter(Boolean).length >= 3, () => `three answers; got: ${out}`, 10_000, 20);
    child.stdin.end();
    await new Promise((resolve) => child.on('close', resolve));
    const lines = out.split('\n').filter(Boolean);
    assert.equal(lines.length, 3);
    for (const line of lines) assert.equal((JSON.parse(line) as { jsonrpc: string }).jsonrpc, '2.0');

    const alpha = await open({ ...bus.env, AGENT_BUS_NAME: 'alpha', AGENT_BUS_REPO: '/r' });
    const seen = async (): Promise<string> => (await alpha.call<Array<{ name: string; last_seen: string }>>('list_agents')).find((row) => row.name === 'alpha')?.last_seen ?? '';
    const first = await seen();
    await alpha.call('read_inbox');
    await alpha.call('whoami');
    assert.equal(await seen(), first, 'within the touch interval, calls leave last_seen alone');
  }));

test('servers starting at the same moment each get their own number', () =>
  withServers(async (bus, open) => {
    const servers = await Promise.all(['a', 'b', 'c', 'd'].map((key) => open(claudeEnv(bus, `k-${key}`))));
    const names = await Promise.all(servers.map(async (server) => (await server.call<Whoami>('whoami')).name));
    assert.deepEqual([...names].sort(), ['repo-a/claude-1', 'repo-a/claude-2', 'repo-a/claude-3', 'repo-a/claude-4']);
  }));

test('set_session racing for one label: one wins, the other is told it is taken', () =>
  withServers(async (bus, open) => {
    const one = await open(claudeEnv(bus, 'k-1'));
    const two = await open(claudeEnv(bus, 'k-2'));
    const outcomes = await Promise.allSettled([one.call('set_session', { label: 'frontend' }), two.call('set_session', { label: 'frontend' })]);
    assert.deepEqual(outcomes.map((outcome) => outcome.status).sort(), ['fulfilled', 'rejected']);
    const refused = outcomes.find((outcome) => outcome.status === 'rejected') as PromiseRejectedResult;
    assert.match(String(refused.reason), /'repo-a\/claude-frontend' is held by another running session/);
  }));

test('SIGTERM ends the server with 143 and gives its numbered address up', () =>
  withServers(async (bus, open) => {
    const doomed = await open(claudeEnv(bus, 'k-1'));
    const human = await open({ ...bus.env, AGENT_BUS_NAME: 'human', AGENT_BUS_REPO: '/repos/h' });
    await human.call('send_message', { to: 'repo-a/claude-1', body: 'pending at shutdown' });
    const pid = doomed.pid();
    assert.ok(pid);
    const exited = new Promise<number | null>((resolve) => {
      const check = setInterval(() => {
        try {
          process.kill(pid, 0);
        } catch {
          clearInterval(check);
          resolve(null);
        }
      }, 20);
    });
    const child = (doomed.transport as unknown as { _process?: { once(event: string, listener: (code: number | null) => void): void } })._process;
    const code = new Promise<number | null>((resolve) => child?.once('exit', resolve));
    process.kill(pid, 'SIGTERM');
    await exited;
    assert.equal(await code, 143);
    const ended = readAudit(bus.audit).find((row) => String(row.body_preview).startsWith("session end: 'repo-a/claude-1' ended"));
    assert.match(String(ended?.body_preview), /1 unread message\(s\) moved to 'repo-a\/claude'/);
  }));

test('a Codex server is on the roster from its start, before any tool call binds its thread', () =>
  withServers(async (bus, open) => {
    const repo = join(bus.dir, 'web-app');
    mkdirSync(join(repo, '.git'), { recursive: true });
    await open({ ...bus.env, AGENT_BUS_CLIENT: 'codex' }, [], repo);
    const sent = spawnSync(process.execPath, [CLI, 'send', 'are you there', '--to', 'web-app/codex', '--json'], { env: bus.env, encoding: 'utf8' });
    assert.equal(sent.status, 0, sent.stderr);
  }));

test('send notes: an address no running session holds, and a client address with no sibling running', () =>
  withServers(async (bus, open) => {
    const alone = await open(claudeEnv(bus, 'k-1'));
    const nobody = await alone.call<Sent>('send_message', { to: '*', body: 'anyone?' });
    assert.deepEqual(nobody.recipients, []);
    assert.equal(nobody.note, 'sent to nobody: no other agent is on the bus yet; agents join when their client starts `agent-bus serve`');
    const labelled = await open(claudeEnv(bus, 'k-2', { AGENT_BUS_SESSION: 'docs' }));
    assert.equal((await labelled.call<Whoami>('whoami')).name, 'repo-a/claude-docs');
    const pid = labelled.pid();
    await labelled.close();
    if (pid) await waitForExit(pid);
    const toEnded = await alone.call<Sent>('send_message', { to: 'repo-a/claude-docs', body: 'for whoever takes docs next' });
    assert.equal(
      toEnded.note,
      "no running session holds 'repo-a/claude-docs'; the message waits until a session takes that name again. To reach whichever session is running, send to 'repo-a/claude'.",
    );
    const toSelf = await alone.call<Sent>('send_message', { to: 'repo-a/claude', body: 'note to a future self' });
    assert.equal(toSelf.note, "no other session of 'repo-a/claude' is running; the next one to start will pick this up");
    // A labelled address keeps its mail for the next session to take the label.
    const next = await open(claudeEnv(bus, 'k-3', { AGENT_BUS_SESSION: 'docs' }));
    assert.equal((await next.call<Whoami>('whoami')).name, 'repo-a/claude-docs');
    const bodies = (await next.call<Message[]>('read_inbox')).map((message) => message.body);
    assert.ok(bodies.includes('for whoever takes docs next'), bodies.join(' | '));
    const ended = readAudit(bus.audit).find((row) => String(row.body_preview).startsWith("session end: 'repo-a/claude-docs'"));
    assert.equal(ended?.body_preview, "session end: 'repo-a/claude-docs' ended; its address and mail wait for that label to be taken again");
  }));
