/**
 * Receipts through every surface on a real bus: `agent-bus status` and `send --wait` as
 * subprocesses, MCP `message_status`, `read_inbox` and `read_thread` through the official
 * client SDK (stdio and a hub over HTTP), and the remote CLI through a hub.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { shortId } from '../../src/model/short-id.js';
import { CLI, json, readAudit, runCli, runCliAsync, tempBus, withTempBus, type CliResult, type TempBus, messageLines } from '../helpers/bus-env.js';
import { connect } from '../helpers/mcp.js';
import { connectHttp, createToken, withHub } from '../helpers/hub.js';
import { waitFor } from '../helpers/wait.js';

interface Copy {
  message_id: string;
  to: string;
  state: string;
  claimed_by: string | null;
  delivered_at: string | null;
  delivered_via: string | null;
  read_at: string | null;
  read_via: string | null;
}

interface Status {
  message_id: string;
  fanout_id: string | null;
  from: string;
  to: string;
  kind: string;
  thread_id: string;
  state: string;
  recipients: number;
  delivered: number;
  read: number;
  copies: Copy[];
}

interface Sent {
  message_ids: string[];
  fanout_id: string | null;
  message_id?: string;
  thread_id: string;
}

function cli(bus: TempBus, args: string[], env: NodeJS.ProcessEnv = {}): string {
  const result = runCli(args, { env: { ...bus.env, ...env } });
  assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

/** Put agents on the roster the way they join: each sends once and reads its inbox. */
function join(bus: TempBus, ...names: string[]): void {
  for (const name of names) {
    cli(bus, ['send', 'here', '--to', name, '--name', name], { AGENT_BUS_REPO: '/repos/x' });
    cli(bus, ['inbox', '--name', name]);
  }
}

const status = (bus: TempBus, id: string): Status => json<Status>(runCli(['status', id, '--json'], { env: bus.env }));

/** Wait for a running CLI to print `pattern` on stdout. */
function printed(child: ReturnType<typeof spawn>, pattern: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`never printed ${pattern}: ${out}`)), 20_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      if (pattern.test(out)) {
        clearTimeout(timer);
        resolve(out);
      }
    });
  });
}

/** The row of a message a running CLI sends, once it is stored. */
function stored(bus: TempBus, body: string): Promise<{ message_id: string }> {
  return waitFor(() => bus.rows<{ message_id: string }>(`SELECT message_id FROM messages WHERE body = '${body}'`)[0], `'${body}' to be stored`, 20_000, 50);
}

function finished(child: ReturnType<typeof spawn>): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

test('status shows each recipient sent ✓, delivered ✓✓ or read, by any id of the send or the start of one', withTempBus((bus) => {
  join(bus, 'web/claude', 'web/codex');
  const sent = json<Sent>(runCli(['send', 'release at five', '--to', 'web', '--json'], { env: bus.env }));
  assert.ok(sent.fanout_id, 'send --json names the fan-out');
  const fresh = status(bus, sent.message_ids[0] as string);
  assert.deepEqual(status(bus, sent.fanout_id as string), fresh);
  assert.deepEqual(status(bus, (sent.fanout_id as string).slice(0, 8)), fresh);
  assert.deepEqual([fresh.state, fresh.recipients, fresh.delivered, fresh.read, fresh.to, fresh.kind], ['sent', 2, 0, 0, 'web', 'group']);
  cli(bus, ['inbox', '--name', 'web/claude']);
  const half = status(bus, sent.message_ids[1] as string);
  assert.deepEqual([half.state, half.delivered, half.read], ['sent', 1, 1]);
  assert.deepEqual(half.copies.map((copy) => [copy.to, copy.state, copy.read_via]), [['web/claude', 'read', 'inbox'], ['web/codex', 'sent', null]]);
  const plain = cli(bus, ['status', sent.fanout_id as string]);
  assert.match(plain, new RegExp(`^${shortId(sent.fanout_id as string)} {2}human → web {2}sent just now {2}\\(thread [0-9a-f]{12}\\)\\n`));
  assert.match(plain, /\n {2}✓ sent {7}2 recipients: 1 delivered, 1 read\n/);
  assert.match(plain, /\n {2}✓✓ read {6}web\/claude {2}just now by inbox {2}\(claimed it\)\n/);
  assert.match(plain, /\n {2}✓ sent {7}web\/codex\n$/);
  assert.ok(!plain.includes('\u001b['), 'plain under NO_COLOR');
  const terminal = spawnSync('script', ['-qec', `${process.execPath} ${CLI} status ${sent.fanout_id}`, '/dev/null'], { env: { ...bus.env, NO_COLOR: '', TERM: 'xterm' }, encoding: 'utf8' }).stdout;
  assert.ok(terminal.includes('\u001b[1m✓✓ read'), `read in bold on a terminal: ${JSON.stringify(terminal)}`);
}));

