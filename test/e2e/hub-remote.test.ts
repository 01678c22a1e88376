/**
 * Two machines on loopback: a hub with its own HOME and database, and a
 * second HOME that holds only AGENT_BUS_URL and AGENT_BUS_TOKEN (or what
 * `agent-bus login` saved). The remote CLI and hooks talk to the hub alone.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createServer as createNetServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { spawn } from 'node:child_process';
import { CLI, ON_POSTGRES, runCli, runCliAsync, tempBus, messageLines } from '../helpers/bus-env.js';
import { createToken, remoteWatcher, startHub, untilWaiting, withHub } from '../helpers/hub.js';
import { hasExited, sleep, waitForExit, waitUntil } from '../helpers/wait.js';
import { connect } from '../helpers/mcp.js';
import { repoIn } from '../helpers/reservations.js';

/** Every remote machine's HOME, removed when the file's tests are done. */
const homes: string[] = [];
after(() => {
  for (const home of homes) rmSync(home, { recursive: true, force: true });
});

function remoteMachine(url: string, token: string | null): { home: string; env: NodeJS.ProcessEnv } {
  const home = mkdtempSync(join(tmpdir(), 'agent-bus-remote-'));
  homes.push(home);
  return { home, env: { PATH: process.env.PATH, HOME: home, NO_COLOR: '1', AGENT_BUS_URL: url, ...(token === null ? {} : { AGENT_BUS_TOKEN: token }) } };
}

