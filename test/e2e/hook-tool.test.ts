/**
 * The client's hooks answered by the session's own MCP server (`client_hook`, which Claude Code's and
 * Codex's `mcp_tool` hooks call), driven through the official SDK over stdio on a real bus: the same
 * answers as the command hooks, in JSON, with the same receipts; a model's call changes nothing.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { json, runCli, withTempBus, type TempBus } from '../helpers/bus-env.js';
import { connect, type McpSession } from '../helpers/mcp.js';
import { repoIn } from '../helpers/reservations.js';

type Answer = { hookSpecificOutput?: { hookEventName: string; additionalContext?: string; permissionDecision?: string; permissionDecisionReason?: string }; decision?: string; reason?: string };

/** A hook's call as a client makes it: no model's marks in its metadata. */
async function hook(session: McpSession, input: Record<string, unknown>, meta?: Record<string, unknown>): Promise<{ answer: Answer; raw: string; ms: unknown; isError: boolean }> {
  const result = await session.client.callTool({ name: 'client_hook', arguments: input, ...(meta === undefined ? {} : { _meta: meta }) });
  const raw = (result.content as Array<{ text: string }>)[0]?.text ?? '';
  const isError = result.isError === true;
  return { answer: isError ? {} : (JSON.parse(raw) as Answer), raw, ms: (result._meta as Record<string, unknown> | undefined)?.['agent-bus/answer_ms'], isError };
}

function statusOf(bus: TempBus, id: string): string {
  const status = json<{ state: string; copies: Array<{ read_via: string | null }> }>(runCli(['status', id, '--json'], { env: bus.env }));
  return status.state === 'read' ? `read via ${status.copies[0]?.read_via}` : status.state;
}

function send(bus: TempBus, body: string, to: string, extra: string[] = []): string {
  const sent = runCli(['send', body, '--to', to, '--name', 'shop/codex', '--json', ...extra], { env: bus.env });
  assert.equal(sent.code, 0, sent.stderr);
  return json<{ message_ids: string[] }>(sent).message_ids[0] as string;
}

async function claudeServer(bus: TempBus, root: string, key = 'sess-1'): Promise<{ session: McpSession; name: string }> {
  const session = await connect({ ...bus.env, CLAUDE_CODE_SESSION_ID: key }, { cwd: root, args: ['--client', 'claude'] });
  const { name } = await session.call<{ name: string }>('whoami');
  return { session, name };
}

