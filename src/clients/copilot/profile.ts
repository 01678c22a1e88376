/**
 * GitHub Copilot CLI: repo hooks in `.github/hooks/`, written in Claude Code's shape and event names
 * (which give them Claude Code's payloads), answered in Copilot's own flat JSON: `additionalContext`
 * at the top level, `permissionDecision` to refuse a call, `decision: block` to keep a turn (at most
 * eight in a row). Its workspace MCP config is `.github/mcp.json`; it also reads `.mcp.json`, whose
 * entry wins, so a server it starts from Claude Code's entry knows Copilot started it by
 * COPILOT_AGENT_SESSION_ID. Nothing can start a turn in an idle session from outside: wake.json does.
 * No hookTools: Copilot CLI (1.0.102) skips an `mcp_tool` hook entry as an invalid hook type.
 */
import { blockDecision, type HookDialect } from '../dialect.js';
import type { ClientProfile } from '../profile.js';
import { copilotWrites } from '../writes.js';

/** Context as Copilot reads it from any hook: a top-level `additionalContext`. */
const context = (text: string | null): string => (text === null ? '' : `${JSON.stringify({ additionalContext: text })}\n`);

const dialect: HookDialect = {
  prompt: context,
  stop: blockDecision,
  sessionStart: context,
  preTool: context,
  denyTool: (reason) => `${JSON.stringify({ permissionDecision: 'deny', permissionDecisionReason: reason })}\n`,
};

export const copilotProfile: ClientProfile = {
  id: 'copilot',
  name: 'Copilot CLI',
  command: 'copilot',
  configFiles: ['.github/mcp.json', '.github/hooks/agent-bus.json'],
  hookEvents: [
    ['SessionStart', 'hook-session-start'],
    ['UserPromptSubmit', 'hook-user-prompt'],
    // A tool event's matcher is a pattern over tool names: every tool.
    ['PreToolUse', 'hook-pre-tool', '*'],
    ['Stop', 'hook-stop'],
    // Presence: waiting on a person (a permission prompt, a question).
    ['Notification', 'hook-notification', 'permission_prompt|elicitation_dialog'],
    ['SessionEnd', 'hook-session-end'],
  ],
  preToolEvent: true,
  writtenFiles: copilotWrites,
  dialect,
  // Its MCP servers and shell commands get the session's id (its hooks have it in the payload).
  sessionVariable: 'COPILOT_AGENT_SESSION_ID',
  serverMarker: 'COPILOT_AGENT_SESSION_ID',
  shell: { markers: ['COPILOT_CLI'], sessionVariable: 'COPILOT_AGENT_SESSION_ID' },
  manySessionsPerProcess: false,
  wake: { kind: 'none' },
  approvedToolName: null,
  settings: null,
};
