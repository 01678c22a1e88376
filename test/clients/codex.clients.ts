/**
 * Codex for real, offline: a temp repo wired by `agent-bus init --clients
 * codex`, `codex exec` against a fake Responses API on 127.0.0.1. The project
 * is trusted and its hooks approved the way a user would (--trust,
 * --dangerously-bypass-hook-trust); everything else is what init wrote.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { readAudit, runCli } from '../helpers/bus-env.js';
import { codex } from './drivers.js';
import { startFakeResponses } from './fake-responses.js';
import { NOTICE_MARKERS } from './harness.js';
import { localScenarios, withLocal } from './scenarios.js';

localScenarios(codex, {
  promptHook: 'the prompt hook',
  duringTurn: 'continues',
  readInbox: 'read',
  urgent: "at its next tool call, with the tool's output",
  notices: {
    tools: ['channel_list'],
    shown: 'a critical one reaches the model between a tool call and its output, an info one once',
    check(requests) {
      const last = requests.at(-1) ?? '';
      // Codex places PreToolUse context as a developer message between the call and its output.
      const call = last.indexOf('"function_call"');
      const output = last.indexOf('"function_call_output"');
      assert.ok(call >= 0 && output > call, `a tool call was made (${requests.length} requests)`);
      assert.ok(last.slice(call, output).includes(NOTICE_MARKERS.critical), 'the pre-tool hook showed the critical notice before the tool ran');
      assert.equal(last.split(NOTICE_MARKERS.info).length - 1, 1, 'the info notice was shown once (at session start)');
    },
  },
  launchChannels: { over: "the repo's default in the hook commands", callsATool: true },
});

test("Codex: a model without the apply_patch tool runs apply_patch in its shell, and another agent's reservation refuses that too: the file untouched, the holder named in the command's output", { skip: codex.skip }, withLocal(codex, {}, async (s) => {
  const file = join(s.machine.repo, 'src', 'auth.ts');
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, 'export const version = 1;\n');
  const held = runCli(['reserve', 'src/auth.ts', '--name', 'shop/claude', '--reason', 'rewriting login', '--json'], { env: s.bus.env, cwd: s.machine.repo });
  assert.equal(held.code, 0, held.stderr);
  const patch = ['*** Begin Patch', '*** Update File: src/auth.ts', '@@', '-export const version = 1;', '+export const version = 2;', '*** End Patch'].join('\n');
  let asked = false;
  // fake-model: Codex has no metadata for it, and offers no apply_patch tool; the shell is what is left.
  const model = await startFakeResponses(() => {
    if (asked) return { text: 'done' };
    asked = true;
    return { namespace: null, name: 'exec_command', input: { cmd: `apply_patch <<'EOF'\n${patch}\nEOF\n` } };
  });
  try {
    const run = await s.run(model, 'update the login');
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    assert.ok(!(model.requests[0] ?? '').includes('"name":"apply_patch"'), 'no apply_patch tool was offered');
    assert.equal(readFileSync(file, 'utf8'), 'export const version = 1;\n', 'the refused patch left the file untouched');
    const results = model.requests.flatMap((raw) => codex.toolResults(raw));
    const refusal = /\[agent-bus\] src\/auth\.ts is reserved by shop\/claude for another \d+ (?:min|h) \(rewriting login\): this edit was refused and the file is untouched\./;
    assert.ok(results.length > 0 && results.every((result) => refusal.test(result)), `the command's output told the model who holds the file: ${JSON.stringify(results)}`);
    const denials = readAudit(s.bus.audit).filter((row) => row.op === 'deny');
    assert.deepEqual(denials.map((row) => [row.to, row.reserved]), [['shop/claude', 'src/auth.ts']]);
  } finally {
    await model.close();
  }
}));