test('the remote CLI sends, reads and lists through the hub; --name is the token\'s own agent or nothing is done; the remote machine never makes a bus of its own', withHub({}, async (bus, hub) => {
  const alice = createToken(bus, 'shop/claude');
  createToken(bus, 'lab/codex');
  const remote = remoteMachine(hub.url, alice.token);
  const sent = runCli(['send', 'from the other machine', '--to', 'lab/codex'], { env: remote.env });
  assert.equal(sent.code, 0, sent.stderr);
  assert.match(sent.stdout, /shop\/claude\s+→ lab\/codex\s+from the other machine/);
  assert.deepEqual(bus.rows("SELECT from_agent, to_agent FROM messages WHERE body = 'from the other machine'"), [{ from_agent: 'shop/claude', to_agent: 'lab/codex' }]);
  assert.equal(runCli(['send', 'for the remote one', '--to', 'shop/claude'], { env: bus.env }).code, 0);
  const peeked = runCli(['inbox', '--peek', '--json'], { env: remote.env });
  assert.equal(peeked.code, 0, peeked.stderr);
  assert.deepEqual((JSON.parse(peeked.stdout) as Array<{ body: string }>).map((row) => row.body), ['for the remote one']);
  const read = runCli(['inbox'], { env: remote.env });
  assert.match(read.stdout, /human → shop\/claude/);
  assert.match(read.stdout, /for the remote one/);
  assert.match(runCli(['inbox'], { env: remote.env }).stdout, /\(no messages for shop\/claude\)/);
  const agents = runCli(['agents', '--json'], { env: remote.env });
  assert.deepEqual((JSON.parse(agents.stdout) as Array<{ name: string }>).map((row) => row.name).sort(), ['human', 'lab/codex', 'shop/claude']);
  const before = bus.rows('SELECT COUNT(*) AS n FROM messages');
  for (const args of [['send', 'spoofed', '--to', 'lab/codex', '--name', 'lab/codex'], ['inbox', '--name', 'lab/codex']]) {
    const refused = runCli(args, { env: remote.env });
    assert.equal(refused.code, 1, args.join(' '));
    assert.equal(messageLines(refused.stderr).length, 1, refused.stderr);
    assert.match(refused.stderr, /this token speaks for 'shop\/claude', not 'lab\/codex'; nothing was done/);
  }
  assert.deepEqual(bus.rows('SELECT COUNT(*) AS n FROM messages'), before, 'nothing was sent');
  // A name that is no name is refused as such, before anything is looked at.
  const garbled = await fetch(`${hub.url}/mcp?as=${encodeURIComponent('shop/claude-a b')}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${alice.token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'whoami', arguments: {} } }),
  });
  assert.equal(garbled.status, 400);
  assert.match(((await garbled.json()) as { error_description: string }).error_description, /is not a name/);
  assert.match(runCli(['inbox', '--peek', '--name', 'lab/codex'], { env: { ...remote.env, AGENT_BUS_TOKEN: createToken(bus, 'lab/codex').token } }).stdout, /spoofed|from the other machine/);
  assert.deepEqual(readdirSync(remote.home), [], 'the remote machine has no bus folder, database or audit log');
}));

test('a remote prompt hook shows the mail waiting, a stop hook holds the turn for it; with the hub down or slow, hooks exit 0 in silence within AGENT_BUS_HOOK_TIMEOUT_MS and the CLI says it cannot reach the hub', async () => {
  const bus = tempBus();
  const hub = await startHub(bus);
  try {
    const { token } = createToken(bus, 'shop/claude');
    const remote = remoteMachine(hub.url, token);
    assert.equal(runCli(['send', 'before the turn', '--to', 'shop/claude'], { env: bus.env }).code, 0);
    const prompt = runCli(['hook-user-prompt', '--client', 'claude'], { env: remote.env, input: '{"session_id":"s-1","hook_event_name":"UserPromptSubmit"}' });
    assert.equal(prompt.code, 0, prompt.stderr);
    assert.match(prompt.stdout, /1 new message\(s\)/);
    assert.match(prompt.stdout, /from human .*: before the turn/);
    assert.equal(prompt.stderr, '');
    assert.equal(bus.rows("SELECT read_at FROM messages WHERE body = 'before the turn' AND read_at IS NOT NULL").length, 1, 'read on the hub');
    assert.deepEqual(bus.rows("SELECT delivered_via, read_via FROM messages WHERE body = 'before the turn'"), [{ delivered_via: 'hook-user-prompt', read_via: 'hook-user-prompt' }]);
    const again = runCli(['hook-user-prompt', '--client', 'claude'], { env: remote.env, input: '{"session_id":"s-1"}' });
    assert.equal(again.stdout, '');
    assert.equal(runCli(['send', 'act on this', '--to', 'shop/claude', '--name', 'lab/codex'], { env: bus.env }).code, 0);
    // A peek over the hub says it would block and takes nothing.
    const peek = runCli(['hook-stop', '--client', 'opencode', '--peek'], { env: remote.env, input: '{"session_id":"s-1"}' });
    assert.equal(peek.code, 0, peek.stderr);
    assert.equal((JSON.parse(peek.stdout) as { decision: string }).decision, 'block');
    assert.equal(bus.rows("SELECT message_id FROM messages WHERE body = 'act on this' AND read_at IS NULL AND delivered_at IS NULL").length, 1, 'a peek takes nothing and records no receipt');
    const stop = runCli(['hook-stop', '--client', 'claude'], { env: remote.env, input: '{"session_id":"s-1"}' });
    assert.equal(stop.code, 0, stop.stderr);
    assert.equal((JSON.parse(stop.stdout) as { decision: string }).decision, 'block');
    assert.match(stop.stdout, /act on this/);
    assert.deepEqual(bus.rows("SELECT delivered_via FROM messages WHERE body = 'act on this'"), [{ delivered_via: 'hook-stop' }]);
    assert.deepEqual(readdirSync(remote.home), []);
  } finally {
    await hub.stop();
  }
  // The hub is gone: a hook costs at most its timeout and prints nothing; the CLI fails in one line.
  const gone = remoteMachine(hub.url, 'abt_0000000000000000_' + 'A'.repeat(43));
  for (const hook of ['hook-user-prompt', 'hook-stop', 'hook-session-start', 'hook-pre-tool']) {
    const started = Date.now();
    const result = runCli([hook, '--client', 'claude'], { env: { ...gone.env, AGENT_BUS_HOOK_TIMEOUT_MS: '500' }, input: '{"session_id":"s-1"}' });
    assert.equal(result.code, 0, hook);
    assert.equal(result.stderr, '', hook);
    assert.ok(result.stdout === '' || result.stdout === '{}\n' || !/message/.test(result.stdout), `${hook}: ${result.stdout}`);
    assert.ok(Date.now() - started < 5_000, `${hook} returned quickly`);
  }
  const cli = runCli(['send', 'hello', '--to', 'lab/codex'], { env: gone.env });
  assert.equal(cli.code, 1);
  assert.equal(messageLines(cli.stderr).length, 1, cli.stderr);
  assert.match(cli.stderr, new RegExp(`cannot reach the hub at ${hub.url.replace(/[.]/g, '\\.')}: `));
  bus.cleanup();
});

test('a hub that accepts and never answers holds a remote hook no longer than AGENT_BUS_HOOK_TIMEOUT_MS', async () => {
  const sockets: Socket[] = [];
  const silent = createNetServer((socket) => sockets.push(socket));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  try {
    const port = (silent.address() as { port: number }).port;
    const remote = remoteMachine(`http://127.0.0.1:${port}`, 'abt_0000000000000000_' + 'A'.repeat(43));
    const started = Date.now();
    const result = await runCliAsync(['hook-user-prompt', '--client', 'claude'], { env: { ...remote.env, AGENT_BUS_HOOK_TIMEOUT_MS: '700' }, input: '{"session_id":"s-1"}' });
    const took = Date.now() - started;
    assert.equal(result.code, 0);
    assert.equal(result.stdout + result.stderr, '');
    assert.ok(took >= 650 && took < 4_000, `took ${took} ms`);
  } finally {
    for (const socket of sockets) socket.destroy();
    silent.close();
  }
});

test('login saves the hub privately once the hub takes the token; commands use it without the variables; logout forgets it; a refused token saves nothing', withHub({}, async (bus, hub) => {
  const { token } = createToken(bus, 'shop/claude');
  const home = mkdtempSync(join(tmpdir(), 'agent-bus-remote-'));
  homes.push(home);
  const env = { PATH: process.env.PATH, HOME: home, NO_COLOR: '1' };
  const saved = join(home, '.claude-agent-bus', 'hub.json');
  const refused = runCli(['login', hub.url, '--token', 'abt_0000000000000000_' + 'A'.repeat(43)], { env });
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /refused the token: no such token/);
  assert.ok(!existsSync(saved), 'nothing saved');
  const login = runCli(['login', hub.url, '--token', token], { env });
  assert.equal(login.code, 0, login.stderr);
  assert.match(login.stdout, new RegExp(`logged in to ${hub.url.replace(/[.]/g, '\\.')} as shop/claude`));
  assert.ok(!login.stdout.includes(token), 'the token is not printed');
  assert.equal((statSync(saved).mode & 0o777).toString(8), '600');
  assert.equal((statSync(join(home, '.claude-agent-bus')).mode & 0o777).toString(8), '700');
  const sent = runCli(['send', 'via the saved login', '--to', 'shop/claude'], { env });
  assert.equal(sent.code, 0, sent.stderr);
  assert.equal(bus.rows("SELECT body FROM messages WHERE body = 'via the saved login'").length, 1);
  assert.deepEqual(readdirSync(join(home, '.claude-agent-bus')), ['hub.json'], 'no database beside the login');
  assert.equal(runCli(['logout'], { env }).code, 0);
  assert.ok(!existsSync(saved));
  const again = runCli(['logout'], { env });
  assert.equal(again.code, 1);
  assert.match(again.stderr, /not logged in/);
}));