test('client_hook at a prompt: the mail in JSON context, delivered by the hook; nothing twice; a model call refused and nothing taken', withTempBus(async (bus) => {
  const root = repoIn(bus);
  const { session, name } = await claudeServer(bus, root);
  try {
    assert.equal(name, 'shop/claude-1');
    const first = send(bus, 'please look at the login test', name);
    // A model's call (Claude Code marks it with the tool use's id; Codex with the call's id) is refused, and takes nothing.
    for (const meta of [{ 'claudecode/toolUseId': 'toolu_1' }, { callId: 'call_1', 'x-codex-turn-metadata': { thread_id: 't' } }]) {
      const refused = await hook(session, { kind: 'prompt', session_id: 'sess-1', cwd: root, hook_event_name: 'UserPromptSubmit' }, meta);
      assert.equal(refused.isError, true);
      assert.match(refused.raw, /answers the client's hooks only; it did nothing/);
    }
    assert.equal(statusOf(bus, first), 'sent', 'a model call delivered nothing');
    const { answer, ms } = await hook(session, { kind: 'prompt', session_id: 'sess-1', cwd: root, hook_event_name: 'UserPromptSubmit', transcript_path: '', tool_name: '' });
    assert.equal(answer.hookSpecificOutput?.hookEventName, 'UserPromptSubmit');
    assert.match(answer.hookSpecificOutput?.additionalContext ?? '', /please look at the login test/);
    assert.equal(typeof ms, 'number', 'the server reports its own time');
    assert.equal(statusOf(bus, first), 'read via hook-user-prompt');
    const again = await hook(session, { kind: 'prompt', session_id: 'sess-1', cwd: root, hook_event_name: 'UserPromptSubmit' });
    assert.deepEqual(again.answer, {}, 'nothing new: an empty answer');
  } finally {
    await session.close();
  }
}));

test('client_hook before a tool call: a reserved file refused with its holder, in either client\'s form of the input; urgent mail between calls', withTempBus(async (bus) => {
  const root = repoIn(bus);
  const reserved = runCli(['reserve', 'src/auth.ts', '--reason', 'rewriting login', '--name', 'shop/gemini'], { env: bus.env, cwd: root });
  assert.equal(reserved.code, 0, reserved.stderr);
  const { session, name } = await claudeServer(bus, root);
  try {
    // Claude Code gives tool_input as JSON text; Codex as an object.
    for (const toolInput of [JSON.stringify({ file_path: join(root, 'src/auth.ts'), old_string: 'a', new_string: 'b' }), { file_path: join(root, 'src/auth.ts') }]) {
      const { answer } = await hook(session, { kind: 'pre-tool', session_id: 'sess-1', cwd: root, hook_event_name: 'PreToolUse', tool_name: 'Edit', tool_input: toolInput });
      assert.equal(answer.hookSpecificOutput?.permissionDecision, 'deny');
      assert.match(answer.hookSpecificOutput?.permissionDecisionReason ?? '', /src\/auth\.ts.*shop\/gemini.*rewriting login/s);
    }
    const free = await hook(session, { kind: 'pre-tool', session_id: 'sess-1', cwd: root, hook_event_name: 'PreToolUse', tool_name: 'Edit', tool_input: JSON.stringify({ file_path: join(root, 'src/other.ts') }) });
    assert.deepEqual(free.answer, {});
    // The write is the client's, as a command hook records it: a collision's mail then reaches an address that stays.
    assert.deepEqual(bus.rows("SELECT agent FROM edits WHERE path = 'src/other.ts'"), [{ agent: 'shop/claude' }]);
    const plain = send(bus, 'not urgent', name);
    const urgent = send(bus, 'the build is broken', name, ['--urgent']);
    const { answer } = await hook(session, { kind: 'pre-tool', session_id: 'sess-1', cwd: root, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: JSON.stringify({ command: 'ls' }) });
    assert.match(answer.hookSpecificOutput?.additionalContext ?? '', /the build is broken/);
    assert.doesNotMatch(answer.hookSpecificOutput?.additionalContext ?? '', /not urgent/);
    assert.equal(statusOf(bus, urgent), 'read via hook-pre-tool');
    assert.equal(statusOf(bus, plain), 'sent');
  } finally {
    await session.close();
  }
}));

test('client_hook at a stop: held once for unread mail, in the client\'s own form of stop_hook_active; then let go', withTempBus(async (bus) => {
  const root = repoIn(bus);
  const { session, name } = await claudeServer(bus, root);
  try {
    const id = send(bus, 'reply before you stop', name);
    for (const active of ['false', false]) {
      const { answer } = await hook(session, { kind: 'stop', session_id: 'sess-1', cwd: root, hook_event_name: 'Stop', stop_hook_active: active, last_assistant_message: 'done' });
      if (active === 'false') {
        assert.equal(answer.decision, 'block');
        assert.match(answer.reason ?? '', /reply before you stop/);
        assert.equal(statusOf(bus, id), 'read via hook-stop');
      } else {
        assert.deepEqual(answer, {}, 'the mail was shown: the next stop is let go');
      }
    }
    const presence = json<Array<{ name: string; state: string }>>(runCli(['agents', '--json'], { env: bus.env })).find((row) => row.name === name);
    assert.equal(presence?.state, 'idle');
  } finally {
    await session.close();
  }
}));

test("Codex: client_hook binds the server to the first hook's thread; a hook of another thread is looked up, never given that session's own mail", withTempBus(async (bus) => {
  const root = repoIn(bus);
  const session = await connect(bus.env, { cwd: root, args: ['--client', 'codex'] });
  try {
    // Codex's hook calls carry the thread id in their metadata, and its payload's session_id.
    const first = await hook(session, { kind: 'session-start', session_id: 'thread-1', cwd: root, hook_event_name: 'SessionStart' }, { threadId: 'thread-1', progressToken: 1 });
    assert.equal(first.isError, false);
    const { name } = await session.call<{ name: string }>('whoami');
    assert.equal(name, 'shop/codex-1');
    const id = send(bus, 'for thread one alone', name);
    const other = await hook(session, { kind: 'prompt', session_id: 'thread-2', cwd: root, hook_event_name: 'UserPromptSubmit' }, { threadId: 'thread-2', progressToken: 2 });
    assert.deepEqual(other.answer, {}, "another thread's hook reads no session's own mail");
    assert.equal(statusOf(bus, id), 'sent');
    const own = await hook(session, { kind: 'prompt', session_id: 'thread-1', cwd: root, hook_event_name: 'UserPromptSubmit' }, { threadId: 'thread-1', progressToken: 3 });
    assert.match(own.answer.hookSpecificOutput?.additionalContext ?? '', /for thread one alone/);
  } finally {
    await session.close();
  }
}));
