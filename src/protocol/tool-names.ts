/**
 * The MCP tools, by name: the list a server registers (a test lists a running server's tools
 * against it) and the one init pre-approves in each client's own naming (clients/wiring.ts). It is
 * the hub protocol's map of tools as a list, held to that map by the type check below. Data only,
 * so init loads it without the server.
 */
import type { ToolName } from './hub.js';

export const TOOL_NAMES = [
  'whoami',
  'list_agents',
  'send_message',
  'read_inbox',
  'read_thread',
  'message_status',
  'search_messages',
  'tail_audit',
  'set_session',
  'channel_publish',
  'channel_list',
  'channel_acknowledge',
  'brain_refresh',
  'brain_status',
  'reserve_files',
  'release_files',
  'list_reservations',
  'create_task',
  'take_task',
  'complete_task',
  'fail_task',
  'cancel_task',
  'get_task',
  'list_tasks',
  'notify_when',
  'spawn_agent',
  'stop_agent',
  'agent_logs',
] as const satisfies readonly ToolName[];

/** A tool of the protocol's map that the list lacks makes this line fail to compile. */
export const EVERY_TOOL_LISTED: [Exclude<ToolName, (typeof TOOL_NAMES)[number]>] extends [never] ? true : never = true;

/**
 * The tool a session's own stdio server answers its client's hooks with (Claude Code's and Codex's
 * `mcp_tool` hooks): not one of the bus's tools a model uses, and never served over the hub.
 */
export const HOOK_TOOL = 'client_hook';
