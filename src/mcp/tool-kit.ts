/**
 * What every MCP tool shares: the context it runs in, how its result and errors reach the model, and
 * `tool()`, which registers a tool of the hub protocol's map (src/protocol/hub.ts) so that its input
 * schema gives exactly the arguments the map names and its work returns the map's result.
 */
import type { McpServer, ToolCallback } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { AuditRow } from '../audit/record.js';
import type { Bus } from '../core/bus.js';
import { callSessionKey } from '../core/hub-sessions.js';
import { errorKind, isStoreUnavailable } from '../model/errors.js';
import { storeProblem } from '../adapters/store-problem.js';
import { errorLine } from '../model/quote.js';
import { ERROR_KIND_KEY, type ToolArgs, type ToolName, type ToolResult } from '../protocol/hub.js';
import type { ToolSession } from './tool-session.js';

export interface ToolContext {
  bus: Bus;
  session: ToolSession;
  auditPath: string;
  tailAudit(path: string, limit: number): AuditRow[];
  /** When each name this server speaks as was last noted as seen (ms): over the hub, one map for all its servers and hooks. */
  touched: Map<string, number>;
  /** The server's environment: where the brain's settings come from. */
  env: Record<string, string | undefined>;
  /**
   * Where spawn_agent starts a process: this machine, for a session's own server (the program to run
   * its supervisor with); null over the hub, which never starts a process for a request.
   */
  fleet?: { busFolder: string; cli: { node: string; script: string } } | null;
  /** Over the hub: whether the token may start and stop agents (its `spawn` scope), which runners then run. */
  mayStart?: boolean;
}

export type Extra = { _meta?: Record<string, unknown> | undefined };

/** The most rows a listing tool returns. */
const MAX_LIMIT = 10_000;

/** Results are JSON text for the model, with the same value as structured content (lists wrapped as {result}). */
export function toolResult(value: unknown): CallToolResult {
  const structured = Array.isArray(value) ? { result: value } : (value as Record<string, unknown>);
  return { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: structured };
}

export function toolError(error: unknown): CallToolResult {
  const message = error instanceof Error ? error.message : String(error);
  const problem = storeProblem(error);
  const kind = errorKind(error);
  return {
    content: [{ type: 'text', text: errorLine(problem !== null ? `${problem} (${message})` : message) }],
    isError: true,
    ...(kind === null ? {} : { _meta: { [ERROR_KIND_KEY]: kind } }),
  };
}

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

/**
 * Whether a tool's input schema gives exactly the arguments the hub protocol names for it (the
 * same names, each of the same type); when it does not, the tool's registration does not compile.
 */
type SchemaMatches<K extends ToolName, S extends z.ZodRawShape> =
  Same<keyof z.infer<z.ZodObject<S>>, keyof ToolArgs<K>> extends true
    ? Same<z.infer<z.ZodObject<S>>, ToolArgs<K>> extends true
      ? unknown
      : { inputSchemaDiffersFromTheProtocol: K }
    : { inputSchemaDiffersFromTheProtocol: K };

/** What a family of tools registers its tools with. */
export interface ToolKit extends ToolContext {
  server: McpServer;
  /** Every call: bind the session (Codex's first call), then note it as seen when that is due. */
  prepare(extra: Extra): Promise<void>;
  /**
   * A tool of the hub protocol's map: its input schema must give exactly the arguments the map
   * names, and its work the map's result, so the remote CLI and this server cannot drift apart.
   */
  tool<K extends ToolName, S extends z.ZodRawShape>(
    name: K,
    config: { description: string; inputSchema: S } & SchemaMatches<K, S>,
    work: (args: ToolArgs<K>, callKey: string | null) => Promise<ToolResult<K>>,
  ): void;
  /** An optional text argument: models fill unused optional arguments with null, taken as not given. */
  optionalText(): z.ZodOptional<z.ZodNullable<z.ZodString>>;
  limitArg(): z.ZodOptional<z.ZodNullable<z.ZodNumber>>;
  /** A limit as given: absent or null → the default; 0 or less → none; above 10,000 → 10,000. */
  limitOf(value: number | null | undefined, fallback: number): number;
}

export function toolKit(server: McpServer, context: ToolContext): ToolKit {
  const { bus, session, touched } = context;
  const prepare = async (extra: Extra): Promise<void> => {
    await session.ensure(callSessionKey(extra._meta));
    await bus.roster.touchIfStale(session.name, touched);
  };
  const handle =
    <K extends ToolName>(work: (args: ToolArgs<K>, callKey: string | null) => Promise<ToolResult<K>>) =>
    async (args: ToolArgs<K>, extra: Extra): Promise<CallToolResult> => {
      try {
        await prepare(extra);
        const result = toolResult(await work(args, callSessionKey(extra._meta)));
        session.noteStoreProblem(null);
        return result;
      } catch (error) {
        if (isStoreUnavailable(error)) session.noteStoreProblem((error as Error).message);
        return toolError(error);
      }
    };
  return {
    ...context,
    server,
    prepare,
    tool: (name, config, work) => {
      server.registerTool(name, { description: config.description, inputSchema: config.inputSchema }, handle(work) as unknown as ToolCallback<typeof config.inputSchema>);
    },
    optionalText: () => z.string().nullish(),
    limitArg: () => z.number().int().nullish().describe('how many at most (0 or less: none; above 10000: 10000)'),
    limitOf: (value, fallback) => Math.min(MAX_LIMIT, Math.max(0, value ?? fallback)),
  };
}