test('a remote hook-watch waits at the hub and exits 10 with the mail as soon as it is sent anywhere on the bus, not at a poll', withHub({ AGENT_BUS_WATCH_POLL_SECONDS: '60' }, async (bus, hub) => {
  // A one-minute fallback poll: only the store's change feed can wake it fast.
  const { token } = createToken(bus, 'shop/claude');
  const remote = remoteMachine(hub.url, token);
  const watcher = remoteWatcher(remote.env);
  // The watcher is waiting at the hub once the hub counts a wait open.
  await untilWaiting(hub.url, 'the watcher');
  const sentAt = Date.now();
  assert.equal(runCli(['send', 'wake up over there', '--to', 'shop/claude'], { env: bus.env }).code, 0);
  assert.equal(await watcher.exited, 10, watcher.said());
  assert.ok(Date.now() - sentAt < 5_000, 'woken by the change feed, not the one-minute poll');
  assert.match(watcher.said(), /wake up over there/);
  assert.equal(bus.rows("SELECT body FROM messages WHERE body = 'wake up over there' AND read_at IS NOT NULL").length, 1, 'taken, as a local watcher takes it');
  assert.deepEqual(bus.rows("SELECT delivered_via FROM messages WHERE body = 'wake up over there'"), [{ delivered_via: 'hook-watch' }]);
  assert.deepEqual(readdirSync(remote.home), []);
  // SIGTERM drains the hub at once: none of its loops waits out the one-minute poll it was between waits of.
  const stopping = Date.now();
  assert.equal(await hub.stop(), 0);
  assert.ok(Date.now() - stopping < 10_000, `the hub took ${Date.now() - stopping} ms to stop`);
}));

