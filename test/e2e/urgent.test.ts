/**
 * Urgent mail between tool calls: `send --urgent`, `send_message(urgent)` and the dashboard's box
 * mark it; the pre-tool hook shows it in each client's dialect and records it delivered by
 * `hook-pre-tool`; plain mail waits for the turn's end; AGENT_BUS_MIDTURN picks urgent, all or off.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { agentEnv, register } from '../helpers/agents.js';
import { CLI, json, readAudit, runCli, type TempBus, withTempBus } from '../helpers/bus-env.js';
import { connect } from '../helpers/mcp.js';

interface Sent {
  message_id: string;
  message_ids: string[];
}

function sendMail(bus: TempBus, body: string, to: string, extra: string[] = []): Sent {
  return json<Sent>(runCli(['send', body, '--to', to, '--json', ...extra], { env: bus.env }));
}

/** What a client's pre-tool hook prints before a Bash call. */
function preTool(env: NodeJS.ProcessEnv, client: string, payload: Record<string, unknown> = {}): string {
  const result = spawnSync(process.execPath, [CLI, 'hook-pre-tool', '--client', client], {
    env,
    cwd: env.HOME,
    input: JSON.stringify({ session_id: `s-${client}`, tool_name: 'Bash', tool_input: { command: 'ls' }, ...payload }),
    encoding: 'utf8',
    timeout: 30_000,
  });
  assert.equal(result.status, 0, result.stderr);
  assert.equal(result.stderr, '');
  return result.stdout;
}

function receipt(bus: TempBus, id: string): { state: string; delivered_via: string | null; read_via: string | null } {
  const status = json<{ copies: Array<{ state: string; delivered_via: string | null; read_via: string | null }> }>(runCli(['status', id, '--json'], { env: bus.env }));
  const [copy] = status.copies;
  assert.ok(copy);
  return copy;
}

/** The text a pre-tool answer puts in front of the model, in the client's dialect. */
function contextOf(output: string, client: string): string {
  if (output === '') return '';
  if (client === 'opencode') return output;
  const parsed = JSON.parse(output) as { hookSpecificOutput: { hookEventName: string; additionalContext: string } };
  assert.equal(parsed.hookSpecificOutput.hookEventName, 'PreToolUse');
  return parsed.hookSpecificOutput.additionalContext;
}

test('urgent mail is shown at the next tool call in each client\'s dialect and recorded delivered by hook-pre-tool; plain mail waits for the turn\'s end', withTempBus((bus) => {
  for (const client of ['claude', 'codex', 'opencode']) {
    const env = agentEnv(bus, `repo-a/${client}`, '/repos/a');
    register(env);
    const plain = sendMail(bus, `plain note for ${client}`, `repo-a/${client}`);
    const urgent = sendMail(bus, `STOP the migration, ${client}`, `repo-a/${client}`, ['--urgent']);
    const shown = contextOf(preTool(env, client), client);
    assert.match(shown, /^\[agent-bus\] 1 urgent message\(s\) arrived during this turn; read them before your next step:\n- from human at .*: STOP the migration/);
    assert.doesNotMatch(shown, /plain note/);
    assert.deepEqual(receipt(bus, urgent.message_id), { ...receipt(bus, urgent.message_id), state: 'read', delivered_via: 'hook-pre-tool', read_via: 'hook-pre-tool' });
    assert.equal(receipt(bus, plain.message_id).state, 'sent');
    // Shown once: the next tool call has nothing to say, and the turn's end shows the plain mail only.
    assert.equal(preTool(env, client), '');
    const prompt = spawnSync(process.execPath, [CLI, 'hook-user-prompt', '--client', client], { env, cwd: env.HOME, input: '{}', encoding: 'utf8' });
    assert.match(prompt.stdout, /plain note/);
    assert.doesNotMatch(prompt.stdout, /STOP the migration/);
  }
  const delivered = readAudit(bus.audit).filter((row) => row.op === 'deliver' && row.via === 'hook-pre-tool');
  assert.equal(delivered.length, 3, 'one deliver row per client, by hook-pre-tool');
}));

test('AGENT_BUS_MIDTURN: off shows nothing mid-turn, all shows plain mail too', withTempBus((bus) => {
  const env = agentEnv(bus, 'repo-a/claude', '/repos/a');
  register(env);
  sendMail(bus, 'urgent one', 'repo-a/claude', ['--urgent']);
  assert.equal(preTool({ ...env, AGENT_BUS_MIDTURN: 'off' }, 'claude'), '');
  sendMail(bus, 'plain one', 'repo-a/claude');
  const all = contextOf(preTool({ ...env, AGENT_BUS_MIDTURN: 'all' }, 'claude'), 'claude');
  assert.match(all, /^\[agent-bus\] 2 message\(s\) arrived during this turn/);
  assert.match(all, /urgent one[\s\S]*plain one/);
  assert.equal(preTool({ ...env, AGENT_BUS_MIDTURN: 'all' }, 'claude'), '');
}));

test('a repo-wide urgent send reaches the first tool call in the repo; its repo-mate is not interrupted with the claimed copy', withTempBus((bus) => {
  const claude = agentEnv(bus, 'repo-a/claude', '/repos/a');
  const codex = agentEnv(bus, 'repo-a/codex', '/repos/a');
  register(claude);
  register(codex);
  sendMail(bus, 'someone stop the deploy', 'repo-a', ['--urgent']);
  assert.match(contextOf(preTool(claude, 'claude'), 'claude'), /someone stop the deploy/);
  assert.equal(preTool(codex, 'codex'), '', 'the claimed copy waits for the turn boundary, for information');
}));

test('send_message(urgent: true) over MCP marks mail urgent, read_inbox says so, and a bad urgent is refused', withTempBus(async (bus) => {
  const receiver = agentEnv(bus, 'repo-a/codex', '/repos/a');
  register(receiver);
  const session = await connect(agentEnv(bus, 'repo-a/claude', '/repos/a'));
  try {
    const sent = await session.call<{ message_id: string }>('send_message', { to: 'repo-a/codex', body: 'the build is red, hold your push', urgent: true });
    await session.call('send_message', { to: 'repo-a/codex', body: 'lunch?' });
    await session.fails('send_message', { to: 'repo-a/codex', body: 'x', urgent: 'yes' });
    const peeked = json<Array<{ body: string; urgent: boolean }>>(runCli(['inbox', '--peek', '--json'], { env: receiver }));
    assert.deepEqual(peeked.map((message) => [message.body, message.urgent]), [['the build is red, hold your push', true], ['lunch?', false]]);
    assert.match(contextOf(preTool(receiver, 'codex'), 'codex'), /the build is red/);
    assert.equal(receipt(bus, sent.message_id).delivered_via, 'hook-pre-tool');
  } finally {
    await session.close();
  }
}));
