/**
 * Codex for real, offline: a temp repo wired by `agent-bus init --clients
 * codex`, `codex exec` against a fake Responses API on 127.0.0.1. The project
 * is trusted and its hooks approved the way a user would (--trust,
 * --dangerously-bypass-hook-trust); everything else is what init wrote.
 */
import assert from 'node:assert/strict';
import { codex } from './drivers.js';
import { NOTICE_MARKERS } from './harness.js';
import { localScenarios } from './scenarios.js';

localScenarios(codex, {
  promptHook: 'the prompt hook',
  duringTurn: 'continues',
  readInbox: 'read',
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
