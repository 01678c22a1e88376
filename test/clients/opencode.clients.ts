/**
 * opencode for real, offline: a temp repo wired by `agent-bus init --clients
 * opencode`, `opencode run` against a fake chat completions server on
 * 127.0.0.1. The fake model provider lives in the user's config (the temp
 * XDG_CONFIG_HOME), so the project files are exactly what init wrote.
 */
import { opencode } from './drivers.js';
import { opencodeNotices } from './opencode-plan.js';
import { localScenarios } from './scenarios.js';

localScenarios(opencode, {
  promptHook: 'the plugin',
  // `opencode run` ends at idle: the plugin's Stop hook only peeks, and the follow-up turn that would take the mail does not come.
  duringTurn: 'next-turn',
  readInbox: 'read-later',
  urgent: 'after its next tool call, through the plugin',
  // `opencode run` exits at idle before the plugin hears of it: the session shows working after (claims.json).
  presence: false,
  notices: opencodeNotices(opencode),
  launchChannels: { over: "the plugin's CHANNELS", callsATool: false },
});
