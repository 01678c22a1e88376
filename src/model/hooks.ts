/** The hooks a client runs at its turn boundaries, as every layer names them. */
export type HookKind = 'prompt' | 'stop' | 'session-start' | 'pre-tool';

/** Which mail the pre-tool hook shows a busy agent between its tool calls (AGENT_BUS_MIDTURN). */
export type MidTurn = 'urgent' | 'all' | 'off';

export const MID_TURN_MODES: readonly MidTurn[] = ['urgent', 'all', 'off'];
