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
}

const standard: HookDialect = {
  prompt: (context) => (context === null ? '' : `${context}\n`),
  stop: (reason) => (reason === null ? '' : `${JSON.stringify({ decision: 'block', reason })}\n`),
};

const codex: HookDialect = {
  prompt: (context) =>
    context === null ? '' : `${JSON.stringify({ hookSpecificOutput: { hookEventName: 'UserPromptSubmit', additionalContext: context } })}\n`,
  stop: standard.stop,
};

const agy: HookDialect = {
  prompt: (context) => `${JSON.stringify({ injectSteps: context === null ? [] : [{ ephemeralMessage: context }] })}\n`,
  stop: (reason) => `${JSON.stringify(reason === null ? { decision: 'stop' } : { decision: 'continue', reason })}\n`,
};

const DIALECTS: Record<string, HookDialect> = { codex, agy };

export function dialectFor(client: string | null | undefined): HookDialect {
  return (client && DIALECTS[client]) || standard;
}
