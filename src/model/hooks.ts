/** The hooks a client runs at its turn boundaries, as every layer names them. */
export type HookKind = 'prompt' | 'stop' | 'session-start' | 'pre-tool';