test('status: an unknown or ambiguous id, or none, is one line and a non-zero exit', withTempBus((bus) => {
  join(bus, 'web/claude');
  const one = json<Sent>(runCli(['send', 'a', '--to', 'web/claude', '--json'], { env: bus.env })).message_id as string;
  const two = json<Sent>(runCli(['send', 'b', '--to', 'web/claude', '--json'], { env: bus.env })).message_id as string;
  let shared = 0;
  while (one[shared] === two[shared]) shared++;
  for (const [args, code, message] of [
    [['status', 'no-such-message'], 1, /^agent-bus: no message with id 'no-such-message'\n$/],
    [['status', one.slice(0, Math.max(shared, 4))], 2, /^agent-bus: '[0-9a-f-]+' is the start of more than one message: [0-9a-f]{12} '[^']+'(?:, [0-9a-f]{12} '[^']+')+\. Give more of the id\.\n$/],
    [['status'], 2, /missing ID/],
    [['status', 'x', '--name', 'not a name!'], 2, /./],
  ] as const) {
    const result = runCli([...args], { env: bus.env });
    assert.equal(result.code, code, `${args.join(' ')}: ${result.stderr}`);
    assert.equal(messageLines(result.stderr).length, 1, result.stderr);
    assert.match(result.stderr, message);
  }
  // --name asks as that agent: only what it sent or received.
  assert.equal(status(bus, one).recipients, 1);
  assert.equal(json<Status>(runCli(['status', one, '--json', '--name', 'web/claude'], { env: bus.env })).recipients, 1);
  const refused = runCli(['status', one, '--name', 'web/codex'], { env: bus.env });
  assert.deepEqual([refused.code, refused.stderr], [1, `agent-bus: no message with id '${one}' that 'web/codex' sent or received\n`]);
}));

