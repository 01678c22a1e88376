/**
 * Tasks as people and agents use them: the `task` command (its output, --json, exit codes, bad input),
 * the MCP tools through the official SDK, and both over a hub, where the token's agent acts.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { shortId } from '../../src/model/short-id.js';
import { agentEnv, register } from '../helpers/agents.js';
import { json, messageLines, readAudit, runCli, runCliAsync, type TempBus, withTempBus } from '../helpers/bus-env.js';
import { createToken, withHub } from '../helpers/hub.js';
import { connect } from '../helpers/mcp.js';

interface Task {
  id: string;
  title: string;
  body: string | null;
  creator: string;
  to: string;
  state: string;
  holder: string | null;
  result: string | null;
  after?: string[];
}

function task(bus: TempBus, args: string[], env: NodeJS.ProcessEnv = bus.env, input?: string): Task {
  return json<Task>(runCli(['task', ...args, '--json'], { env, ...(input === undefined ? {} : { input }) }));
}

test('the task command: add prints the id, take, done with a result from stdin, show, list, and wait exits 0 on done, 5 on failed, 4 at the timeout', withTempBus(async (bus) => {
  const claude = agentEnv(bus, 'shop/claude', '/repos/shop');
  const codex = agentEnv(bus, 'shop/codex', '/repos/shop');
  register(claude);
  register(codex);
  const added = runCli(['task', 'add', 'fix the login test', '--to', 'shop/codex', '--body', '-'], { env: claude, input: 'see CI run 4121\nand the flaky fixture' });
  assert.equal(added.code, 0, added.stderr);
  // The short id, which every task command takes back; the whole one is in --json.
  const id = added.stdout.trim();
  assert.match(id, /^[0-9a-f]{12}$/);
  const full = task(bus, ['show', id]).id;
  assert.ok(full.length === 36 && full.endsWith(id), `${full} ends with ${id}`);
  const shown = runCli(['task', 'show', id.slice(0, 6)], { env: bus.env });
  assert.equal(shown.code, 0);
  assert.match(shown.stdout, new RegExp(`^task ${id}: fix the login test\\n  state    open\\n  for      shop/codex\\n  made by  shop/claude, just now\\n  updated  just now\\n\\n  see CI run 4121\\n  and the flaky fixture\\n$`));
  assert.match(runCli(['task', 'list'], { env: bus.env }).stdout, new RegExp(`^${id}  open       just now      for shop/codex  fix the login test\\n$`));
  const waiting = runCliAsync(['task', 'wait', id, '--timeout', '30s', '--json'], { env: claude });
  assert.equal(task(bus, ['take', id], codex).holder, 'shop/codex');
  const done = runCli(['task', 'done', id, '--result', '-'], { env: codex, input: 'fixed in 3f2c1e' });
  assert.equal(done.code, 0, done.stderr);
  assert.match(done.stdout, /done .* shop\/claude is told\n$/);
  const waited = await waiting;
  assert.equal(waited.code, 0, waited.stderr);
  assert.deepEqual([json<Task>(waited).state, json<Task>(waited).result], ['done', 'fixed in 3f2c1e']);
  // The result is urgent mail for the creator, shown at its next tool call.
  // It is marked as the task's result; the offer the worker got is not.
  const inbox = json<Array<{ from: string; urgent: boolean; body: string; task_result: unknown }>>(runCli(['inbox', '--json'], { env: claude }));
  assert.deepEqual(inbox.map((message) => [message.from, message.urgent, message.body.split('\n')[1], message.task_result]), [['shop/codex', true, 'result: fixed in 3f2c1e', { id: full, state: 'done' }]]);
  assert.deepEqual(json<Array<{ task_result: unknown }>>(runCli(['inbox', '--json'], { env: codex })).map((message) => message.task_result), [null], 'the offer is not a result');

  const failing = task(bus, ['add', 'migrate', '--to', 'shop'], claude);
  task(bus, ['take', failing.id], codex);
  assert.equal(runCli(['task', 'fail', failing.id], { env: codex }).code, 2, 'a failure without its reason is bad usage');
  assert.equal(task(bus, ['fail', failing.id, '--reason', 'the lock timed out'], codex).state, 'failed');
  assert.deepEqual(json<Array<{ task_result: unknown }>>(runCli(['inbox', '--json'], { env: claude })).map((message) => message.task_result), [{ id: failing.id, state: 'failed' }]);
  const failedWait = runCli(['task', 'wait', failing.id], { env: claude });
  assert.equal(failedWait.code, 5);
  assert.match(failedWait.stdout, /failed .* migrate\nreason: the lock timed out\n$/);
  const pending = task(bus, ['add', 'later', '--to', '*'], claude);
  const timedOut = runCli(['task', 'wait', pending.id, '--timeout', '1s'], { env: claude });
  assert.equal(timedOut.code, 4);
  assert.equal(timedOut.stderr, `agent-bus: task ${shortId(pending.id)} is still open after 1s\n`);
  assert.deepEqual(json<Task[]>(runCli(['task', 'list', '--state', 'all', '--json'], { env: bus.env })).map((row) => row.state), ['done', 'failed', 'open']);
  assert.deepEqual(json<Task[]>(runCli(['task', 'list', '--created', '--json'], { env: codex })), []);
  assert.deepEqual(json<Task[]>(runCli(['task', 'list', '--mine', '--state', 'done', '--json'], { env: codex })).map((row) => row.id), [full]);
}));

test('the task command refuses bad input in one line, and makes nothing', withTempBus((bus) => {
  const claude = agentEnv(bus, 'shop/claude', '/repos/shop');
  register(claude);
  for (const [args, code, pattern] of [
    [['task'], 2, /^agent-bus: task: missing ACTION\. See 'agent-bus task --help'\.\nUsage: agent-bus task \[options\] ACTION \[ARGS\.\.\.\]/],
    [['task', 'finish', 'x'], 2, /^agent-bus: task: expected add, take, done, fail, cancel, show, list, wait, got 'finish'\. See 'agent-bus task --help'\.\nUsage: /],
    [['task', 'add', 'no address'], 2, /--to NAME/],
    [['task', 'add', 'x', '--to', 'shop/claud'], 1, /^agent-bus: no agent or group named 'shop\/claud' is on the bus\. Agents in that repo: shop\/claude\. No task was made; list the agents to see who is reachable\.\n$/],
    [['task', 'add', 'x', '--to', 'shop', '--after', 'nope'], 1, /^agent-bus: there is no task 'nope'\n$/],
    [['task', 'take'], 2, /give the task's id/],
    [['task', 'take', 'nope'], 1, /^agent-bus: there is no task 'nope'\n$/],
    [['task', 'wait', 'x', '--timeout', 'soon'], 2, /bad --timeout 'soon'/],
    [['task', 'list', '--state', 'stuck'], 2, /state must be one of open, taken, done, failed, cancelled, blocked or all/],
  ] as const) {
    const run = runCli([...args], { env: claude });
    assert.equal(run.code, code, `${args.join(' ')}: ${run.stderr}`);
    assert.match(run.stderr, pattern, args.join(' '));
    assert.equal(messageLines(run.stderr).length, 1, `one line: ${run.stderr}`);
    if (code === 2) assert.match(run.stderr, /\nUsage: agent-bus task /, 'bad usage is followed by the usage line');
  }
  assert.deepEqual(json<Task[]>(runCli(['task', 'list', '--state', 'all', '--json'], { env: bus.env })), []);
  assert.deepEqual(readAudit(bus.audit).filter((row) => row.op === 'task'), []);
}));

test('the task tools over MCP: create_task, take_task, complete_task and get_task, with the result back to the creator', withTempBus(async (bus) => {
  const lead = await connect(agentEnv(bus, 'shop/claude', '/repos/shop'));
  const worker = await connect(agentEnv(bus, 'shop/codex', '/repos/shop'));
  try {
    const made = await lead.call<Task>('create_task', { title: 'write the release notes', to: 'shop/codex', body: 'for 2.4' });
    // Each server speaks as its session address; a session of the client address a task is for may take it.
    assert.deepEqual([made.state, made.creator, made.to], ['open', 'shop/claude-1', 'shop/codex']);
    const offered = await worker.call<Array<{ body: string }>>('read_inbox', {});
    assert.match(offered[0]?.body ?? '', new RegExp(`^\\[agent-bus task ${shortId(made.id)}\\] write the release notes\\nfor 2\\.4\\n`));
    assert.deepEqual((await worker.call<{ tasks: Task[] }>('list_tasks', { mine: true })).tasks.map((row) => row.id), [made.id]);
    assert.match(await lead.fails('take_task', { id: made.id }), /is for shop\/codex: shop\/claude-1 may not take it/);
    const taken = await worker.call<Task>('take_task', { id: made.id });
    assert.equal(taken.holder, 'shop/codex-1');
    assert.match(await worker.fails('fail_task', { id: made.id, reason: '' }), /say why/);
    await worker.call('complete_task', { id: made.id, result: 'notes in docs/2.4.md' });
    const closed = await lead.call<Task>('get_task', { id: made.id });
    assert.deepEqual([closed.state, closed.holder, closed.result, closed.after], ['done', 'shop/codex-1', 'notes in docs/2.4.md', []]);
    const back = await lead.call<Array<{ from: string; urgent: boolean; body: string; task_result: unknown }>>('read_inbox', {});
    assert.deepEqual(back.map((message) => [message.from, message.urgent, message.body.split('\n')[1], message.task_result]), [['shop/codex-1', true, 'result: notes in docs/2.4.md', { id: made.id, state: 'done' }]]);
    assert.equal((offered[0] as { task_result?: unknown }).task_result, null, 'an offer is not a result');
    const cancel = await lead.call<Task>('create_task', { title: 'maybe later', to: '*' });
    assert.equal((await lead.call<Task>('cancel_task', { id: cancel.id })).state, 'cancelled');
    assert.deepEqual((await lead.call<{ tasks: Task[] }>('list_tasks', { state: 'all', created: true })).tasks.map((row) => row.state), ['done', 'cancelled']);
  } finally {
    await lead.close();
    await worker.close();
  }
}));

test('tasks over the hub: a remote machine makes, takes and closes tasks as its token\'s agent, and waits for one', withHub({}, async (bus, hub) => {
  const lead = createToken(bus, 'shop/claude');
  const worker = createToken(bus, 'shop/codex');
  const homes = [mkdtempSync(join(tmpdir(), 'agent-bus-remote-')), mkdtempSync(join(tmpdir(), 'agent-bus-remote-'))];
  try {
    const remote = (home: string, token: string): NodeJS.ProcessEnv => ({ PATH: process.env.PATH, HOME: home, NO_COLOR: '1', AGENT_BUS_URL: hub.url, AGENT_BUS_TOKEN: token });
    const leadEnv = remote(homes[0] as string, lead.token);
    const workerEnv = remote(homes[1] as string, worker.token);
    // Each token's agent joins the hub's roster.
    for (const env of [leadEnv, workerEnv]) assert.equal(runCli(['send', 'joining', '--to', '*'], { env }).code, 0);
    const made = json<Task>(runCli(['task', 'add', 'rotate the keys', '--to', 'shop/codex', '--json'], { env: leadEnv }));
    assert.equal(made.creator, 'shop/claude', 'the token speaks');
    assert.match(runCli(['task', 'add', 'x', '--to', 'shop', '--name', 'shop/codex'], { env: leadEnv }).stderr, /^agent-bus: .+\n$/, "--name may not name another token's agent");
    const waiting = runCliAsync(['task', 'wait', made.id, '--timeout', '30s', '--json'], { env: leadEnv });
    assert.equal(json<Task>(runCli(['task', 'take', made.id, '--json'], { env: workerEnv })).holder, 'shop/codex');
    assert.equal(runCli(['task', 'done', made.id, '--result', 'rotated'], { env: workerEnv }).code, 0);
    const waited = await waiting;
    assert.equal(waited.code, 0, waited.stderr);
    assert.equal(json<Task>(waited).result, 'rotated');
    assert.equal(json<Task[]>(runCli(['task', 'list', '--state', 'done', '--json'], { env: workerEnv })).length, 1);
    assert.deepEqual(readAudit(bus.audit).filter((row) => row.op === 'task').map((row) => [row.event, row.actor]), [['create', 'shop/claude'], ['take', 'shop/codex'], ['done', 'shop/codex']], "audited on the hub's bus");
  } finally {
    for (const home of homes) rmSync(home, { recursive: true, force: true });
  }
}));

test('at Stop, an agent holding a task it took and has not closed is reminded once, with its id and the two ways to close it; then it may stop', withTempBus((bus) => {
  const claude = agentEnv(bus, 'shop/claude', '/repos/shop');
  const codex = agentEnv(bus, 'shop/codex', '/repos/shop');
  register(claude);
  register(codex);
  const made = task(bus, ['add', 'port the parser', '--to', 'shop/codex'], claude);
  const closed = task(bus, ['add', 'already done', '--to', 'shop/codex'], claude);
  task(bus, ['take', made.id], codex);
  task(bus, ['take', closed.id], codex);
  task(bus, ['done', closed.id], codex);
  runCli(['inbox'], { env: codex });
  const stop = (): { code: number | null; stdout: string } => runCli(['hook-stop', '--client', 'claude'], { env: codex, input: JSON.stringify({ session_id: 's-codex' }) });
  const first = stop();
  assert.equal(first.code, 0);
  const decision = JSON.parse(first.stdout) as { decision: string; reason: string };
  assert.equal(decision.decision, 'block');
  assert.equal(
    decision.reason,
    `[agent-bus] You hold a task you took and have not closed:\n- ${made.id}: port the parser\nClose each before you stop: complete_task(id, result) when it is finished, or fail_task(id, reason) if it cannot be (agent-bus task done ID --result … / task fail ID --reason …).`,
  );
  assert.equal(stop().stdout, '', 'reminded once: the next stop lets it stop');
  // Mail still blocks as before, without the reminder again.
  runCli(['send', 'one more thing', '--to', 'shop/codex'], { env: claude });
  assert.doesNotMatch((JSON.parse(stop().stdout) as { reason: string }).reason, /You hold/);
}));
