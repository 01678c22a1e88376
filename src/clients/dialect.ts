/**
 * How a client wants a hook's answer. The common contract, which Claude Code
 * and any client without a profile take: plain stdout becomes context and
 * {"decision":"block","reason":…} keeps the turn open. A client that reads
 * hook output otherwise says how in its profile, built from the parts here.
 */
import type { HookKind } from '../model/hooks.js';

export interface HookDialect {
  /** What the prompt hook prints: context for the model, or '' for nothing. */
  prompt(context: string | null): string;
  /** What the stop hook prints: a reason to keep working, or its "let it stop". */
  stop(reason: string | null): string;
  /** What the session-start hook prints: context for the session's first turn. */
  sessionStart(context: string | null): string;
  /** What the pre-tool hook prints: context added before the tool runs (never a decision about the tool). */
  preTool(context: string | null): string;
  /** What the pre-tool hook prints to refuse the tool call, the reason shown to the model; absent where the client cannot be refused. */
  denyTool?(reason: string): string;
}

/** Context as plain text. */
export const plain = (context: string | null): string => (context === null ? '' : `${context}\n`);

/** Context as the JSON `hookSpecificOutput` of `event`, which reaches the model where plain text would not. */
export const additionalContext =
  (event: string) =>
  (context: string | null): string =>
    context === null ? '' : `${JSON.stringify({ hookSpecificOutput: { hookEventName: event, additionalContext: context } })}\n`;

/** Keep the turn open with a reason, or print nothing to let it stop. */
export const blockDecision = (reason: string | null): string => (reason === null ? '' : `${JSON.stringify({ decision: 'block', reason })}\n`);

/** Refuse a tool call through PreToolUse's `permissionDecision`, the reason going to the model. */
export const permissionDenied = (reason: string): string =>
  `${JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: reason } })}\n`;

/** Refuse a tool call in a line the opencode plugin reads: it throws the reason, which opencode shows the model as the tool's error. */
export const decisionDenied = (reason: string): string => `${JSON.stringify({ decision: 'deny', reason })}\n`;

export const commonDialect: HookDialect = {
  prompt: plain,
  stop: blockDecision,
  sessionStart: plain,
  // Plain stdout from a PreToolUse hook reaches only the transcript; this form reaches the model.
  preTool: additionalContext('PreToolUse'),
  denyTool: permissionDenied,
};

/**
 * Every answer as JSON: what a client reads from a hook that answers in JSON only (Codex parses
 * output that starts with '{' as JSON and drops what it does not expect), and what an MCP tool
 * answering a client's hook returns (plain text there is ignored).
 */
export const jsonDialect: HookDialect = {
  prompt: additionalContext('UserPromptSubmit'),
  stop: blockDecision,
  sessionStart: additionalContext('SessionStart'),
  preTool: additionalContext('PreToolUse'),
  denyTool: permissionDenied,
};

/** The printer a hook of this kind answers with. */
export function printerFor(dialect: HookDialect, kind: HookKind): (text: string | null) => string {
  switch (kind) {
    case 'prompt':
      return dialect.prompt;
    case 'stop':
      return dialect.stop;
    case 'session-start':
      return dialect.sessionStart;
    case 'pre-tool':
      return dialect.preTool;
    // They note where the session stands, and say nothing to the client.
    case 'notification':
    case 'session-end':
      return silent;
  }
}

/** What a hook that only notes something prints: nothing. */
const silent = (): string => '';
