/**
 * Cline CLI: no hook of its own can refuse one tool call (a hook's `cancel` ends the whole run), and
 * its prompt-submit hook's output is dropped; a plugin of the workspace (`.cline/plugins/`) can do
 * both. So init generates one plugin, which runs the hook commands itself: at each run's start
 * (`beforeRun`, its context shown on the run's first request), before each tool call (`beforeTool`:
 * context shown after the tool's result, or the call skipped with a reason the model reads as the
 * tool's error), and at `submit_and_exit`, the tool that ends a headless run, which it skips while
 * mail waits to be acted on. Cline reads MCP servers from its user settings only; its MCP servers and
 * hooks get no session id. Nothing outside a session can start its turn: wake.json does.
 */
import { blockDecision, decisionDenied, plain, type HookDialect } from '../dialect.js';
import type { ClientProfile } from '../profile.js';
import { clineWrites } from '../writes.js';

/** Plain text the plugin hands the model as context; a refusal as `{"decision":"deny"}`, which it turns into a skip. */
const dialect: HookDialect = {
  prompt: plain,
  stop: blockDecision,
  sessionStart: plain,
  preTool: plain,
  denyTool: decisionDenied,
};

export const clineProfile: ClientProfile = {
  id: 'cline',
  name: 'Cline CLI',
  command: 'cline',
  configFiles: ['.cline/plugins/agent-bus.js'],
  hookEvents: [
    ['beforeRun', 'hook-session-start'],
    ['beforeRun', 'hook-user-prompt'],
    ['beforeTool', 'hook-pre-tool'],
    ['submit_and_exit', 'hook-stop'],
  ],
  preToolEvent: true,
  // Cline sets no limit on the stops its plugin refuses in a row: the stop hook counts them.
  stopKeepsCounted: true,
  writtenFiles: clineWrites,
  dialect,
  // Its MCP servers and hooks get no session id; the plugin hands the hooks Cline's session id.
  sessionVariable: null,
  shell: null,
  manySessionsPerProcess: false,
  wake: { kind: 'none' },
  approvedToolName: null,
  settings: null,
  // The plugin, and so every hook, runs in a sandbox process Cline starts with node.
  hookHost: 'node',
  limits: [
    'a stop is held while mail waits only in a headless `cline -y` run, at submit_and_exit; an interactive or plain `cline "…"` run ends at a reply no hook can hold',
    "no wake: nothing outside a session can start its turn (only a --zen session runs in Cline's hub daemon), so an idle session waits for its next prompt or wake.json",
    'no presence while it waits on a person (Cline tells no hook of an approval prompt)',
    "its MCP server is in the user's settings, not the repo: each teammate runs agent-bus init once",
  ],
  needsOnPath: [{ command: 'node', why: 'Cline runs the plugin, and so every agent-bus hook, in a sandbox started with node from PATH' }],
};
