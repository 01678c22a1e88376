/** Copilot CLI's profile: its dialect against the hook output it reads, the files its tools write, and the server it starts from another client's config. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { clientOfShell, clientStartingServer, profileFor } from '../../src/clients/registry/profiles.js';

const copilot = profileFor('copilot');

test('context is a top-level additionalContext for every hook that shows it; nothing at all when there is none', () => {
  for (const print of [copilot.dialect.prompt, copilot.dialect.sessionStart, copilot.dialect.preTool]) {
    assert.deepEqual(JSON.parse(print('some mail')), { additionalContext: 'some mail' });
    assert.equal(print(null), '');
  }
});

test('Stop keeps the turn with decision block; a tool call is refused with permissionDecision deny and the reason', () => {
  assert.deepEqual(JSON.parse(copilot.dialect.stop('mail waits')), { decision: 'block', reason: 'mail waits' });
  assert.equal(copilot.dialect.stop(null), '');
  assert.deepEqual(JSON.parse(copilot.dialect.denyTool?.('reserved') ?? ''), { permissionDecision: 'deny', permissionDecisionReason: 'reserved' });
});

test('its hooks name create and edit Write and Edit, the file in path; its shell tool writes what its command writes', async () => {
  const writes = copilot.writtenFiles;
  assert.ok(writes);
  assert.deepEqual(writes({ tool_name: 'Write', tool_input: { path: '/repo/a.txt', file_text: 'x' } }), ['/repo/a.txt']);
  assert.deepEqual(writes({ tool_name: 'Edit', tool_input: { path: 'src/b.ts', old_str: 'a', new_str: 'b' } }), ['src/b.ts']);
  assert.deepEqual(await writes({ tool_name: 'Bash', tool_input: { command: 'ls' } }), []);
  assert.deepEqual(writes({ tool_name: 'view', tool_input: { path: 'src/b.ts' } }), []);
});

test('a server Copilot CLI started says so by COPILOT_AGENT_SESSION_ID; its shell commands by COPILOT_CLI, with the session id', () => {
  assert.equal(clientStartingServer({ COPILOT_AGENT_SESSION_ID: 'c-1' }), 'copilot');
  assert.equal(clientStartingServer({ CLAUDE_CODE_SESSION_ID: 'x' }), null);
  assert.equal(clientStartingServer({ COPILOT_AGENT_SESSION_ID: ' ' }), null);
  assert.deepEqual(clientOfShell({ COPILOT_CLI: '1', COPILOT_AGENT_SESSION_ID: 'c-1' }), { client: 'copilot', sessionKey: 'c-1' });
});
