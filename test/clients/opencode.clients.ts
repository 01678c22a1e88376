/**
 * opencode for real, offline: a temp repo wired by `agent-bus init --clients
 * opencode`, `opencode run` against a fake chat completions server on
 * 127.0.0.1. The fake model provider lives in the user's config (the temp
 * XDG_CONFIG_HOME), so the project files are exactly what init wrote.
 */
import assert from 'node:assert/strict';
import { json, runCli } from '../helpers/bus-env.js';
import { opencode } from './drivers.js';
import { NOTICE_MARKERS } from './harness.js';
import { localScenarios } from './scenarios.js';

localScenarios(opencode, {
  promptHook: 'the plugin',
  // `opencode run` ends at idle: the plugin's Stop hook only peeks, and the follow-up turn that would take the mail does not come.
  duringTurn: 'next-turn',
  readInbox: 'read-later',
  urgent: 'after its next tool call, through the plugin',
  notices: {
    tools: ['channel_list'],
    shown: 'the plugin shows a critical one after each tool call and an info one at the first turn',
    check(requests, bus) {
      const agentRequests = opencode.turns(requests, 'channel_list');
      assert.ok(agentRequests.length >= 2, `a tool call and the request after it (${requests.length} requests)`);
      const afterTool = agentRequests.at(-1) ?? '';
      // The request after the tool carries the critical notice twice: in the turn's text and from the pre-tool hook.
      assert.ok(afterTool.split(NOTICE_MARKERS.critical).length - 1 >= 2, 'the pre-tool hook added the critical notice after the tool call');
      assert.ok(agentRequests.every((raw) => raw.includes(NOTICE_MARKERS.info)), 'the info notice stays in the turn it was shown in');
      const listed = json<Array<{ message: string; delivered_to: number }>>(runCli(['channel', 'list', '--notices', '--json'], { env: bus.env }));
      assert.equal(listed.find((notice) => notice.message === NOTICE_MARKERS.info)?.delivered_to, 1, 'shown to one session, once');
    },
  },
  launchChannels: { over: "the plugin's CHANNELS", callsATool: false },
});
