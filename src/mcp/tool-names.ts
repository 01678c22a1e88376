/**
 * The MCP server's tools, by name: the list the server registers (a test lists a running server's
 * tools against it) and the one init pre-approves in each client's own naming (clients/wiring.ts).
 * Data only, so init loads it without the server.
 */
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
] as const;

export type ToolName = (typeof TOOL_NAMES)[number];
