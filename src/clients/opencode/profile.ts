/**
 * opencode: no shell hooks. The plugin init generates runs the hook commands itself at the points
 * below and adds their plain text to the system prompt, and runs the watcher when a session goes idle.
 */
import { commonDialect, decisionDenied, plain } from '../dialect.js';
import { opencodeWrites } from '../writes.js';
import type { ClientProfile } from '../profile.js';

export const opencodeProfile: ClientProfile = {
  id: 'opencode',
  name: 'opencode',
  command: 'opencode',
  configFiles: ['.opencode/opencode.json', '.opencode/plugins/agent-bus.js'],
  // opencode 1.x's names; on opencode 2 the plugin runs the same hooks at `context`, `execute.before` and
  // `session.execution.*` (plugin.ts).
  hookEvents: [
    ['experimental.chat.system.transform', 'hook-session-start'],
    ['experimental.chat.system.transform', 'hook-user-prompt'],
    ['tool.execute.before', 'hook-pre-tool'],
    ['session.idle', 'hook-stop'],
    ['permission.asked', 'hook-notification'],
    ['permission.replied', 'hook-notification'],
    ['session.deleted', 'hook-session-end'],
  ],
  preToolEvent: true,
  // Its plugin hands the pre-tool hook the tool's id and args, and throws the refusal's reason.
  writtenFiles: opencodeWrites,
  dialect: { ...commonDialect, preTool: plain, denyTool: decisionDenied },
  sessionVariable: null,
  // Its plugin gives the shell tool's commands AGENT_BUS_CLIENT instead (shell.env): the guard derives the agent from it.
  shell: null,
  manySessionsPerProcess: false,
  wake: { kind: 'watch', startedBy: 'plugin', interactive: null, socket: null },
  approvedToolName: null,
  settings: null,
};