test('a remote hook-watch whose client quits ends its wait at the hub and takes none of the mail sent after', withHub({ AGENT_BUS_WATCH_POLL_SECONDS: '60' }, async (bus, hub) => {
  const { token } = createToken(bus, 'shop/claude');
  const remote = remoteMachine(hub.url, token);
  // A stand-in client: it starts the watcher, as a client does, and quits while the watcher waits.
  const client = spawn(
    process.execPath,
    [
      '-e',
      `const { spawn } = require('node:child_process');
       const watcher = spawn(process.execPath, [process.argv[1], 'hook-watch', '--client', 'claude', '--max-seconds', '60'], { stdio: ['pipe', 'ignore', 'ignore'] });
       watcher.stdin.end('{"session_id":"s-1"}');
       console.log(watcher.pid);
       process.stdin.once('data', () => process.exit(0));`,
      CLI,
    ],
    { env: { ...remote.env, CLAUDE_CODE_ENTRYPOINT: 'cli' }, stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const watcherPid = Number(await new Promise<string>((resolve) => client.stdout.once('data', (chunk: Buffer) => resolve(chunk.toString().trim()))));
  await untilWaiting(hub.url, 'the watcher');
  client.stdin.end('quit\n');
  await new Promise((resolve) => client.once('close', resolve));
  // The watcher sees its client gone within a moment, and the hub stops waiting for it.
  await untilWaiting(hub.url, 'the watcher (gone)', 0);
  assert.equal(runCli(['send', 'for the next session', '--to', 'shop/claude'], { env: bus.env }).code, 0);
  // Gone, or a zombie no one reaps yet (its parent has gone too): either way it has exited, and
  // nothing is left that could take the mail.
  await waitForExit(watcherPid, 'the watcher to exit', 5_000);
  assert.ok(hasExited(watcherPid), 'the watcher exited');
  assert.equal(bus.rows("SELECT body FROM messages WHERE body = 'for the next session' AND read_at IS NULL").length, 1, 'the mail waits for a model to see it');
}));

test("serve on a machine set to use a hub relays the client's MCP session to the hub: the tools run there as the token's agent, each conversation id its own session address; a hub it cannot reach answers each call with an error at once", withHub({}, async (bus, hub) => {
  const claude = createToken(bus, 'shop/claude');
  createToken(bus, 'lab/codex');
  const remote = remoteMachine(hub.url, claude.token);
  const relay = await connect({ ...remote.env, CLAUDE_CODE_SESSION_ID: 'conversation-one' }, { args: ['--client', 'claude'] });
  let first = '';
  try {
    const me = await relay.call<{ name: string; mcp_client: string | null }>('whoami');
    assert.match(me.name, /^shop\/claude-\d+$/, 'the conversation holds a session address of the token\'s client address');
    first = me.name;
    const sent = await relay.call<{ message_id: string }>('send_message', { to: 'lab/codex', body: 'through the relay' });
    assert.deepEqual(bus.rows(`SELECT from_agent, to_agent FROM messages WHERE message_id = '${sent.message_id}'`), [{ from_agent: me.name, to_agent: 'lab/codex' }]);
    assert.equal(runCli(['send', 'for the relayed session', '--to', me.name], { env: bus.env }).code, 0);
    const inbox = await relay.call<Array<{ body: string }>>('read_inbox');
    assert.deepEqual(inbox.map((message) => message.body), ['for the relayed session']);
    assert.deepEqual(readdirSync(remote.home), [], 'the relay made no bus of its own');
  } finally {
    await relay.close();
  }
  // A second conversation of the same client is a session of its own.
  const other = await connect({ ...remote.env, CLAUDE_CODE_SESSION_ID: 'conversation-two' }, { args: ['--client', 'claude'] });
  try {
    const me = await other.call<{ name: string }>('whoami');
    assert.match(me.name, /^shop\/claude-\d+$/);
    assert.notEqual(me.name, first, 'another conversation, another session address');
  } finally {
    await other.close();
  }
  // A hub that is not there: the call fails at once with where and why, and the relay stays up for the next.
  const unreachable = await connect(remoteMachine('http://127.0.0.1:1', claude.token).env, { args: ['--client', 'claude'] }).catch((error: unknown) => error as Error);
  assert.ok(unreachable instanceof Error, 'initialize fails without a hub');
  assert.match(unreachable.message, /the hub at http:\/\/127\.0\.0\.1:1 did not take the call/);
}));

test('with a hub set, a command that does not work over the hub yet refuses in one line and opens no local bus; the demo keeps to its scratch bus', () => {
  const remote = remoteMachine('http://127.0.0.1:1', 'abt_0000000000000000_' + 'A'.repeat(43));
  for (const args of [['init']]) {
    const result = runCli(args, { env: { ...remote.env, AGENT_BUS_CHAT_FORCE: '1' }, input: '{}' });
    assert.notEqual(result.code, 0, args.join(' '));
    assert.equal(messageLines(result.stderr).length, 1, result.stderr);
    assert.match(result.stderr, /^agent-bus: this machine is set to use the hub at http:\/\/127\.0\.0\.1:1: wire the repo for it with agent-bus init --remote http:\/\/127\.0\.0\.1:1, or unset AGENT_BUS_URL/);
  }
  // serve relays to the hub there, and needs the token to: without one it says so in one line.
  const untokened = runCli(['serve'], { env: remoteMachine('http://127.0.0.1:1', null).env, input: '' });
  assert.notEqual(untokened.code, 0);
  assert.equal(messageLines(untokened.stderr).length, 1, untokened.stderr);
  assert.match(untokened.stderr, /set to use the hub at http:\/\/127\.0\.0\.1:1, but no token is set: set AGENT_BUS_TOKEN/);
  assert.deepEqual(readdirSync(remote.home), [], 'no local bus was made');
  const demo = runCli(['demo'], { env: remote.env });
  assert.equal(demo.code, 0, demo.stderr);
  assert.deepEqual(readdirSync(remote.home), []);
});

test("two hubs on one database wake each other's watchers: a watcher waiting at one hub wakes on mail sent through the other", { skip: !ON_POSTGRES && 'hubs share a bus across machines through PostgreSQL; this suite runs on SQLite (the PostgreSQL run covers it)' }, async () => {
  const bus = tempBus();
  const first = await startHub(bus, { AGENT_BUS_WATCH_POLL_SECONDS: '60' });
  const second = await startHub(bus, { AGENT_BUS_WATCH_POLL_SECONDS: '60' });
  try {
    const watched = createToken(bus, 'shop/claude');
    const sender = createToken(bus, 'lab/codex');
    const watcher = remoteWatcher(remoteMachine(first.url, watched.token).env);
    await untilWaiting(first.url, 'the watcher');
    const sentAt = Date.now();
    const sent = runCli(['send', 'across the hubs', '--to', 'shop/claude'], { env: remoteMachine(second.url, sender.token).env });
    assert.equal(sent.code, 0, sent.stderr);
    assert.equal(await watcher.exited, 10, watcher.said());
    assert.ok(Date.now() - sentAt < 5_000, 'woken through the shared database, not the one-minute poll');
    assert.match(watcher.said(), /across the hubs/);
  } finally {
    await first.stop();
    await second.stop();
    bus.cleanup();
  }
});

test('over the hub: channel publish and list, notice, brain status, tail and forget act on the hub\'s bus for the token\'s agent; clearing for everyone and forgetting others are refused', withHub({}, async (bus, hub) => {
  const { token, id } = createToken(bus, 'shop/claude');
  createToken(bus, 'lab/codex');
  const remote = remoteMachine(hub.url, token);
  const published = runCli(['channel', 'publish', 'ops', 'deploy at noon', '-s', 'alert', '--source', 'someone-else', '--json'], { env: remote.env });
  assert.equal(published.code, 0, published.stderr);
  assert.equal((JSON.parse(published.stdout) as { source: string }).source, 'shop/claude', 'the source is the token\'s agent');
  assert.equal(runCli(['notice', 'everyone, look'], { env: remote.env }).code, 0);
  assert.deepEqual(bus.rows("SELECT channel, source FROM notices ORDER BY channel NULLS FIRST"), [
    { channel: null, source: 'shop/claude' },
    { channel: 'ops', source: 'shop/claude' },
  ]);
  const channels = JSON.parse(runCli(['channel', 'list', '--json'], { env: remote.env }).stdout) as Array<{ channel: string | null; alert: number }>;
  assert.equal(channels.find((row) => row.channel === 'ops')?.alert, 1);
  const listed = JSON.parse(runCli(['channel', 'list', 'ops', '--json'], { env: remote.env }).stdout) as Array<{ message: string }>;
  assert.deepEqual(listed.map((row) => row.message), ['deploy at noon']);
  const cleared = runCli(['channel', 'clear', '--all'], { env: remote.env });
  assert.equal(cleared.code, 1);
  assert.match(cleared.stderr, /clearing notices for everyone is done on the hub's own machine/);
  assert.equal(bus.rows('SELECT notice_id FROM notices').length, 2, 'nothing cleared');
  const brain = runCli(['brain', 'status', '--json'], { env: remote.env });
  assert.equal(brain.code, 0, brain.stderr);
  assert.equal((JSON.parse(brain.stdout) as { channel: string }).channel, 'brain');
  const tail = runCli(['tail', '--json'], { env: remote.env });
  assert.equal(tail.code, 0, tail.stderr);
  const rows = tail.stdout.trimEnd().split('\n').map((line) => JSON.parse(line) as { op: string; token_id?: string });
  assert.ok(rows.some((row) => row.op === 'notice' && row.token_id === id), 'the hub\'s audit log, with the token id');
  const others = runCli(['forget', 'lab/codex'], { env: remote.env });
  assert.equal(others.code, 1);
  assert.match(others.stderr, /may forget only that name and its sessions, not 'lab\/codex'/);
  assert.equal(bus.rows("SELECT name FROM agents WHERE name = 'lab/codex'").length, 1);
  const status = runCli(['statusline', '--json'], { env: { ...remote.env, AGENT_BUS_CHANNELS: 'ops' }, input: '{"session_id":"s-1"}' });
  assert.equal(status.code, 0, status.stderr);
  assert.deepEqual(JSON.parse(status.stdout), {
    // The token speaks for a client address: the session id s-1 holds a session address of its own.
    name: 'shop/claude-1',
    pending_mail: 0,
    notices: { critical: 0, alert: 1, info: 1 },
    channels: ['ops'],
    channels_layer: 'launch',
    channels_from: 'the launch environment',
    state: 'unknown',
    state_since: null,
    task: null,
  });
  const line = runCli(['statusline'], { env: { ...remote.env, AGENT_BUS_URL: 'http://127.0.0.1:1' }, input: '{}' });
  assert.equal(line.code, 0);
  assert.equal(line.stdout, 'bus (hub unreachable)\n');
  const own = runCli(['forget', 'shop/claude', '--json'], { env: remote.env });
  assert.equal(own.code, 0, own.stderr);
  assert.equal((JSON.parse(own.stdout) as { forgotten: boolean }).forgotten, true);
  assert.deepEqual(readdirSync(remote.home), []);
}));

test('tail -f over the hub shows every send the hub\'s bus stores, from any machine, as it is stored, each once', withHub({ AGENT_BUS_WATCH_POLL_SECONDS: '60' }, async (bus, hub) => {
  const { token } = createToken(bus, 'shop/claude');
  createToken(bus, 'lab/codex');
  const remote = remoteMachine(hub.url, token);
  const follower = spawn(process.execPath, [CLI, 'tail', '-f', '--json', '--limit', '1'], { env: remote.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  follower.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const saw = async (body: string): Promise<number> => {
    const started = Date.now();
    await waitUntil(() => out.includes(`"body_preview":"${body}"`), () => `'${body}'; got: ${out}`, 10_000, 20);
    return Date.now() - started;
  };
  try {
    await untilWaiting(hub.url, 'tail -f');
    assert.equal(runCli(['send', 'from the hub machine', '--to', 'lab/codex'], { env: bus.env }).code, 0);
    assert.ok((await saw('from the hub machine')) < 5_000, 'pushed by the change feed, not the one-minute poll');
    assert.equal(runCli(['send', 'from the remote machine', '--to', 'lab/codex'], { env: remote.env }).code, 0);
    await saw('from the remote machine');
    // Nothing says when the follower has looked again since: a pause for a second copy to show.
    await sleep(500);
    const rows = out.trimEnd().split('\n').map((line) => JSON.parse(line) as { op: string; from: string; body_preview: string });
    assert.deepEqual(rows.filter((row) => row.op === 'send').map((row) => [row.from, row.body_preview]), [
      ['human', 'from the hub machine'],
      ['shop/claude', 'from the remote machine'],
    ]);
    assert.deepEqual(readdirSync(remote.home), []);
  } finally {
    follower.kill('SIGINT');
  }
}));

test('waiting requests have a bound of their own: watchers never take the places of other requests, and past the bound a wait gets 503', withHub({ AGENT_BUS_HTTP_CONCURRENCY: '2', AGENT_BUS_HTTP_WAITS: '3', AGENT_BUS_WATCH_POLL_SECONDS: '60' }, async (bus, hub) => {
  const { token } = createToken(bus, 'shop/claude');
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const wait = () => fetch(`${hub.url}/v1/watch`, { method: 'POST', headers, body: JSON.stringify({ wait_seconds: 5 }) });
  const waiting = [wait(), wait(), wait()];
  await untilWaiting(hub.url, 'three watchers', 3);
  // More waits than work places, and the work still gets through at once.
  const started = Date.now();
  const call = await fetch(`${hub.url}/v1/call`, { method: 'POST', headers, body: JSON.stringify({ op: 'notices.channels' }) });
  assert.equal(call.status, 200);
  await call.body?.cancel();
  assert.ok(Date.now() - started < 2_000, 'not queued behind the waits');
  const refused = await wait();
  assert.equal(refused.status, 503);
  assert.equal(refused.headers.get('retry-after'), '1');
  await refused.body?.cancel();
  // The mail ends the waits: each answers.
  assert.equal(runCli(['send', 'for the waiters', '--to', 'shop/claude'], { env: bus.env }).code, 0);
  const answers = await Promise.all(waiting);
  assert.deepEqual(answers.map((answer) => answer.status), [200, 200, 200]);
  await Promise.all(answers.map((answer) => answer.body?.cancel()));
}));

test('a remote prompt hook shows the notices due to its session by this machine\'s subscriptions, beside its mail: info once, critical at every turn', withHub({}, async (bus, hub) => {
  const { token } = createToken(bus, 'shop/claude');
  const remote = remoteMachine(hub.url, token);
  for (const [severity, message] of [['critical', 'DEPLOY-FROZEN'], ['info', 'NEW-RUNBOOK']] as const) {
    assert.equal(runCli(['channel', 'publish', 'ops', message, '--severity', severity], { env: bus.env }).code, 0);
  }
  assert.equal(runCli(['send', 'mail beside the notices', '--to', 'shop/claude'], { env: bus.env }).code, 0);
  const prompt = (env: NodeJS.ProcessEnv, session: string) => {
    const hook = runCli(['hook-user-prompt', '--client', 'claude'], { env, input: JSON.stringify({ session_id: session, hook_event_name: 'UserPromptSubmit' }) });
    assert.equal(hook.code, 0, hook.stderr);
    return hook.stdout;
  };
  const subscribed = { ...remote.env, AGENT_BUS_CHANNELS: 'ops' };
  const first = prompt(subscribed, 's-1');
  for (const text of ['DEPLOY-FROZEN', 'NEW-RUNBOOK', 'mail beside the notices']) assert.match(first, new RegExp(text));
  const second = prompt(subscribed, 's-1');
  assert.match(second, /DEPLOY-FROZEN/);
  assert.doesNotMatch(second, /NEW-RUNBOOK/, 'an info notice once per session');
  assert.doesNotMatch(prompt(remote.env, 's-2'), /DEPLOY-FROZEN|NEW-RUNBOOK/, 'not subscribed to ops: none of its notices');
}));

/** A POST to one of the hub's own endpoints with a token, as the remote hooks make it. */
async function post(url: string, path: string, token: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const receipt = (bus: ReturnType<typeof tempBus>, body: string): Record<string, unknown> | undefined =>
  bus.rows<Record<string, unknown>>(`SELECT read_at, delivered_at, delivered_via, lease_until FROM messages WHERE body = '${body}'`)[0];

test("a remote hook's mail is delivered only once the remote hook has printed it: the hub's answer alone marks nothing, a confirmation does, a forged one does not", withHub({}, async (bus, hub) => {
  const { token } = createToken(bus, 'shop/claude');
  const intruder = createToken(bus, 'lab/codex');
  assert.equal(runCli(['send', 'printed or not', '--to', 'shop/claude'], { env: bus.env }).code, 0);
  const answered = await post(hub.url, '/v1/hook', token, { kind: 'prompt', client: 'claude', session_key: null });
  assert.equal(answered.status, 200);
  assert.match(String(answered.body.output), /printed or not/);
  const delivery = answered.body.delivery as { lease: string; message_ids: string[]; via: string };
  assert.deepEqual([delivery.via, delivery.message_ids.length], ['hook-user-prompt', 1]);
  const held = receipt(bus, 'printed or not');
  assert.deepEqual([held?.read_at, held?.delivered_at, typeof held?.lease_until], [null, null, 'string'], 'answered, not delivered: leased until the hook says it printed');
  // Another token's confirmation, with the lease it read off the wire, marks nothing: the rows are not its reader's.
  assert.deepEqual((await post(hub.url, '/v1/delivered', intruder.token, { delivery, printed: true })).body, { marked: 0 });
  assert.equal(receipt(bus, 'printed or not')?.read_at, null);
  for (const bad of [{}, { delivery, printed: 'yes' }, { delivery: { ...delivery, via: 'web' }, printed: true }, { delivery: { ...delivery, message_ids: 'all' }, printed: true }]) {
    assert.equal((await post(hub.url, '/v1/delivered', token, bad)).status, 400, JSON.stringify(bad));
  }
  assert.deepEqual((await post(hub.url, '/v1/delivered', token, { delivery, printed: true })).body, { marked: 1 });
  const done = receipt(bus, 'printed or not');
  assert.deepEqual([typeof done?.read_at, done?.delivered_via], ['string', 'hook-user-prompt']);
  assert.deepEqual((await post(hub.url, '/v1/delivered', token, { delivery, printed: true })).body, { marked: 0 }, 'once');
}));

test('a remote hook that cannot print gives the mail back at once: its receipt stays sent and the next turn shows it', withHub({}, async (bus, hub) => {
  const { token } = createToken(bus, 'shop/claude');
  const remote = remoteMachine(hub.url, token);
  assert.equal(runCli(['send', 'must reach the model', '--to', 'shop/claude'], { env: bus.env }).code, 0);
  const child = spawn(process.execPath, [CLI, 'hook-user-prompt', '--client', 'claude'], { env: remote.env, stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdout.destroy();
  child.stdin.end('{"session_id":"s-1"}');
  await new Promise((resolve) => child.on('close', resolve));
  const given = receipt(bus, 'must reach the model');
  assert.deepEqual([given?.read_at, given?.delivered_at, given?.lease_until], [null, null, null], 'not delivered, and not held');
  const next = runCli(['hook-user-prompt', '--client', 'claude'], { env: remote.env, input: '{"session_id":"s-1"}' });
  assert.match(next.stdout, /must reach the model/);
  assert.equal(receipt(bus, 'must reach the model')?.delivered_via, 'hook-user-prompt');
}));

test('a remote pre-tool hook shows urgent mail mid-turn, delivered by hook-pre-tool once it has printed it; plain mail waits; the machine\'s AGENT_BUS_MIDTURN goes with the request', withHub({}, async (bus, hub) => {
  const { token } = createToken(bus, 'shop/claude');
  const remote = remoteMachine(hub.url, token);
  const preTool = async (env: NodeJS.ProcessEnv): Promise<string> => {
    const run = await runCliAsync(['hook-pre-tool', '--client', 'claude'], { env, input: JSON.stringify({ session_id: 's-remote', tool_name: 'Bash', tool_input: { command: 'ls' } }) });
    assert.equal(run.code, 0, run.stderr);
    return run.stdout;
  };
  // The token's agent is on the hub's roster once its first hook has run.
  assert.equal(await preTool(remote.env), '');
  assert.equal(runCli(['send', 'plain for later', '--to', 'shop/claude'], { env: bus.env }).code, 0);
  assert.equal(runCli(['send', 'hold the release', '--to', 'shop/claude', '--urgent'], { env: bus.env }).code, 0);
  assert.equal(await preTool({ ...remote.env, AGENT_BUS_MIDTURN: 'off' }), '', 'off on the agent\'s machine: nothing mid-turn');
  const shown = JSON.parse(await preTool(remote.env)) as { hookSpecificOutput: { additionalContext: string } };
  assert.match(shown.hookSpecificOutput.additionalContext, /1 urgent message\(s\) arrived during this turn[\s\S]*hold the release/);
  assert.doesNotMatch(shown.hookSpecificOutput.additionalContext, /plain for later/);
  assert.deepEqual([typeof receipt(bus, 'hold the release')?.read_at, receipt(bus, 'hold the release')?.delivered_via], ['string', 'hook-pre-tool']);
  assert.equal(receipt(bus, 'plain for later')?.read_at, null);
  assert.equal((await post(hub.url, '/v1/hook', token, { kind: 'pre-tool', client: 'claude', session_key: null, midturn: 'sometimes' })).status, 400);
}));

test("remote hooks report presence with the token's identity: session start idle, a permission prompt waiting, the next tool call working, session end ended", withHub({}, async (bus, hub) => {
  const { token } = createToken(bus, 'shop/claude');
  const remote = remoteMachine(hub.url, token);
  const hook = async (kind: string, payload: object): Promise<string> => {
    const run = await runCliAsync([kind, '--client', 'claude'], { env: { ...remote.env, AGENT_BUS_NAME: 'shop/impostor' }, input: JSON.stringify({ session_id: 's-remote', ...payload }) });
    assert.equal(run.code, 0, run.stderr);
    return run.stdout;
  };
  // The token's client address reads as the session address its session id holds on the hub.
  const state = (): string | undefined => (JSON.parse(runCli(['agents', '--json'], { env: bus.env }).stdout) as Array<{ name: string; state: string }>).find((row) => row.name.startsWith('shop/claude-'))?.state;
  await hook('hook-session-start', { source: 'startup' });
  assert.equal(state(), 'idle');
  await hook('hook-user-prompt', {});
  assert.equal(state(), 'working');
  assert.equal(await hook('hook-notification', { notification_type: 'permission_prompt', message: 'Claude needs your permission to use Bash' }), '');
  assert.equal(state(), 'waiting');
  await hook('hook-pre-tool', { tool_name: 'Bash', tool_input: { command: 'ls' } });
  assert.equal(state(), 'working');
  // The session's status line says so, as the hub knows it.
  assert.match(runCli(['statusline'], { env: remote.env, input: '{"session_id":"s-remote"}' }).stdout, /^bus shop\/claude-\d+ · working just now · ch /);
  assert.equal(await hook('hook-session-end', { reason: 'other' }), '');
  assert.equal(state(), 'ended');
  assert.equal((JSON.parse(runCli(['agents', '--json'], { env: bus.env }).stdout) as Array<{ name: string }>).some((row) => row.name === 'shop/impostor'), false, 'the name is the token\'s');
  assert.equal((await post(hub.url, '/v1/hook', token, { kind: 'notification', client: 'claude', session_key: null, notification: 42 })).status, 400);
}));

test("a remote Gemini CLI's pre-tool hook, which runs before and after each call, shows urgent mail and notices only after the call, where its model sees them", withHub({}, async (bus, hub) => {
  const { token } = createToken(bus, 'shop/gemini');
  const remote = remoteMachine(hub.url, token);
  const tool = async (event: string): Promise<string> => {
    const input = JSON.stringify({ session_id: 'g-remote', hook_event_name: event, tool_name: 'read_file', tool_input: { file_path: 'README.md' } });
    const run = await runCliAsync(['hook-pre-tool', '--client', 'gemini'], { env: { ...remote.env, AGENT_BUS_CHANNELS: 'brain' }, input });
    assert.equal(run.code, 0, run.stderr);
    return run.stdout;
  };
  assert.equal(await tool('AfterTool'), '', 'its agent is on the hub once a hook has run');
  assert.equal(runCli(['send', 'hold the release', '--to', 'shop/gemini', '--urgent'], { env: bus.env }).code, 0);
  assert.equal(runCli(['channel', 'publish', 'brain', 'BRAIN-CRITICAL', '-s', 'critical'], { env: bus.env }).code, 0);
  assert.equal(await tool('BeforeTool'), '', 'before the call its model would see nothing: nothing is shown or taken');
  assert.equal(receipt(bus, 'hold the release')?.read_at, null);
  const shown = JSON.parse(await tool('AfterTool')) as { hookSpecificOutput: { hookEventName: string; additionalContext: string } };
  assert.equal(shown.hookSpecificOutput.hookEventName, 'AfterTool');
  assert.match(shown.hookSpecificOutput.additionalContext, /hold the release[\s\S]*BRAIN-CRITICAL|BRAIN-CRITICAL[\s\S]*hold the release/);
  assert.equal(receipt(bus, 'hold the release')?.delivered_via, 'hook-pre-tool');
  assert.equal((await post(hub.url, '/v1/hook', token, { kind: 'pre-tool', client: 'gemini', session_key: null, pre_tool_part: 'sometimes' })).status, 400);

  // Its stop hook's limit on the turns it starts in a row is this machine's; the hub keeps the count.
  const stop = async (): Promise<string> => {
    const run = await runCliAsync(['hook-stop', '--client', 'gemini'], { env: { ...remote.env, AGENT_BUS_STOP_KEEPS: '1' }, input: JSON.stringify({ session_id: 'g-remote', hook_event_name: 'AfterAgent', prompt: 'go', stop_hook_active: true }) });
    assert.equal(run.code, 0, run.stderr);
    return run.stdout;
  };
  assert.equal(runCli(['send', 'review this', '--to', 'shop/gemini', '--name', 'shop/codex'], { env: bus.env }).code, 0);
  const kept = JSON.parse(await stop()) as { decision: string; reason: string };
  assert.deepEqual([kept.decision, /review this[\s\S]*1 of 1 turns in a row\.$/.test(kept.reason)], ['deny', true]);
  assert.equal(runCli(['send', 'and this', '--to', 'shop/gemini', '--name', 'shop/codex'], { env: bus.env }).code, 0);
  assert.equal(await stop(), '', 'past the limit the turn ends');
  assert.equal(receipt(bus, 'and this')?.read_at, null);
  assert.equal((await post(hub.url, '/v1/hook', token, { kind: 'stop', client: 'gemini', session_key: null, stop_keeps: -1 })).status, 400);
}));

test("a relay answers its client's hook calls (client_hook) through the hub, in JSON: the mail at a prompt, delivered once shown; another's reserved file refused, its path read on this machine; a model's call refused; the tool listed beside the hub's", withHub({}, async (bus, hub) => {
  const claude = createToken(bus, 'shop/claude');
  const codex = createToken(bus, 'shop/codex');
  const remote = tempBus({ AGENT_BUS_URL: hub.url, AGENT_BUS_TOKEN: claude.token });
  try {
    const root = repoIn(remote);
    const held = runCli(['reserve', 'src/auth.ts', '--reason', 'rewriting login'], { env: { ...remote.env, AGENT_BUS_TOKEN: codex.token }, cwd: root });
    assert.equal(held.code, 0, held.stderr);
    const relay = await connect({ ...remote.env, CLAUDE_CODE_SESSION_ID: 'relayed-1' }, { args: ['--client', 'claude'], cwd: root });
    try {
      const tools = (await relay.client.listTools()).tools.map((tool) => tool.name);
      assert.ok(tools.includes('client_hook') && tools.includes('send_message'), `the hook tool beside the hub's: ${tools.join(', ')}`);
      const me = await relay.call<{ name: string }>('whoami');
      const sent = runCli(['send', 'waiting at the hub', '--to', me.name, '--json'], { env: bus.env });
      const id = (JSON.parse(sent.stdout) as { message_ids: string[] }).message_ids[0] as string;
      const hook = async (input: Record<string, unknown>, meta?: Record<string, unknown>) => {
        const result = await relay.client.callTool({ name: 'client_hook', arguments: { session_id: 'relayed-1', cwd: root, ...input }, ...(meta === undefined ? {} : { _meta: meta }) });
        return { isError: result.isError === true, text: (result.content as Array<{ text: string }>)[0]?.text ?? '' };
      };
      const refused = await hook({ kind: 'prompt', hook_event_name: 'UserPromptSubmit' }, { 'claudecode/toolUseId': 'toolu_1' });
      assert.equal(refused.isError, true);
      assert.equal(JSON.parse(runCli(['status', id, '--json'], { env: bus.env }).stdout).state, 'sent', "a model's call took nothing");
      const prompt = await hook({ kind: 'prompt', hook_event_name: 'UserPromptSubmit' });
      const context = (JSON.parse(prompt.text) as { hookSpecificOutput?: { additionalContext?: string } }).hookSpecificOutput?.additionalContext ?? '';
      assert.match(context, /waiting at the hub/, 'the mail, in JSON (plain text would be ignored)');
      await waitUntil(() => JSON.parse(runCli(['status', id, '--json'], { env: bus.env }).stdout).state === 'read', 'the mail confirmed shown');
      const denied = await hook({ kind: 'pre-tool', hook_event_name: 'PreToolUse', tool_name: 'Edit', tool_input: JSON.stringify({ file_path: `${root}/src/auth.ts` }) });
      const answer = JSON.parse(denied.text) as { hookSpecificOutput?: { permissionDecision?: string; permissionDecisionReason?: string } };
      assert.equal(answer.hookSpecificOutput?.permissionDecision, 'deny');
      assert.match(answer.hookSpecificOutput?.permissionDecisionReason ?? '', /src\/auth\.ts is reserved by shop\/codex/);
      assert.equal((await hook({ kind: 'pre-tool', hook_event_name: 'PreToolUse', tool_name: 'Edit', tool_input: JSON.stringify({ file_path: `${root}/src/free.ts` }) })).text, '{}');
    } finally {
      await relay.close();
    }
  } finally {
    remote.cleanup();
  }
}));
