/**
 * Gemini CLI for real, offline: a temp repo wired by `agent-bus init --clients gemini`, `gemini -p`
 * against a fake Gemini API on 127.0.0.1, the workspace trusted the way a user would
 * (GEMINI_CLI_TRUST_WORKSPACE); everything else is what init wrote.
 */
import assert from 'node:assert/strict';
import { gemini } from './drivers.js';
import { NOTICE_MARKERS } from './harness.js';
import { localScenarios } from './scenarios.js';

localScenarios(gemini, {
  promptHook: 'the prompt hook (BeforeAgent)',
  duringTurn: 'continues',
  readInbox: 'read',
  notices: {
    tools: ['channel_list'],
    shown: 'a critical one reaches the model after the tool call, with its result (AfterTool); an info one once',
    check(requests) {
      const last = requests.at(-1) ?? '';
      const result = last.lastIndexOf('"functionResponse"');
      assert.ok(result >= 0, `a tool call came back (${requests.length} requests)`);
      assert.ok(last.slice(result).includes(NOTICE_MARKERS.critical), 'the critical notice came with the tool result');
      assert.equal(last.split(NOTICE_MARKERS.info).length - 1, 1, 'the info notice was shown once');
    },
  },
  launchChannels: { over: "the repo's default in the hook commands", callsATool: true },
});
