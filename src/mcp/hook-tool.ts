/**
 * `client_hook`: the client's hooks, answered by the session's own stdio server. Claude Code and
 * Codex can call a tool of an MCP server they run as a hook (`mcp_tool`), over the connection the
 * model's tools use: no process per prompt, tool call or stop. The server knows its session and
 * keeps its database open, so the answer costs a few queries. It is the command hook's answer
 * (hooks/run.ts decides it for both), printed as JSON, the only form a tool's answer is read in.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { performance } from 'node:perf_hooks';
import { jsonDialect } from '../clients/dialect.js';
import type { Bus } from '../core/bus.js';
import { callSessionKey } from '../core/hub-sessions.js';
import { answerHook, turnOfPayload } from '../hooks/run.js';
import { payloadSessionKey } from '../hooks/payload.js';
import { profileFor } from '../clients/registry/profiles.js';
import { isStoreUnavailable } from '../model/errors.js';
import { errorLine } from '../model/quote.js';
import type { Env } from '../model/settings.js';
import { ANSWER_MS_KEY, HOOK_TOOL, HOOK_TOOL_DESCRIPTION, hookEnv, hookInputSchema, isModelCall, MODEL_CALL_REFUSAL, payloadOfInput } from '../hooks/tool-input.js';
import type { ServerSession } from './session.js';

export { ANSWER_MS_KEY, HOOK_TOOL };

export interface HookToolContext {
  bus: Bus;
  session: ServerSession;
  env: Env;
  client: string | null;
  cwd: string;
  log(line: string): void;
}

function answered(text: string, startedAt: number): CallToolResult {
  const json = text.trim();
  return { content: [{ type: 'text', text: json === '' ? '{}' : json }], _meta: { [ANSWER_MS_KEY]: Math.round((performance.now() - startedAt) * 1000) / 1000 } };
}

export function hookTool(server: McpServer, context: HookToolContext): void {
  const { bus, session } = context;
  server.registerTool(HOOK_TOOL, { description: HOOK_TOOL_DESCRIPTION, inputSchema: hookInputSchema }, async (args, extra): Promise<CallToolResult> => {
    const startedAt = performance.now();
    if (isModelCall(extra._meta)) {
      return { content: [{ type: 'text', text: MODEL_CALL_REFUSAL }], isError: true };
    }
    let text = '';
    try {
      await session.ensure(callSessionKey(extra._meta));
      const env = hookEnv(context.env, args.default_channels);
      const payload = payloadOfInput(args as Record<string, unknown>);
      // The server's own session needs no lookup. Where one client process hosts several conversations
      // (Codex), a hook of another is looked up as a command hook's would be; elsewhere a new id is the
      // same session's (Claude Code's /clear).
      const own = !profileFor(context.client).manySessionsPerProcess || session.speaksFor(payloadSessionKey(payload));
      // The hook speaks for the client address, as a command hook does (a write is its client's), and reads as the session.
      const name = session.clientAddress ?? session.name;
      const turn = await turnOfPayload(payload, { kind: args.kind, client: context.client, name, ...(own ? { reader: session.name } : {}), repoPath: session.repoPath, env, cwd: context.cwd, peek: false });
      await answerHook(bus, { ...turn, dialect: jsonDialect, write: (part) => (text += part), warn: context.log });
      session.noteStoreProblem(null);
    } catch (error) {
      // A hook never breaks its client's turn: the reason goes to the server's log, and the answer
      // says nothing (what was decided before the failure, if anything, still stands).
      if (isStoreUnavailable(error)) session.noteStoreProblem((error as Error).message);
      context.log(`agent-bus hook (${args.kind}): ${errorLine(error instanceof Error ? error.message : String(error))}`);
    }
    return answered(text, startedAt);
  });
}
