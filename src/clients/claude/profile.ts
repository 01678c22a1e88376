/** Claude Code: the common hook contract, a pre-tool event, its session id in the environment, woken by a background watcher. */
import { commonDialect } from '../dialect.js';
import type { ClientProfile } from '../profile.js';
import { claudeWrites } from '../writes.js';

export const claudeProfile: ClientProfile = {
  id: 'claude',
  name: 'Claude Code',
  command: 'claude',
  configFiles: ['.mcp.json', '.claude/settings.json'],
  hookEvents: [
    ['SessionStart', 'hook-session-start'],
    ['UserPromptSubmit', 'hook-user-prompt'],
    ['PreToolUse', 'hook-pre-tool'],
    ['Stop', 'hook-stop'],
    // Presence: waiting on a person (a permission prompt, a question; never the 60-second idle_prompt), and ended.
    ['Notification', 'hook-notification', 'permission_prompt|elicitation_dialog'],
    ['SessionEnd', 'hook-session-end'],
  ],
  preToolEvent: true,
  writtenFiles: claudeWrites,
  dialect: commonDialect,
  sessionVariable: 'CLAUDE_CODE_SESSION_ID',
  // Its Bash tool's commands get CLAUDECODE=1 and the session's id.
  shell: { markers: ['CLAUDE_CODE_SESSION_ID', 'CLAUDECODE'], sessionVariable: 'CLAUDE_CODE_SESSION_ID' },
  manySessionsPerProcess: false,
  // A print-mode or SDK run waits for background hooks in the foreground: only an interactive session is woken.
  // From 2.1.224 on it also gives its hooks and MCP servers its session's inbox socket (the token from 2.1.228).
  wake: { kind: 'watch', startedBy: 'hook', interactive: { variable: 'CLAUDE_CODE_ENTRYPOINT', value: 'cli' }, socket: { path: 'CLAUDE_CODE_MESSAGING_SOCKET', token: 'CLAUDE_CODE_MESSAGING_TOKEN' } },
  approvedToolName: (server, tool) => `mcp__${server}__${tool}`,
  settings: {
    files: [
      { layer: 'repo-local', path: '.claude/settings.local.json', under: 'repo' },
      { layer: 'repo', path: '.claude/settings.json', under: 'repo' },
      { layer: 'user', path: '.claude/settings.json', under: 'home' },
    ],
    projectVariable: 'CLAUDE_PROJECT_DIR',
    markers: ['CLAUDE_PROJECT_DIR', 'CLAUDECODE', 'CLAUDE_CODE_ENTRYPOINT'],
  },
  // It refuses an mcp_tool hook at SessionStart (no MCP client yet), and at SessionEnd its server is gone.
  hookTools: { minVersion: [2, 1, 332], executable: { variable: 'AGENT_BUS_CLAUDE_BIN', fallback: 'claude' }, commandOnly: ['hook-session-start', 'hook-session-end'] },
};
