/**
 * opencode for real, offline: a temp repo wired by `agent-bus init --clients
 * opencode`, `opencode run` against a fake chat completions server on
 * 127.0.0.1. The fake model provider lives in the user's config (the temp
 * XDG_CONFIG_HOME), so the project files are exactly what init wrote.
 */
import { opencode } from './drivers.js';
import { OPENCODE1_BIN } from './harness.js';
import { opencodeNotices } from './opencode-plan.js';
import { servedOpencode1, servedScenarios } from './opencode-served.js';
import { localScenarios } from './scenarios.js';

localScenarios(opencode, {
  promptHook: 'the plugin',
  // `opencode run` ends at idle: the plugin's Stop hook only peeks, and the follow-up turn that would take the mail does not come.
  duringTurn: 'next-turn',
  readInbox: 'read-later',
  urgent: 'after its next tool call, through the plugin',
  // A session's presence through its turn and after it is shown by the served session below.
  presence: false,
  notices: opencodeNotices(opencode),
  launchChannels: { over: "the plugin's CHANNELS", callsATool: false },
});

// A served session (`opencode serve`, runs attached) outlives its run: there the plugin hears the idle,
// holds the stop, wakes the session and shows it idle (opencode-served.ts, shared with opencode 2).
servedScenarios(servedOpencode1(opencode, OPENCODE1_BIN), { presence: true });
