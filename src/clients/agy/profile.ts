/**
 * Antigravity CLI (agy): every hook answers in JSON. It has no prompt-submit or pre-tool event: the
 * prompt hook runs before each model call (PreInvocation), so it also carries the notices.
 */
import type { HookDialect } from '../dialect.js';
import type { ClientProfile } from '../profile.js';

const injected = (context: string | null): string => `${JSON.stringify({ injectSteps: context === null ? [] : [{ ephemeralMessage: context }] })}\n`;

const dialect: HookDialect = {
  prompt: injected,
  stop: (reason) => `${JSON.stringify(reason === null ? { decision: 'stop' } : { decision: 'continue', reason })}\n`,
  sessionStart: injected,
  preTool: injected,
};

export const agyProfile: ClientProfile = {
  id: 'agy',
  name: 'Antigravity CLI',
  command: 'agy',
  // A workspace plugin of its own: agy starts MCP servers only when configured per user or bundled with a plugin.
  configFiles: ['.agents/plugins/agent-bus/plugin.json', '.agents/plugins/agent-bus/mcp_config.json', '.agents/plugins/agent-bus/hooks.json'],
  hookEvents: [
    ['PreInvocation', 'hook-user-prompt'],
    ['Stop', 'hook-stop'],
  ],
  preToolEvent: false,
  writtenFiles: null,
  dialect,
  sessionVariable: null,
  shell: null,
  manySessionsPerProcess: false,
  wake: { kind: 'none' },
  approvedToolName: null,
  settings: null,
};
