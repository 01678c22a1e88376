/**
 * Pi: no MCP and no hook files. The extension init writes (`.pi/extensions/agent-bus.ts`) starts the
 * session's `agent-bus serve` itself, offers its tools as Pi's, and answers Pi's events through the
 * server's `client_hook` tool, in JSON: the prompt hook's text at `before_agent_start`, the pre-tool
 * hook at `tool_call` (a refusal blocks the call; context is steered in before the next model call),
 * the stop hook at `turn_end` (its reason sent as a follow-up that starts another turn). Pi sets no
 * limit on those turns: the stop hook counts them. The extension opens a socket the server posts a
 * nudge to when mail comes while the session is idle; it starts a turn with it.
 */
import { jsonDialect } from '../dialect.js';
import type { ClientProfile } from '../profile.js';
import { piWrites } from '../writes.js';

export const piProfile: ClientProfile = {
  id: 'pi',
  name: 'Pi',
  command: 'pi',
  configFiles: ['.pi/extensions/agent-bus.ts'],
  hookEvents: [
    ['session_start', 'hook-session-start'],
    ['before_agent_start', 'hook-user-prompt'],
    ['tool_call', 'hook-pre-tool'],
    ['turn_end', 'hook-stop'],
    ['session_shutdown', 'hook-session-end'],
  ],
  preToolEvent: true,
  // A follow-up sent at turn_end has no limit of Pi's own: the stop hook counts the turns it starts.
  stopKeepsCounted: true,
  // The extension hands the pre-tool hook Pi's tool name and input, and blocks the call with the refusal's reason.
  writtenFiles: piWrites,
  // Its hooks are answered by the session's server, which answers in JSON whatever the dialect.
  dialect: jsonDialect,
  hooksByServer: true,
  // The extension gives the server it starts Pi's session id, and puts it in each hook's payload.
  sessionVariable: 'PI_AGENT_BUS_SESSION',
  // The extension sets AGENT_BUS_CLIENT in Pi's own environment, which its bash tool's commands inherit.
  shell: null,
  manySessionsPerProcess: false,
  wake: { kind: 'watch', startedBy: 'plugin', interactive: null, socket: { path: 'PI_AGENT_BUS_SOCKET', token: 'PI_AGENT_BUS_SOCKET_TOKEN' } },
  approvedToolName: null,
  settings: null,
};
