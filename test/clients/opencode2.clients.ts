/**
 * opencode 2 for real, offline, beside opencode 1.x (opencode.clients.ts): a temp repo wired by
 * `agent-bus init --clients opencode` with opencode 2 the one installed (so it writes 2.x's shape),
 * `opencode run --standalone` against a fake chat completions server on 127.0.0.1. The generated
 * plugin is the same file 1.x loads; here opencode 2 runs its `setup`.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { opencode2 } from './drivers.js';
import { OPENCODE2_BIN } from './harness.js';
import { opencodeNotices } from './opencode-plan.js';
import { servedOpencode2, servedScenarios } from './opencode-served.js';
import { localScenarios, remoteScenarios } from './scenarios.js';

localScenarios(opencode2, {
  wiring(repo) {
    // opencode 2's own shape, the bus's tools out of Code Mode (which would hide them behind `execute`).
    const config = JSON.parse(readFileSync(join(repo, '.opencode', 'opencode.json'), 'utf8')) as { mcp: Record<string, unknown> & { servers?: Record<string, { codemode?: boolean }> } };
    assert.equal(config.mcp.servers?.['agent-bus']?.codemode, false, JSON.stringify(config));
    assert.equal(config.mcp['agent-bus'], undefined, "no entry in opencode 1.x's place");
  },
  promptHook: "the plugin's context hook",
  // At idle the plugin finds the mail and queues one follow-up turn; `opencode run` has ended by then
  // (the served session below shows that turn come).
  duringTurn: 'next-turn',
  readInbox: 'read',
  urgent: 'after its next tool call, through the plugin',
  notices: opencodeNotices(opencode2),
  launchChannels: { over: "the plugin's CHANNELS", callsATool: false },
});

remoteScenarios(opencode2, { sender: 'shop/opencode', readInbox: true });

// The served session's scenarios: a held stop, a wake, shared with opencode 1.x (opencode.clients.ts).
servedScenarios(servedOpencode2(opencode2, OPENCODE2_BIN));
