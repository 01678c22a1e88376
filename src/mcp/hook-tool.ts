/**
 * `client_hook`: the client's hooks, answered by the session's own stdio server. Claude Code and
 * Codex can call a tool of an MCP server they run as a hook (`mcp_tool`), over the connection the
 * model's tools use: no process per prompt, tool call or stop. The server knows its session and
 * keeps its database open, so the answer costs a few queries. It is the command hook's answer
 * (hooks/run.ts decides it for both), printed as JSON, the only form a tool's answer is read in.
 *
 * The hook's input is the client's payload, field by field, as the entry init writes interpolates
 * it: Claude Code gives every value as a string (an object as JSON text, a boolean as "true"), and
 * a path its payload lacks as ""; Codex keeps each value's type.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { performance } from 'node:perf_hooks';
import { z } from 'zod';
import { jsonDialect } from '../clients/dialect.js';
import type { Bus } from '../core/bus.js';
import { callSessionKey } from '../core/hub-sessions.js';
import { DEFAULT_VARIABLE } from '../core/subscriptions.js';
import { answerHook, turnOfPayload } from '../hooks/run.js';
import type { Payload } from '../hooks/payload.js';
import { isStoreUnavailable } from '../model/errors.js';
import type { HookKind } from '../model/hooks.js';
import { errorLine } from '../model/quote.js';
import type { Env } from '../model/settings.js';
import { HOOK_TOOL } from '../protocol/tool-names.js';
import type { ServerSession } from './session.js';

export { HOOK_TOOL };

const KINDS = ['prompt', 'pre-tool', 'stop', 'notification', 'session-start', 'session-end'] as const satisfies readonly HookKind[];

/** The payload fields a hook entry passes on: each a string (Claude Code), or of its own type (Codex). */
export const HOOK_INPUT_FIELDS = [
  'session_id',
  'cwd',
  'hook_event_name',
  'transcript_path',
  'tool_name',
  'tool_input',
  'stop_hook_active',
  'last_assistant_message',
  'notification_type',
] as const;

/** Where the answer's time inside the server is reported, in the result's `_meta` (for the benchmark and a curious reader). */
export const ANSWER_MS_KEY = 'agent-bus/answer_ms';

export const HOOK_TOOL_DESCRIPTION =
  "For the client's own hooks only (mcp_tool hooks at a prompt, a tool call and a stop): a model must never call it. " +
  'A call made by a model is refused and changes nothing. Read your mail with read_inbox instead.';

const anyValue = z.unknown().optional();
const inputSchema = {
  kind: z.enum(KINDS).describe('which hook this is'),
  default_channels: z.string().optional().describe("the repo's default subscriptions, as init wrote them"),
  ...Object.fromEntries(HOOK_INPUT_FIELDS.map((field) => [field, anyValue])),
} as { kind: z.ZodEnum<{ [K in (typeof KINDS)[number]]: K }>; default_channels: z.ZodOptional<z.ZodString> } & Record<(typeof HOOK_INPUT_FIELDS)[number], typeof anyValue>;

/**
 * Whether a call is a model's, not a hook's: a client marks its model's calls (Claude Code with the
 * tool use's id, Codex with the call's id and the turn's metadata), and its hook calls with neither.
 */
export function isModelCall(meta: Record<string, unknown> | undefined): boolean {
  return meta !== undefined && ('callId' in meta || 'x-codex-turn-metadata' in meta || 'claudecode/toolUseId' in meta);
}

/** A value as a payload holds it: JSON text of an object parsed, "true"/"false" as booleans, "" as absent. */
function payloadValue(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  if (value === '') return undefined;
  if (value === 'true' || value === 'false') return value === 'true';
  if (value.startsWith('{')) {
    try {
      return JSON.parse(value) as unknown;
    } catch {
      return value;
    }
  }
  return value;
}

/** The client's payload, as the hook's input carried it. */
export function payloadOfInput(input: Record<string, unknown>): Payload {
  const payload: Payload = {};
  for (const field of HOOK_INPUT_FIELDS) {
    const value = payloadValue(input[field]);
    if (value !== undefined && value !== null) payload[field] = value;
  }
  return payload;
}

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
  server.registerTool(HOOK_TOOL, { description: HOOK_TOOL_DESCRIPTION, inputSchema }, async (args, extra): Promise<CallToolResult> => {
    const startedAt = performance.now();
    if (isModelCall(extra._meta)) {
      return { content: [{ type: 'text', text: `${HOOK_TOOL} answers the client's hooks only; it did nothing. Read your mail with read_inbox.` }], isError: true };
    }
    let text = '';
    try {
      await session.ensure(callSessionKey(extra._meta));
      const channels = args.default_channels;
      const env = typeof channels === 'string' && channels !== '' ? { ...context.env, [DEFAULT_VARIABLE]: channels } : context.env;
      const payload = payloadOfInput(args as Record<string, unknown>);
      const turn = turnOfPayload(payload, { kind: args.kind, client: context.client, name: session.name, reader: session.name, repoPath: session.repoPath, env, cwd: context.cwd, peek: false });
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
