/**
 * Presence: the prompt hook says an agent is working, a stop hook that lets it stop says idle; the
 * roster shows the state with how long it has held and the task in hand; `wait --until` returns when
 * the state is reached; a session whose server closed is ended, one whose process died is gone.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { agentEnv, register } from '../helpers/agents.js';
import { json, runCli, runCliAsync, withTempBus } from '../helpers/bus-env.js';
import { connect } from '../helpers/mcp.js';
import { waitUntil } from '../helpers/wait.js';

interface Agent {
  name: string;
  state: string;
  state_since: string | null;
  task: { id: string; title: string } | null;
}

test('the prompt hook makes an agent working and a stop that lets it stop idle; agents shows the state, since when, and the task in hand; wait --until idle returns at that stop', withTempBus(async (bus) => {
  const env = agentEnv(bus, 'shop/claude', '/repos/shop');
  register(env);
  const agent = (): Agent => json<Agent[]>(runCli(['agents', '--json'], { env: bus.env })).find((row) => row.name === 'shop/claude') as Agent;
  assert.deepEqual([agent().state, agent().state_since, agent().task], ['unknown', null, null], 'nothing said yet: unknown, never guessed');
  const hook = (kind: string): void => assert.equal(runCli([kind, '--client', 'claude'], { env, input: JSON.stringify({ session_id: 's-1' }) }).code, 0);
  hook('hook-user-prompt');
  assert.equal(agent().state, 'working');
  const since = agent().state_since;
  assert.match(since ?? '', /^\d{4}-\d\d-\d\dT/);
  hook('hook-user-prompt');
  assert.equal(agent().state_since, since, 'a state held is not renewed');
  const task = json<{ id: string }>(runCli(['task', 'add', 'port the parser', '--to', 'shop/claude', '--json'], { env: bus.env }));
  assert.equal(runCli(['task', 'take', task.id], { env }).code, 0);
  assert.deepEqual(agent().task, { id: task.id, title: 'port the parser' });
  assert.match(runCli(['agents'], { env: bus.env }).stdout, new RegExp(`shop/claude +working just now  task ${task.id.slice(-12)}: port the parser  seen `));

  const waiting = runCliAsync(['wait', 'shop/claude', '--until', 'idle', '--timeout', '20s'], { env: bus.env });
  await new Promise((resolve) => setTimeout(resolve, 500));
  // The stop hook reminds it of the task once (kept working), then lets it stop: idle.
  hook('hook-stop');
  assert.equal(agent().state, 'working', 'kept working by the reminder');
  hook('hook-stop');
  const waited = await waiting;
  assert.equal(waited.code, 0, waited.stderr);
  assert.match(waited.stdout, /^shop\/claude is idle \(just now\)\n$/);
  assert.equal(agent().state, 'idle');
  const timedOut = runCli(['wait', 'shop/claude', '--until', 'working', '--timeout', '1s'], { env: bus.env });
  assert.equal(timedOut.code, 4);
  assert.match(timedOut.stderr, /^agent-bus: shop\/claude is idle \(.+\), not working, after 1s\n$/);
  assert.equal(runCli(['wait', 'shop/nobody', '--until', 'idle'], { env: bus.env }).code, 1);
  assert.equal(runCli(['wait', 'shop/claude', '--until', 'asleep'], { env: bus.env }).code, 2);
}));

test('list_agents carries the state fields; wait --until ended returns when a session\'s server closes', withTempBus(async (bus) => {
  const watcher = await connect(agentEnv(bus, 'shop/codex', '/repos/shop'));
  const session = await connect(agentEnv(bus, 'shop/claude', '/repos/shop'));
  try {
    const me = await session.call<{ name: string }>('whoami');
    const listed = await watcher.call<Agent[]>('list_agents', {});
    const row = listed.find((agent) => agent.name === me.name);
    assert.ok(row && 'state' in row && 'state_since' in row && 'task' in row, JSON.stringify(row));
    assert.equal(row.state, 'unknown', 'running, with nothing said of its turn yet');
    const waiting = runCliAsync(['wait', me.name, '--until', 'ended', '--timeout', '20s'], { env: bus.env });
    // The wait has seen the session on the roster before it closes.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    await session.close();
    const waited = await waiting;
    assert.equal(waited.code, 0, waited.stderr);
    assert.match(waited.stdout, new RegExp(`^${me.name} is ended\\n$`));
    // Its address leaves the roster with it, or stays as ended: never running.
    await waitUntil(async () => ['ended', undefined].includes((await watcher.call<Agent[]>('list_agents', {})).find((agent) => agent.name === me.name)?.state), 'list_agents no longer shows it running');
  } finally {
    await watcher.close();
  }
}));

test('notify_when: the caller gets urgent mail once when the agent reaches the state, at once if it is there already; a session that closes tells those waiting for ended', withTempBus(async (bus) => {
  const env = agentEnv(bus, 'shop/claude', '/repos/shop');
  register(env);
  const watcher = await connect(agentEnv(bus, 'shop/codex', '/repos/shop'));
  const other = await connect(agentEnv(bus, 'lab/claude', '/repos/lab'));
  try {
    const me = await watcher.call<{ name: string }>('whoami');
    const hook = (kind: string): void => assert.equal(runCli([kind, '--client', 'claude'], { env, input: JSON.stringify({ session_id: 's-1' }) }).code, 0);
    const told = async (): Promise<Array<[string, boolean, string]>> => (await watcher.call<Array<{ from: string; urgent: boolean; body: string }>>('read_inbox', {})).map((message) => [message.from, message.urgent, message.body]);
    assert.deepEqual(await watcher.call('notify_when', { name: 'shop/claude', state: 'idle' }), { name: 'shop/claude', state: 'idle', now: 'unknown', notified: false });
    assert.match(await watcher.fails('notify_when', { name: 'shop/nobody', state: 'idle' }), /no agent named 'shop\/nobody'/);
    assert.match(await watcher.fails('notify_when', { name: 'shop/claude', state: 'asleep' }), /state must be one of working, idle, waiting, ended, gone/);
    hook('hook-user-prompt');
    assert.deepEqual(await told(), [], 'working is not idle');
    hook('hook-stop');
    assert.deepEqual(await told(), [['agent-bus', true, '[agent-bus] shop/claude is idle (you asked to be told: notify_when).']]);
    hook('hook-user-prompt');
    hook('hook-stop');
    assert.deepEqual(await told(), [], 'once');
    assert.deepEqual(await watcher.call('notify_when', { name: 'shop/claude', state: 'idle' }), { name: 'shop/claude', state: 'idle', now: 'idle', notified: true });
    assert.equal((await told()).length, 1, 'at once, when it is there already');
    const otherName = (await other.call<{ name: string }>('whoami')).name;
    await watcher.call('notify_when', { name: otherName, state: 'ended' });
    await other.close();
    await waitUntil(async () => (await told()).some(([, , body]) => body === `[agent-bus] ${otherName} is ended (you asked to be told: notify_when).`), `told that ${otherName} ended`);
    assert.ok(me.name.startsWith('shop/codex'));
  } finally {
    await watcher.close();
  }
}));

test("Claude Code's Notification hook: a permission prompt or a question makes the session waiting (wait --until waiting returns), idle_prompt says nothing, its next tool call makes it working; SessionEnd makes it ended, and its next session starts idle", withTempBus(async (bus) => {
  const env = agentEnv(bus, 'shop/claude', '/repos/shop');
  register(env);
  const state = (): string | undefined => json<Agent[]>(runCli(['agents', '--json'], { env: bus.env })).find((row) => row.name === 'shop/claude')?.state;
  // Claude Code's own payloads, as its hooks receive them.
  const base = { session_id: 's-1', transcript_path: '/tmp/t.jsonl', cwd: '/repos/shop' };
  const hook = (kind: string, payload: object): string => {
    const run = runCli([kind, '--client', 'claude'], { env, input: JSON.stringify({ ...base, ...payload }) });
    assert.equal(run.code, 0, run.stderr);
    return run.stdout;
  };
  const notification = (type: string, message: string): string => hook('hook-notification', { hook_event_name: 'Notification', message, notification_type: type });
  hook('hook-session-start', { hook_event_name: 'SessionStart', source: 'startup' });
  assert.equal(state(), 'idle', 'a new session waits for its first prompt');
  hook('hook-user-prompt', { hook_event_name: 'UserPromptSubmit', prompt: 'fix the build' });
  assert.equal(state(), 'working');
  // A session started again mid-turn (compaction) is not made idle.
  hook('hook-session-start', { hook_event_name: 'SessionStart', source: 'compact' });
  assert.equal(state(), 'working');
  assert.equal(notification('idle_prompt', 'Claude is waiting for your input'), '', 'prints nothing');
  assert.equal(state(), 'working', 'idle_prompt is a timer, not a state');
  const waiting = runCliAsync(['wait', 'shop/claude', '--until', 'waiting', '--timeout', '20s'], { env: bus.env });
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.equal(notification('permission_prompt', 'Claude needs your permission to use Bash'), '');
  const waited = await waiting;
  assert.equal(waited.code, 0, waited.stderr);
  assert.match(waited.stdout, /^shop\/claude is waiting \(just now\)\n$/);
  assert.match(runCli(['agents'], { env: bus.env }).stdout, /shop\/claude +waiting just now/);
  hook('hook-pre-tool', { hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'make' } });
  assert.equal(state(), 'working', 'answered: the tool runs');
  notification('elicitation_dialog', 'Claude has a question');
  assert.equal(state(), 'waiting');
  hook('hook-stop', { hook_event_name: 'Stop', stop_hook_active: false });
  assert.equal(state(), 'idle');
  assert.equal(hook('hook-session-end', { hook_event_name: 'SessionEnd', reason: 'prompt_input_exit' }), '');
  assert.equal(state(), 'ended');
  hook('hook-user-prompt', { hook_event_name: 'UserPromptSubmit', prompt: 'x' });
  hook('hook-session-end', { hook_event_name: 'SessionEnd', reason: 'clear' });
  hook('hook-session-start', { hook_event_name: 'SessionStart', source: 'startup', session_id: 's-2' });
  assert.equal(state(), 'idle', 'its next session starts idle');
  // In a repo not on the bus, the hooks say nothing and note nothing.
  const stranger = runCli(['hook-notification', '--client', 'claude'], { env: { ...bus.env, AGENT_BUS_NAME: '' }, cwd: bus.dir, input: JSON.stringify({ notification_type: 'permission_prompt' }) });
  assert.deepEqual([stranger.code, stranger.stdout], [0, '']);
}));
