/**
 * Gemini CLI: hooks in the repo's `.gemini/settings.json`, answered in JSON. It takes context before
 * a turn (BeforeAgent) and after a tool has run (AfterTool), but never before one: so the pre-tool
 * hook runs twice a call, refusing a reserved file's write at BeforeTool and showing notices and
 * urgent mail at AfterTool. AfterAgent's `deny` sends its reason back as the next prompt. Nothing
 * can start a turn in an idle session from outside: wake.json does.
 */
import { additionalContext, decisionDenied, type HookDialect } from '../dialect.js';
import type { ClientProfile } from '../profile.js';
import { geminiWrites } from '../writes.js';

const dialect: HookDialect = {
  prompt: additionalContext('BeforeAgent'),
  stop: (reason) => (reason === null ? '' : decisionDenied(reason)),
  sessionStart: additionalContext('SessionStart'),
  preTool: additionalContext('AfterTool'),
  denyTool: decisionDenied,
};

export const geminiProfile: ClientProfile = {
  id: 'gemini',
  name: 'Gemini CLI',
  command: 'gemini',
  configFiles: ['.gemini/settings.json'],
  hookEvents: [
    ['SessionStart', 'hook-session-start'],
    ['BeforeAgent', 'hook-user-prompt'],
    ['BeforeTool', 'hook-pre-tool'],
    ['AfterTool', 'hook-pre-tool'],
    ['AfterAgent', 'hook-stop'],
    // Presence: a tool call waiting for the person's approval.
    ['Notification', 'hook-notification'],
    ['SessionEnd', 'hook-session-end'],
  ],
  preToolEvent: true,
  preToolSplit: { guard: 'BeforeTool', context: 'AfterTool' },
  // AfterAgent's deny has no limit of Gemini CLI's own: the stop hook counts the turns it starts.
  stopKeepsCounted: true,
  writtenFiles: geminiWrites,
  dialect,
  // Its hooks get GEMINI_SESSION_ID; its MCP servers do not.
  sessionVariable: 'GEMINI_SESSION_ID',
  // Its shell tool's commands get GEMINI_CLI=1, and no session id.
  shell: { markers: ['GEMINI_CLI'], sessionVariable: null },
  manySessionsPerProcess: false,
  wake: { kind: 'none' },
  // Its config trusts the server whole (`trust`): no per-tool approval names.
  approvedToolName: null,
  settings: null,
};
