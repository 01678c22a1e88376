import assert from 'node:assert/strict';
import { test } from 'node:test';
import { dialectFor } from '../../src/clients/registry/profiles.js';
import { parsePayload, payloadDirectory, payloadSessionKey, payloadTimeoutMs } from '../../src/hooks/payload.js';

test('the payload timeout setting', () => {
  const cases: Array<[string | undefined, number]> = [[undefined, 5000], ['', 5000], ['0.25', 250], ['0', 0], ['-1', 5000], ['soon', 5000]];
  for (const [raw, expected] of cases) assert.equal(payloadTimeoutMs(raw === undefined ? {} : { AGENT_BUS_HOOK_PAYLOAD_TIMEOUT: raw }), expected, String(raw));
});

test('payloads: objects only, their directory and their session id', () => {
  assert.deepEqual(parsePayload('[1]'), {});
  assert.deepEqual(parsePayload('nope'), {});
  assert.deepEqual(parsePayload(''), {});
  assert.equal(payloadDirectory({ cwd: '/a' }), '/a');
  assert.equal(payloadDirectory({ workspacePaths: ['/w', '/x'] }), '/w');
  assert.equal(payloadDirectory({}), undefined);
  assert.equal(payloadSessionKey({ session_id: 's-1' }), 's-1');
  assert.equal(payloadSessionKey({ conversationId: 'c-1' }), 'c-1');
  assert.equal(payloadSessionKey({}), null);
});

test('dialects: unknown clients take the common contract', () => {
  assert.equal(dialectFor('claude').stop('why'), '{"decision":"block","reason":"why"}\n');
  assert.equal(dialectFor('whatever').prompt('ctx'), 'ctx\n');
  assert.equal(dialectFor(null).prompt(null), '');
  assert.equal(dialectFor('codex').stop(null), '');
  assert.equal(dialectFor('agy').stop(null), '{"decision":"stop"}\n');
});
