/**
 * Qwen Code for real, offline, on Node.js 22: a temp repo wired by `agent-bus init --clients qwen`,
 * `qwen -p … --yolo` against a fake Anthropic Messages API on 127.0.0.1 (Anthropic as the user's
 * sign-in); everything else is what init wrote. Its model reaches the bus's tools through
 * `tool_search` and `tool_call`.
 */
import assert from 'node:assert/strict';
import { qwen } from './drivers.js';
import { NOTICE_MARKERS } from './harness.js';
import { localScenarios } from './scenarios.js';

localScenarios(qwen, {
  promptHook: 'the prompt hook (UserPromptSubmit)',
  duringTurn: 'continues',
  readInbox: 'read',
  notices: {
    tools: ['channel_list'],
    shown: 'a critical one reaches the model at the tool call (PreToolUse), an info one once',
    check(requests) {
      const last = requests.at(-1) ?? '';
      assert.ok(last.includes('tool_result'), `a tool call came back (${requests.length} requests)`);
      assert.ok(last.includes(NOTICE_MARKERS.critical), 'the critical notice reached the model with the tool call');
      assert.equal(last.split(NOTICE_MARKERS.info).length - 1, 1, 'the info notice was shown once');
    },
  },
  launchChannels: { over: "the repo's default in the hook commands", callsATool: true },
});
