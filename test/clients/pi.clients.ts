/**
 * Pi for real, offline: a temp repo wired by `agent-bus init --clients pi` (the extension in
 * `.pi/extensions/`), `pi -p` against a fake Anthropic Messages API on 127.0.0.1, its own folder
 * (PI_CODING_AGENT_DIR) in the temp machine's.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { json, runCli } from '../helpers/bus-env.js';
import { pi } from './drivers.js';
import { NOTICE_MARKERS } from './harness.js';
import { localScenarios } from './scenarios.js';

localScenarios(pi, {
  wiring(repo) {
    const extension = readFileSync(join(repo, '.pi', 'extensions', 'agent-bus.ts'), 'utf8');
    assert.match(extension, /^\/\/ Managed by `agent-bus init`/);
    assert.match(extension, /^const CHANNELS = "brain,amygdala";$/m);
  },
  promptHook: 'the extension at before_agent_start',
  // At turn_end with mail to act on, the extension sends the stop hook's reason as a follow-up that starts another turn.
  duringTurn: 'continues',
  readInbox: 'read',
  notices: {
    tools: ['channel_list'],
    shown: 'the extension shows them with the first prompt',
    check(requests, bus) {
      assert.ok(requests.length >= 2, `a tool call and the request after it (${requests.length} requests)`);
      assert.ok(requests.every((raw) => raw.includes(NOTICE_MARKERS.critical)), 'the critical notice is in every request of the turn');
      assert.ok(requests.every((raw) => raw.includes(NOTICE_MARKERS.info)), 'the info notice stays in the turn it was shown in');
      const listed = json<Array<{ message: string; delivered_to: number }>>(runCli(['channel', 'list', '--notices', '--json'], { env: bus.env }));
      assert.equal(listed.find((notice) => notice.message === NOTICE_MARKERS.info)?.delivered_to, 1, 'shown to one session, once');
    },
  },
  launchChannels: { over: "the extension's CHANNELS", callsATool: false },
});
