/**
 * Waking an idle Claude Code session through its inbox socket, from its MCP server: a Unix socket
 * stands in for Claude Code's (it reads what is posted, as Claude Code does), the real server runs
 * over stdio with the socket's variables in its environment, and real hook payloads say where the
 * session's turn stands.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { auditRows, send } from '../helpers/agents.js';
import { CLI, runCli, tempBus, withTempBus, type TempBus } from '../helpers/bus-env.js';
import { createToken, startHub } from '../helpers/hub.js';
import { connect, type McpSession } from '../helpers/mcp.js';
import { sleep, waitFor, waitUntil } from '../helpers/wait.js';

/** A stand-in for Claude Code's inbox socket: every connection's lines, parsed. */
interface FakeInbox {
  path: string;
  posts: Array<Array<Record<string, unknown>>>;
  close(): Promise<void>;
}

async function fakeInbox(dir: string): Promise<FakeInbox> {
  const path = join(dir, 'inbox.sock');
  const posts: FakeInbox['posts'] = [];
  const server: Server = createServer((socket) => {
    let text = '';
    socket.on('data', (chunk) => (text += String(chunk)));
    socket.on('end', () => {
      posts.push(text.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as Record<string, unknown>));
      socket.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(path, () => resolve()));
  return { path, posts, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

const REPO_ENV = (bus: TempBus): NodeJS.ProcessEnv => ({ ...bus.env, AGENT_BUS_NAME: 'shop/claude', AGENT_BUS_REPO: bus.dir, CLAUDE_CODE_ENTRYPOINT: 'cli', AGENT_BUS_WATCH_POLL_SECONDS: '0.2' });

/** The session's MCP server, as Claude Code starts it: its session id and inbox socket in its environment. */
function sessionEnv(bus: TempBus, socket: string | null, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...REPO_ENV(bus), CLAUDE_CODE_SESSION_ID: 'sess-1', ...extra };
  if (socket !== null) Object.assign(env, { CLAUDE_CODE_MESSAGING_SOCKET: socket, CLAUDE_CODE_MESSAGING_TOKEN: 'token-of-sess-1' });
  return env;
}

/** Run one of the session's hooks with Claude Code's payload. */
function hook(bus: TempBus, command: string, payload: Record<string, unknown>): { code: number | null; stdout: string } {
  const result = spawnSync(process.execPath, [CLI, command, '--client', 'claude'], { env: REPO_ENV(bus), cwd: bus.dir, input: JSON.stringify({ session_id: 'sess-1', cwd: bus.dir, ...payload }), encoding: 'utf8', timeout: 30_000 });
  return { code: result.status, stdout: result.stdout };
}

interface SocketRow {
  agent: string;
  pid: number;
  way: string;
  note: string | null;
}

function socketRows(bus: TempBus): SocketRow[] {
  try {
    return bus.rows<SocketRow>("SELECT agent, pid, COALESCE(way, 'watch') AS way, note FROM watchers ORDER BY session");
  } catch {
    return []; // No store yet: the first process to open it makes it.
  }
}

/** Start the server, learn its session's name, and let the session's start hook say it is idle. */
async function startSession(bus: TempBus, socket: string | null, extra: NodeJS.ProcessEnv = {}): Promise<{ server: McpSession; name: string }> {
  const server = await connect(sessionEnv(bus, socket, extra), { cwd: bus.dir });
  const { name } = await server.call<{ name: string }>('whoami');
  assert.equal(hook(bus, 'hook-session-start', { hook_event_name: 'SessionStart', source: 'startup' }).code, 0);
  return { server, name };
}

function startWatcher(bus: TempBus): { pid: number; done: Promise<{ code: number | null; stderr: string }> } {
  const child = spawn(process.execPath, [CLI, 'hook-watch', '--client', 'claude', '--max-seconds', '60'], { env: REPO_ENV(bus), cwd: bus.dir, stdio: ['pipe', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.end(JSON.stringify({ session_id: 'sess-1', cwd: bus.dir }));
  return { pid: child.pid as number, done: new Promise((resolve) => child.on('close', (code) => resolve({ code, stderr }))) };
}

test('an idle session is nudged through its socket, once; the nudge names the sender, and the prompt hook of its turn delivers the mail', withTempBus(async (bus) => {
  const inbox = await fakeInbox(bus.dir);
  const { server, name } = await startSession(bus, inbox.path);
  try {
    assert.match(name, /^shop\/claude-\d+$/);
    await waitUntil(() => socketRows(bus).some((row) => row.way === 'socket' && row.agent === name && row.pid === server.pid()), 'the server to watch its session through the socket');
    // agents and doctor say how the session is woken.
    const roster = JSON.parse(runCli(['agents', '--json'], { env: bus.env }).stdout) as Array<{ name: string; wake: { way: string; note: string | null } | null }>;
    assert.deepEqual(roster.find((agent) => agent.name === name)?.wake, { way: 'socket', note: null });
    assert.match(runCli(['agents'], { env: bus.env }).stdout, new RegExp(`${name}\\s.*wake=socket`));
    const doctor = JSON.parse(runCli(['doctor', '--json'], { env: bus.env }).stdout) as { checks: Array<{ check: string; level: string; detail: string }> };
    assert.deepEqual(doctor.checks.find((check) => check.check === 'wake ways'), { check: 'wake ways', level: 'ok', detail: `${name}: socket` });
    send(bus, 'SOCKET-MAIL review the diff', name, { from: 'shop/codex' });
    await waitUntil(() => inbox.posts.length === 1, 'a post into the inbox socket');
    const [auth, user] = inbox.posts[0] ?? [];
    assert.deepEqual(auth, { type: 'auth', token: 'token-of-sess-1' });
    const message = (user as { type: string; message: { role: string; content: string } }).message;
    assert.equal((user as { type: string }).type, 'user');
    assert.equal(message.role, 'user');
    assert.match(message.content, /new mail from 'shop\/codex' at \d{4}-\d\d-\d\dT[\d:.]+Z \(1 message waits\)/);
    assert.doesNotMatch(message.content, /SOCKET-MAIL/, 'the nudge says who, never the body: the prompt hook delivers that');
    const wake = await waitFor(() => auditRows(bus, 'wake').find((row) => row.wake_driver === 'socket'), 'the wake audited');
    assert.equal(wake.wake_status, 'posted');
    assert.equal(wake.to, name);
    // The nudge's turn: Claude Code runs the prompt hook with the nudge as the prompt.
    const turn = hook(bus, 'hook-user-prompt', { hook_event_name: 'UserPromptSubmit', prompt: message.content });
    assert.match(turn.stdout, /SOCKET-MAIL review the diff/);
    assert.deepEqual(bus.rows("SELECT delivered_via FROM messages WHERE body = 'SOCKET-MAIL review the diff'"), [{ delivered_via: 'hook-user-prompt' }]);
    // A session at work is not nudged: mail now waits for its stop hook.
    send(bus, 'while it works', name, { from: 'shop/codex' });
    await sleep(1000);
    assert.equal(inbox.posts.length, 1, 'no nudge while the session works');
    assert.equal(auditRows(bus, 'wake').filter((row) => row.wake_driver === 'socket').length, 1);
    // Its stop hook hands that over; idle again, the next mail is nudged, in words of its own: Claude Code
    // drops a post whose text is the same as the one before.
    assert.match(hook(bus, 'hook-stop', { hook_event_name: 'Stop', stop_hook_active: false }).stdout, /while it works/);
    assert.equal(hook(bus, 'hook-stop', { hook_event_name: 'Stop', stop_hook_active: true }).code, 0);
    send(bus, 'SOCKET-MAIL two', name, { from: 'shop/codex' });
    await waitUntil(() => inbox.posts.length === 2, 'a second post');
    const second = (inbox.posts[1]?.[1] as { message: { content: string } }).message.content;
    assert.match(second, /new mail from 'shop\/codex'/);
    assert.notEqual(second, message.content);
  } finally {
    await server.close();
    await inbox.close();
  }
  await waitUntil(() => socketRows(bus).length === 0, 'the socket row to go with its server');
}));

test('hook-watch steps aside for a session its server wakes through the socket, and a waiting one stands down when the server starts', withTempBus(async (bus) => {
  const inbox = await fakeInbox(bus.dir);
  // A watcher already waits (the SessionStart hook ran before the server started).
  const early = startWatcher(bus);
  await waitUntil(() => socketRows(bus).some((row) => row.way === 'watch' && row.pid === early.pid), 'the early watcher to wait');
  const { server, name } = await startSession(bus, inbox.path);
  try {
    const first = await early.done;
    assert.equal(first.code, 0, `the waiting watcher stood down: ${first.stderr}`);
    // One started later (at a Stop) does not wait at all.
    const started = Date.now();
    const later = await startWatcher(bus).done;
    assert.equal(later.code, 0);
    assert.ok(Date.now() - started < 10_000);
    assert.deepEqual(socketRows(bus).map((row) => row.way), ['socket'], 'no process of ours waits beside the server');
    // The mail is the socket's to announce.
    send(bus, 'for the socket', name, { from: 'shop/codex' });
    await waitUntil(() => inbox.posts.length === 1, 'a post');
  } finally {
    await server.close();
    await inbox.close();
  }
}));

test('a socket after whose post no turn begins is given up, says why, and hook-watch wakes the session again', withTempBus(async (bus) => {
  const inbox = await fakeInbox(bus.dir);
  const { server, name } = await startSession(bus, inbox.path, { AGENT_BUS_SOCKET_TURN_SECONDS: '1' });
  try {
    send(bus, 'nobody takes this turn', name, { from: 'shop/codex' });
    await waitUntil(() => inbox.posts.length === 1, 'a post');
    const refused = await waitFor(() => socketRows(bus).find((row) => row.way === 'refused'), 'the socket given up', 10_000);
    assert.match(refused.note ?? '', /no turn began within 1 s of a post/);
    // Doctor warns, and agents says the watcher wakes it now, and why.
    const doctor = JSON.parse(runCli(['doctor', '--json'], { env: bus.env }).stdout) as { checks: Array<{ check: string; level: string; detail: string; fix?: string }> };
    const ways = doctor.checks.find((check) => check.check === 'wake ways');
    assert.equal(ways?.level, 'warn');
    assert.equal(ways?.detail, `${name}: watcher (socket given up: ${refused.note ?? ''})`);
    assert.match(ways?.fix ?? '', /update agent-bus/);
    assert.match(runCli(['agents'], { env: bus.env }).stdout, /wake=watcher \(socket given up: no turn began within 1 s of a post\)/);
    await waitUntil(() => /inbox socket is given up \(no turn began .*\); hook-watch wakes it/.test(server.stderr()), 'the server to say so on stderr');
    // The next Stop's watcher waits, and wakes the session with the mail.
    const watcher = startWatcher(bus);
    const { code, stderr } = await watcher.done;
    assert.equal(code, 10, stderr);
    assert.match(stderr, /nobody takes this turn/);
    send(bus, 'later mail', name, { from: 'shop/codex' });
    await sleep(800);
    assert.equal(inbox.posts.length, 1, 'a socket given up is posted to no more');
  } finally {
    await server.close();
    await inbox.close();
  }
}));

test('a socket path that is no socket is given up at the first post, with the reason and a refused wake', withTempBus(async (bus) => {
  const path = join(bus.dir, 'not-a-socket');
  writeFileSync(path, '');
  const { server, name } = await startSession(bus, path);
  try {
    send(bus, 'to a broken socket', name, { from: 'shop/codex' });
    const refused = await waitFor(() => socketRows(bus).find((row) => row.way === 'refused'), 'the socket given up');
    assert.equal(refused.note, `${path} is not a socket`);
    const wake = await waitFor(() => auditRows(bus, 'wake').find((row) => row.wake_driver === 'socket'), 'the refused wake audited');
    assert.equal(wake.wake_status, 'refused');
  } finally {
    await server.close();
  }
}));

test('the hourly wake limit holds for socket nudges: past it, the mail waits and the held wake is audited', withTempBus(async (bus) => {
  const inbox = await fakeInbox(bus.dir);
  const { server, name } = await startSession(bus, inbox.path, { AGENT_BUS_WAKES_PER_HOUR: '1' });
  try {
    send(bus, 'first', name, { from: 'shop/codex' });
    await waitUntil(() => inbox.posts.length === 1, 'the first post');
    assert.equal(hook(bus, 'hook-user-prompt', { prompt: 'nudge' }).code, 0);
    assert.equal(hook(bus, 'hook-stop', { hook_event_name: 'Stop', stop_hook_active: false }).code, 0);
    send(bus, 'second', name, { from: 'shop/codex' });
    await waitFor(() => auditRows(bus, 'wake').find((row) => row.wake_driver === 'socket' && row.wake_status === 'rate-limited'), 'the held wake audited');
    await sleep(500);
    assert.equal(inbox.posts.length, 1, 'past the limit nothing is posted');
  } finally {
    await server.close();
    await inbox.close();
  }
}));

test('no socket in the environment, or a session that is not interactive: the server watches nothing and hook-watch works as before', withTempBus(async (bus) => {
  const inbox = await fakeInbox(bus.dir);
  const bare = await startSession(bus, null);
  const printMode = await connect(sessionEnv(bus, inbox.path, { CLAUDE_CODE_ENTRYPOINT: 'sdk-cli', CLAUDE_CODE_SESSION_ID: 'sess-2' }), { cwd: bus.dir });
  try {
    await printMode.call('whoami');
    await sleep(500);
    assert.deepEqual(socketRows(bus), [], 'nothing is armed');
    const quiet = JSON.parse(runCli(['agents', '--json'], { env: bus.env }).stdout) as Array<{ name: string; wake: unknown }>;
    assert.equal(quiet.find((agent) => agent.name === bare.name)?.wake, null, 'a working or unwatched session: nothing waits for its mail');
    const watcher = startWatcher(bus);
    await waitUntil(() => socketRows(bus).some((row) => row.way === 'watch' && row.pid === watcher.pid), 'the watcher to wait');
    assert.match(runCli(['agents'], { env: bus.env }).stdout, new RegExp(`${bare.name}\\s.*wake=watcher`));
    send(bus, 'for the watcher', bare.name, { from: 'shop/codex' });
    const { code, stderr } = await watcher.done;
    assert.equal(code, 10);
    assert.match(stderr, /for the watcher/);
    assert.equal(inbox.posts.length, 0);
  } finally {
    await bare.server.close();
    await printMode.close();
    await inbox.close();
  }
}));

test('agents says a Codex session gets a queued turn, and a wake.json entry a command, over any native way', withTempBus(async (bus) => {
  const inbox = await fakeInbox(bus.dir);
  const { server, name } = await startSession(bus, inbox.path);
  // A Codex session: its server learns its thread at the first call.
  const codex = await connect({ ...bus.env, AGENT_BUS_NAME: 'shop/codex', AGENT_BUS_REPO: bus.dir }, { cwd: bus.dir });
  try {
    await codex.client.callTool({ name: 'whoami', arguments: {}, _meta: { threadId: 'thread-a' } });
    assert.equal(runCli(['send', 'hi', '--to', 'shop/codex', '--name', 'shop/codex'], { env: bus.env }).code, 0);
    writeFileSync(join(bus.folder, 'wake.json'), JSON.stringify({ [name]: 'true' }));
    const roster = JSON.parse(runCli(['agents', '--json'], { env: bus.env }).stdout) as Array<{ name: string; wake: { way: string } | null }>;
    assert.equal(roster.find((agent) => agent.name === name)?.wake?.way, 'command');
    assert.equal(roster.find((agent) => agent.name === 'shop/codex-1')?.wake?.way, 'queue');
    assert.equal(roster.find((agent) => agent.name === 'shop/codex')?.wake, null, 'a bare client address is queued for by none');
    assert.match(runCli(['agents'], { env: bus.env }).stdout, /shop\/codex-1\s.*wake=codex queue/);
  } finally {
    await codex.close();
    await server.close();
    await inbox.close();
  }
}));

test('wake.json applies on top: a session it names (here, turned off) gets no nudge', withTempBus(async (bus) => {
  const inbox = await fakeInbox(bus.dir);
  const { server, name } = await startSession(bus, inbox.path);
  try {
    writeFileSync(join(bus.folder, 'wake.json'), JSON.stringify({ [name]: false }));
    send(bus, 'not to be nudged', name, { from: 'shop/codex' });
    await sleep(1500);
    assert.equal(inbox.posts.length, 0);
    // Without the entry, the next mail is.
    writeFileSync(join(bus.folder, 'wake.json'), '{}');
    send(bus, 'nudge for this one', name, { from: 'shop/codex' });
    await waitUntil(() => inbox.posts.length === 1, 'a post once wake.json no longer names the session');
  } finally {
    await server.close();
    await inbox.close();
  }
}));

test("mail two idle sessions share (to their client address) nudges one of them, the first to claim it: the other gets no empty turn; a session's own mail nudges it alone", withTempBus(async (bus) => {
  const inboxes = await Promise.all(['one', 'two'].map(async (label) => {
    const dir = join(bus.dir, label);
    mkdirSync(dir);
    return fakeInbox(dir);
  }));
  const [inboxOne, inboxTwo] = inboxes as [FakeInbox, FakeInbox];
  const one = await startSession(bus, inboxOne.path);
  const server = await connect(sessionEnv(bus, inboxTwo.path, { CLAUDE_CODE_SESSION_ID: 'sess-2' }), { cwd: bus.dir });
  const two = { server, name: (await server.call<{ name: string }>('whoami')).name };
  assert.equal(hook(bus, 'hook-session-start', { session_id: 'sess-2', hook_event_name: 'SessionStart', source: 'startup' }).code, 0);
  try {
    assert.notEqual(one.name, two.name);
    await waitUntil(() => socketRows(bus).filter((row) => row.way === 'socket').length === 2, 'both servers to watch their sessions');
    const posts = (): number => inboxOne.posts.length + inboxTwo.posts.length;
    send(bus, 'SHARED-MAIL for whichever session', 'shop/claude', { from: 'shop/codex' });
    await waitUntil(() => posts() === 1, 'one post');
    await sleep(1500);
    assert.equal(posts(), 1, 'one session woken for it, not both');
    assert.equal(auditRows(bus, 'wake').filter((row) => row.wake_driver === 'socket' && row.wake_status === 'posted').length, 1);
    // Mail to the session that was not woken is its own: it is nudged.
    const quiet = inboxOne.posts.length === 1 ? { ...two, inbox: inboxTwo } : { ...one, inbox: inboxOne };
    send(bus, 'OWN-MAIL for this session', quiet.name, { from: 'shop/codex' });
    await waitUntil(() => quiet.inbox.posts.length === 1, 'a post to that session');
  } finally {
    await one.server.close();
    await two.server.close();
    for (const inbox of inboxes) await inbox.close();
  }
}));

test("over a hub: the session's relay (serve on its machine) nudges it through its socket, asking the hub; the hub audits the wake, its remote watcher steps aside, and the prompt hook's turn delivers the mail", async () => {
  const bus = tempBus();
  const hub = await startHub(bus, { AGENT_BUS_WATCH_POLL_SECONDS: '0.2' });
  const machine = mkdtempSync(join(tmpdir(), 'agent-bus-relay-'));
  const inbox = await fakeInbox(machine);
  const claude = createToken(bus, 'shop/claude');
  // The agent's machine: no database, the hub's address and token, and what Claude Code gives its server.
  const remote: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: machine, NO_COLOR: '1', AGENT_BUS_URL: hub.url, AGENT_BUS_TOKEN: claude.token, CLAUDE_CODE_ENTRYPOINT: 'cli', AGENT_BUS_WATCH_POLL_SECONDS: '0.2' };
  const remoteHook = (command: string, payload: Record<string, unknown>): { code: number | null; stdout: string } => {
    const result = spawnSync(process.execPath, [CLI, command, '--client', 'claude'], { env: remote, cwd: machine, input: JSON.stringify({ session_id: 'sess-r', cwd: machine, ...payload }), encoding: 'utf8', timeout: 30_000 });
    return { code: result.status, stdout: result.stdout };
  };
  const relay = await connect({ ...remote, CLAUDE_CODE_SESSION_ID: 'sess-r', CLAUDE_CODE_MESSAGING_SOCKET: inbox.path, CLAUDE_CODE_MESSAGING_TOKEN: 'token-of-sess-r' }, { cwd: machine, args: ['--client', 'claude'] });
  try {
    const { name } = await relay.call<{ name: string }>('whoami');
    assert.match(name, /^shop\/claude-\d+$/);
    await waitUntil(() => socketRows(bus).some((row) => row.way === 'socket' && row.agent === name && row.pid === 0), 'the relay to watch its session at the hub');
    assert.deepEqual(readdirSync(machine).filter((file) => file !== 'inbox.sock'), [], 'the agent\'s machine holds no bus');
    assert.equal(remoteHook('hook-session-start', { hook_event_name: 'SessionStart', source: 'startup' }).code, 0);
    // Its remote watcher, started by the session's hooks, has nothing to wait for.
    const started = Date.now();
    const watcher = spawnSync(process.execPath, [CLI, 'hook-watch', '--client', 'claude', '--max-seconds', '30'], { env: remote, cwd: machine, input: JSON.stringify({ session_id: 'sess-r', cwd: machine }), encoding: 'utf8', timeout: 40_000 });
    assert.equal(watcher.status, 0, watcher.stderr);
    assert.ok(Date.now() - started < 10_000, 'the watcher stepped aside at once');
    send(bus, 'HUB-SOCKET-MAIL look at the build', name, { from: 'shop/codex' });
    await waitUntil(() => inbox.posts.length === 1, 'a post into the inbox socket', 10_000);
    const [auth, user] = inbox.posts[0] ?? [];
    assert.deepEqual(auth, { type: 'auth', token: 'token-of-sess-r' });
    const content = (user as { message: { content: string } }).message.content;
    assert.match(content, /new mail from 'shop\/codex' .*\(1 message waits\)/);
    assert.doesNotMatch(content, /HUB-SOCKET-MAIL/);
    const wake = await waitFor(() => auditRows(bus, 'wake').find((row) => row.wake_driver === 'socket'), 'the wake audited at the hub');
    assert.equal(wake.wake_status, 'posted');
    assert.equal(wake.to, name);
    // The nudge's turn: the remote prompt hook delivers the mail, with its receipt.
    const turn = remoteHook('hook-user-prompt', { hook_event_name: 'UserPromptSubmit', prompt: content });
    assert.match(turn.stdout, /HUB-SOCKET-MAIL look at the build/);
    assert.deepEqual(bus.rows("SELECT delivered_via FROM messages WHERE body = 'HUB-SOCKET-MAIL look at the build'"), [{ delivered_via: 'hook-user-prompt' }]);
    // Working now: more mail is not nudged.
    send(bus, 'while it works', name, { from: 'shop/codex' });
    await sleep(1000);
    assert.equal(inbox.posts.length, 1, 'no nudge while the session works');
    await relay.close();
    await waitUntil(() => socketRows(bus).length === 0, 'the relay to let its row go as it ends');
  } finally {
    await relay.close();
    await inbox.close();
    await hub.stop();
    rmSync(machine, { recursive: true, force: true });
    bus.cleanup();
  }
});
