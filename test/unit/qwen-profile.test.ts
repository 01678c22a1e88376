/** Qwen Code's profile: its JSON dialect, the files its tools write, its own sends of tool results, and its inbox socket's frames. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { nothingToAnswer, preToolPartOf } from '../../src/clients/profile.js';
import { clientOfShell, profileFor } from '../../src/clients/registry/profiles.js';
import { sessionSocketOf, socketFrames } from '../../src/wake/session-socket.js';

const qwen = profileFor('qwen');

test('every answer is JSON: context as hookSpecificOutput (PostToolUse between tool calls), a refusal as PreToolUse permissionDecision, a kept turn as decision block', () => {
  assert.deepEqual(JSON.parse(qwen.dialect.prompt('mail')), { hookSpecificOutput: { hookEventName: 'UserPromptSubmit', additionalContext: 'mail' } });
  assert.deepEqual(JSON.parse(qwen.dialect.sessionStart('notices')), { hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: 'notices' } });
  assert.deepEqual(JSON.parse(qwen.dialect.preTool('urgent')), { hookSpecificOutput: { hookEventName: 'PostToolUse', additionalContext: 'urgent' } });
  assert.deepEqual(JSON.parse(qwen.dialect.denyTool?.('reserved') ?? ''), { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'reserved' } });
  assert.deepEqual(JSON.parse(qwen.dialect.stop('mail waits')), { decision: 'block', reason: 'mail waits' });
  for (const print of [qwen.dialect.prompt, qwen.dialect.sessionStart, qwen.dialect.preTool, qwen.dialect.stop]) assert.equal(print(null), '');
  assert.equal(preToolPartOf(qwen, { hook_event_name: 'PreToolUse' }), 'guard');
  assert.equal(preToolPartOf(qwen, { hook_event_name: 'PostToolUse' }), 'context');
});

test("its tools' writes: write_file, edit and notebook_edit name the file; run_shell_command's command is read in its directory", async () => {
  const writes = qwen.writtenFiles;
  assert.ok(writes);
  assert.deepEqual(await writes({ tool_name: 'write_file', tool_input: { file_path: '/repo/a.txt', content: 'x' } }), ['/repo/a.txt']);
  assert.deepEqual(await writes({ tool_name: 'edit', tool_input: { file_path: 'src/b.ts', old_string: 'a', new_string: 'b' } }), ['src/b.ts']);
  assert.deepEqual(await writes({ tool_name: 'notebook_edit', tool_input: { notebook_path: 'n.ipynb' } }), ['n.ipynb']);
  assert.deepEqual(await writes({ tool_name: 'run_shell_command', tool_input: { command: 'echo x > out.txt', directory: 'src' }, cwd: '/repo' }), ['src/out.txt']);
  assert.deepEqual(await writes({ tool_name: 'read_file', tool_input: { file_path: 'src/b.ts' } }), []);
  assert.deepEqual(clientOfShell({ QWEN_CODE: '1', QWEN_CODE_SESSION_ID: 'q-1' }), { client: 'qwen', sessionKey: 'q-1' });
});

test('a UserPromptSubmit with no prompt is its own send of tool results: the prompt hook answers nothing there, and only there', () => {
  assert.equal(nothingToAnswer(qwen, 'prompt', { prompt: '' }), true);
  assert.equal(nothingToAnswer(qwen, 'prompt', {}), true);
  assert.equal(nothingToAnswer(qwen, 'prompt', { prompt: 'fix the bug', submitted_prompt: 'fix the bug' }), false);
  assert.equal(nothingToAnswer(qwen, 'stop', { prompt: '' }), false);
  assert.equal(nothingToAnswer(profileFor('claude'), 'prompt', { prompt: '' }), false, 'Claude Code runs it for prompts only');
});

test("its inbox socket takes Qwen Code's peer frames: a versioned auth line, then a user message with an id of its own", () => {
  const wake = qwen.wake;
  assert.ok(wake.kind === 'watch' && wake.socket !== null);
  const socket = sessionSocketOf(wake.socket, { QWEN_CODE_MESSAGING_SOCKET: '/tmp/qwen-socks-1/2.sock', QWEN_CODE_MESSAGING_TOKEN: 'tok' });
  assert.deepEqual(socket, { path: '/tmp/qwen-socks-1/2.sock', token: 'tok', frame: 'qwen' });
  const [auth, user, rest] = socketFrames(socket, 'agent-bus: new mail').split('\n');
  assert.deepEqual(JSON.parse(auth ?? ''), { msgV: 1, type: 'auth', token: 'tok' });
  const message = JSON.parse(user ?? '') as { msgV: number; msgId: string; type: string; priority: string; message: unknown };
  assert.deepEqual({ ...message, msgId: undefined }, { msgV: 1, msgId: undefined, type: 'user', priority: 'next', message: { role: 'user', content: 'agent-bus: new mail' } });
  assert.match(message.msgId, /^[0-9a-f-]{36}$/);
  assert.equal(rest, '');
  assert.notEqual(JSON.parse(socketFrames(socket, 'x').split('\n')[1] ?? '').msgId, message.msgId, 'each post its own id');
});
