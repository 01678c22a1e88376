/**
 * How each client wants a hook's answer. Claude Code, opencode and any client
 * not listed take the common contract: plain stdout becomes context and
 * {"decision":"block","reason":…} keeps the turn open. Codex parses output
 * that starts with '[' or '{' as JSON, so its prompt hook answers in JSON.
 * Antigravity (agy) always answers in JSON.
 */
export interface HookDialect {
  /** What the prompt hook prints: context for the model, or '' for nothing. */
  prompt(context: string | null): string;
  /** What the stop hook prints: a reason to keep working, or its "let it stop". */
  stop(reason: string | null): string;
  /** What the session-start hook prints: context for the session's first turn. */
  sessionStart(context: string | null): string;
  /** What the pre-tool hook prints: context added before the tool runs (never a decision about the tool). */
  preTool(context: string | null): string;
}

const plain = (context: string | null): string => (context === null ? '' : `${context}\n`);
const additionalContext = (event: string) => (context: string | null): string =>
  context === null ? '' : `${JSON.stringify({ hookSpecificOutput: { hookEventName: event, additionalContext: context } })}\n`;

const standard: HookDialect = {
  prompt: plain,
  stop: (reason) => (reason === null ? '' : `${JSON.stringify({ decision: 'block', reason })}\n`),
  sessionStart: plain,
  // Plain stdout from a PreToolUse hook reaches only the transcript; this form reaches the model.
  preTool: additionalContext('PreToolUse'),
};

// Codex reads output starting with '[' as JSON (and drops it when it is not): always answer in JSON.
const codex: HookDialect = {
  prompt: additionalContext('UserPromptSubmit'),
  stop: standard.stop,
  sessionStart: additionalContext('SessionStart'),
  preTool: additionalContext('PreToolUse'),
};

/** The generated opencode plugin runs the hooks itself and adds their plain text to the system prompt. */
const opencode: HookDialect = { ...standard, preTool: plain };

const agyPrompt = (context: string | null): string => `${JSON.stringify({ injectSteps: context === null ? [] : [{ ephemeralMessage: context }] })}\n`;
const agy: HookDialect = {
  prompt: agyPrompt,
  stop: (reason) => `${JSON.stringify(reason === null ? { decision: 'stop' } : { decision: 'continue', reason })}\n`,
  sessionStart: agyPrompt,
  preTool: agyPrompt,
};

const DIALECTS: Record<string, HookDialect> = { codex, agy, opencode };

export function dialectFor(client: string | null | undefined): HookDialect {
  return (client && DIALECTS[client]) || standard;
}