test('send --wait read exits 0 once every copy is read, hearing each move; --wait delivered times out with exit 4', withTempBus(async (bus) => {
  join(bus, 'web/claude', 'web/codex');
  const waiting = spawn(process.execPath, [CLI, 'send', 'ship it', '--to', 'web', '--wait', 'read', '--timeout', '60s'], { env: bus.env, stdio: ['ignore', 'pipe', 'pipe'] });
  const done = finished(waiting);
  await printed(waiting, /ship it/);
  assert.equal(runCli(['inbox', '--name', 'web/claude'], { env: bus.env }).code, 0);
  await printed(waiting, /✓✓ read {6}web\/claude/);
  assert.equal(waiting.exitCode, null, 'still waiting: one copy is unread');
  assert.equal(runCli(['inbox', '--name', 'web/codex'], { env: bus.env }).code, 0);
  const result = await done;
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /✓✓ read {6}web\/codex +just now by inbox\n✓✓ read: 2 recipients: 2 delivered, 2 read\n$/);

  const timedOut = await runCliAsync(['send', 'nobody reads this', '--to', 'web/codex', '--wait', 'delivered', '--timeout', '1s'], { env: bus.env });
  assert.equal(timedOut.code, 4);
  assert.match(timedOut.stderr, /^agent-bus: not delivered after 1s \(1 recipient: 0 delivered, 0 read\); agent-bus status [0-9a-f]{12} shows where each copy is\n$/);
  const unread = bus.rows<{ n: number | string }>("SELECT COUNT(*) AS n FROM messages WHERE body = 'nobody reads this' AND read_at IS NULL");
  assert.equal(Number(unread[0]?.n), 1, 'sent all the same: only the wait gave up');

  // --json: one object at the end, the send and how the wait went.
  const watched = spawn(process.execPath, [CLI, 'send', 'json wait', '--to', 'web/claude', '--wait', 'delivered', '--json'], { env: bus.env, stdio: ['ignore', 'pipe', 'pipe'] });
  const jsonDone = finished(watched);
  const row = await stored(bus, 'json wait');
  // A model peeks at its inbox: delivered, not read.
  const server = await connect({ ...bus.env, AGENT_BUS_NAME: 'web/claude', AGENT_BUS_REPO: '/repos/x' });
  try {
    await server.call('read_inbox', { mark_read: false });
  } finally {
    await server.close();
  }
  const outcome = await jsonDone;
  assert.equal(outcome.code, 0, outcome.stderr);
  const parsed = JSON.parse(outcome.stdout) as Sent & { wait: { state: string; reached: boolean; status: Status } };
  assert.deepEqual([parsed.message_id, parsed.wait.state, parsed.wait.reached, parsed.wait.status.state, parsed.wait.status.copies[0]?.delivered_via], [row.message_id, 'delivered', true, 'delivered', 'read_inbox']);
}));

test('send --wait or --timeout that make no sense are refused before anything is sent', withTempBus((bus) => {
  join(bus, 'web/claude');
  const before = bus.rows<{ n: number | string }>('SELECT COUNT(*) AS n FROM messages');
  for (const [args, message] of [
    [['--wait', 'sent'], /cannot wait for 'sent': wait for delivered or read/],
    [['--wait', 'opened'], /cannot wait for 'opened'/],
    [['--wait', 'read', '--timeout', 'soon'], /bad duration 'soon'/],
    [['--timeout', '5s'], /--timeout says how long --wait waits/],
  ] as const) {
    const result = runCli(['send', 'never sent', '--to', 'web/claude', ...args], { env: bus.env });
    assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
    assert.equal(messageLines(result.stderr).length, 1, result.stderr);
    assert.match(result.stderr, message);
  }
  assert.deepEqual(bus.rows('SELECT COUNT(*) AS n FROM messages'), before, 'nothing was sent');
  const nobody = runCli(['send', 'to an empty repo', '--to', 'web', '--name', 'web/claude', '--wait', 'read'], { env: bus.env });
  assert.equal(nobody.code, 1);
  assert.match(nobody.stderr, /nothing to wait for/);
}));

