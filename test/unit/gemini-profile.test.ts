/** Gemini CLI's profile: its dialect against the hook contract it documents, the files its tools write, and where the pre-tool hook's parts go. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { preToolPartOf } from '../../src/clients/profile.js';
import { profileFor } from '../../src/clients/registry/profiles.js';
import { presenceOfNotification } from '../../src/model/hooks.js';

const gemini = profileFor('gemini');

test('context is hookSpecificOutput.additionalContext of the event that shows it; nothing at all when there is none', () => {
  const { dialect } = gemini;
  for (const [print, event] of [
    [dialect.prompt, 'BeforeAgent'],
    [dialect.sessionStart, 'SessionStart'],
    [dialect.preTool, 'AfterTool'],
  ] as const) {
    assert.deepEqual(JSON.parse(print('some mail')), { hookSpecificOutput: { hookEventName: event, additionalContext: 'some mail' } });
    // Gemini CLI shows any other stdout to the user as a system message: silence is empty.
    assert.equal(print(null), '');
  }
});

test("AfterAgent keeps the turn with decision deny (its reason is the next prompt); a tool call is refused the same way", () => {
  assert.deepEqual(JSON.parse(gemini.dialect.stop('mail waits')), { decision: 'deny', reason: 'mail waits' });
  assert.equal(gemini.dialect.stop(null), '', 'let it stop: no output');
  assert.deepEqual(JSON.parse(gemini.dialect.denyTool?.('reserved') ?? ''), { decision: 'deny', reason: 'reserved' });
});

test('write_file and replace name the file they write; other tools write none', () => {
  const writes = gemini.writtenFiles;
  assert.ok(writes);
  assert.deepEqual(writes({ tool_name: 'write_file', tool_input: { file_path: 'src/a.ts', content: 'x' } }), ['src/a.ts']);
  assert.deepEqual(writes({ tool_name: 'replace', tool_input: { file_path: '/repo/b.ts', old_string: 'a', new_string: 'b' } }), ['/repo/b.ts']);
  assert.deepEqual(writes({ tool_name: 'read_file', tool_input: { file_path: 'src/a.ts' } }), []);
  assert.deepEqual(writes({ tool_name: 'write_file', tool_input: {} }), []);
});

test('the pre-tool hook checks writes at BeforeTool and shows its context at AfterTool; a payload naming neither is only checked', () => {
  assert.equal(preToolPartOf(gemini, { hook_event_name: 'BeforeTool' }), 'guard');
  assert.equal(preToolPartOf(gemini, { hook_event_name: 'AfterTool' }), 'context');
  assert.equal(preToolPartOf(gemini, {}), 'guard');
  assert.equal(preToolPartOf(profileFor('claude'), { hook_event_name: 'PreToolUse' }), 'both', 'a client with one pre-tool event does both');
  assert.deepEqual(gemini.hookEvents.filter(([, command]) => command === 'hook-pre-tool').map(([event]) => event), ['BeforeTool', 'AfterTool']);
});

test('a tool call waiting for approval (ToolPermission) is a session waiting on its person', () => {
  assert.equal(presenceOfNotification('ToolPermission'), 'waiting');
});
