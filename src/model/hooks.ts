/** The hooks a client runs at its turn boundaries, as every layer names them. */
export const HOOK_KINDS = ['prompt', 'pre-tool', 'stop', 'notification', 'session-start', 'session-end'] as const;
export type HookKind = (typeof HOOK_KINDS)[number];

/** The agent-bus command that runs each hook, and the hook it is. */
export const HOOK_COMMAND_KINDS = {
  'hook-user-prompt': 'prompt',
  'hook-stop': 'stop',
  'hook-session-start': 'session-start',
  'hook-pre-tool': 'pre-tool',
  'hook-notification': 'notification',
  'hook-session-end': 'session-end',
} as const satisfies Record<string, HookKind>;

/** Which mail the pre-tool hook shows a busy agent between its tool calls (AGENT_BUS_MIDTURN). */
export type MidTurn = 'urgent' | 'all' | 'off';

export const MID_TURN_MODES: readonly MidTurn[] = ['urgent', 'all', 'off'];

/**
 * What a client's notification says of its session's presence, by the notification's type: a
 * permission prompt or a question put to the person means it waits on them (Claude Code's
 * `Notification` types; the opencode plugin names its permission events the same way). Every other
 * type (Claude Code's 60-second `idle_prompt` above all, a timer rather than a state) says nothing.
 */
export const NOTIFICATION_PRESENCE: Readonly<Record<string, 'waiting' | 'working'>> = {
  permission_prompt: 'waiting',
  elicitation_dialog: 'waiting',
  permission_replied: 'working',
  // Gemini CLI's: a tool call waits for the person's approval.
  ToolPermission: 'waiting',
};

/** The presence a notification of this type notes, or null for one that says nothing of it. */
export function presenceOfNotification(type: string | null | undefined): 'waiting' | 'working' | null {
  return typeof type === 'string' && Object.hasOwn(NOTIFICATION_PRESENCE, type) ? (NOTIFICATION_PRESENCE[type] ?? null) : null;
}