test('MCP: send_message ids work in message_status; a peek marks delivered, a read marks read; read_thread shows the receipts; strangers learn nothing', withTempBus(async (bus) => {
  join(bus, 'web/claude', 'api/claude');
  const sender = await connect({ ...bus.env, AGENT_BUS_NAME: 'web/claude', AGENT_BUS_REPO: '/repos/web' });
  const reader = await connect({ ...bus.env, AGENT_BUS_NAME: 'api/claude', AGENT_BUS_REPO: '/repos/api' });
  const stranger = await connect({ ...bus.env, AGENT_BUS_NAME: 'ops/claude', AGENT_BUS_REPO: '/repos/ops' });
  try {
    const sent = await sender.call<Sent>('send_message', { to: 'api/claude', body: 'is the API up?' });
    const id = sent.message_id as string;
    assert.equal((await sender.call<Status>('message_status', { message_id: id })).state, 'sent');
    const [peeked] = await reader.call<Array<{ delivered_via: string | null; read_at: string | null }>>('read_inbox', { mark_read: false });
    assert.deepEqual([peeked?.delivered_via, peeked?.read_at], ['read_inbox', null]);
    const delivered = await sender.call<Status>('message_status', { message_id: id });
    assert.deepEqual([delivered.state, delivered.copies[0]?.delivered_via], ['delivered', 'read_inbox']);
    await reader.call('read_inbox', {});
    const read = await reader.call<Status>('message_status', { message_id: id.slice(0, 30) });
    assert.deepEqual([read.state, read.copies[0]?.read_via], ['read', 'read_inbox'], 'the recipient may ask too, by the start of the id');
    const thread = await sender.call<Array<{ delivered_via: string | null; read_via: string | null; read_at: string | null }>>('read_thread', { thread_id: sent.thread_id });
    assert.deepEqual([thread[0]?.delivered_via, thread[0]?.read_via, typeof thread[0]?.read_at], ['read_inbox', 'read_inbox', 'string']);
    assert.match(await stranger.fails('message_status', { message_id: id }), /^no message with id '[0-9a-f-]+' that 'ops\/claude(-1)?' sent or received$/);
    const rows = readAudit(bus.audit).filter((row) => row.message_id === id).map((row) => `${String(row.op)}:${String(row.via ?? '')}`);
    assert.deepEqual(rows, ['send:', 'deliver:read_inbox', 'read:read_inbox']);
  } finally {
    await Promise.all([sender.close(), reader.close(), stranger.close()]);
  }
}));

test("over the hub: a token's message_status sees its own mail only, the remote CLI's status and send --wait go through it, and the remote inbox and chat record their own way", withHub({}, async (bus, hub) => {
  join(bus, 'web/claude', 'api/claude');
  const { token } = createToken(bus, 'api/claude');
  const other = createToken(bus, 'ops/claude');
  const remote = tempBus({ AGENT_BUS_URL: hub.url, AGENT_BUS_TOKEN: token });
  try {
    const sent = json<Sent>(runCli(['send', 'from the hub machine', '--to', 'api/claude', '--name', 'web/claude', '--json'], { env: bus.env }));
    const id = sent.message_id as string;
    const client = await connectHttp(hub.url, token);
    const stranger = await connectHttp(hub.url, other.token);
    try {
      const seen = await client.call('message_status', { message_id: id });
      assert.equal(seen.isError, false, seen.text);
      assert.equal((seen.value as Status).state, 'sent');
      const refused = await stranger.call('message_status', { message_id: id });
      assert.deepEqual([refused.isError, /that 'ops\/claude' sent or received/.test(refused.text)], [true, true]);
    } finally {
      await Promise.all([client.close(), stranger.close()]);
    }
    // The remote CLI reads the token's inbox: a person saw it, by `inbox`, as on the hub's own machine.
    assert.equal(runCli(['inbox'], { env: remote.env }).code, 0);
    const after = json<Status>(runCli(['status', id, '--json'], { env: remote.env }));
    assert.deepEqual([after.state, after.copies[0]?.read_via, after.copies[0]?.delivered_via], ['read', 'inbox', 'inbox']);
    // A remote sender waits through the hub's change feed for the hub machine's reader.
    const waiting = spawn(process.execPath, [CLI, 'send', 'answer me', '--to', 'web/claude', '--wait', 'read', '--timeout', '60s', '--json'], { env: remote.env, stdio: ['ignore', 'pipe', 'pipe'] });
    const done = finished(waiting);
    await stored(bus, 'answer me');
    assert.equal(runCli(['inbox', '--name', 'web/claude'], { env: bus.env }).code, 0);
    const outcome = await done;
    assert.equal(outcome.code, 0, outcome.stderr);
    const parsed = JSON.parse(outcome.stdout) as { wait: { reached: boolean; status: Status } };
    assert.deepEqual([parsed.wait.reached, parsed.wait.status.copies[0]?.read_via], [true, 'inbox']);
    const timedOut = runCli(['send', 'unanswered', '--to', 'web/claude', '--wait', 'delivered', '--timeout', '1s'], { env: remote.env });
    assert.equal(timedOut.code, 4, timedOut.stderr);
  } finally {
    remote.cleanup();
  }
}));
