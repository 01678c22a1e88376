/** The MCP tools: nine for mail, three for notices, two for the brain, each attributed to the server's own identity. */
import type { McpServer, ToolCallback } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { AuditRow } from '../audit/record.js';
import type { Bus } from '../core/bus.js';
import { composeWhoami } from '../core/roster-ops.js';
import type { AgentView } from '../core/views.js';
import { callSessionKey } from '../core/hub-sessions.js';
import { clientAddressOf, parseNameLenient } from '../core/names.js';
import type { ToolSession } from './tool-session.js';
import { InvalidInputError, isStoreUnavailable } from '../model/errors.js';
import { storeProblem } from '../adapters/store-problem.js';
import { errorLine } from '../model/quote.js';
import { brainSettings } from '../brain/settings.js';
import { brainStatus } from '../brain/status.js';
import { refreshBrain } from '../brain/refresh.js';
import { profileFor } from '../clients/registry/profiles.js';
import { sessionSubscriptionSource } from '../clients/subscription-source.js';
import type { ToolArgs, ToolName, ToolResult, Whoami } from '../protocol/hub.js';

export interface ToolContext {
  bus: Bus;
  session: ToolSession;
  auditPath: string;
  tailAudit(path: string, limit: number): AuditRow[];
  /** When each name this server speaks as was last noted as seen (ms): over the hub, one map for all its servers and hooks. */
  touched: Map<string, number>;
  /** The server's environment: where the brain's settings come from. */
  env: Record<string, string | undefined>;
}

type Extra = { _meta?: Record<string, unknown> | undefined };

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
  return { content: [{ type: 'text', text: errorLine(problem !== null ? `${problem} (${message})` : message) }], isError: true };
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

export function buildTools(server: McpServer, context: ToolContext): void {
  const { bus, session, touched } = context;

  /** Every call: bind the session (Codex's first call), then note it as seen when that is due. */
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

  /**
   * A tool of the hub protocol's map (src/protocol/hub.ts): its input schema must give exactly the
   * arguments the map names, and its work the map's result, so the remote CLI and this server
   * cannot drift apart.
   */
  const tool = <K extends ToolName, S extends z.ZodRawShape>(
    name: K,
    config: { description: string; inputSchema: S } & SchemaMatches<K, S>,
    work: (args: ToolArgs<K>, callKey: string | null) => Promise<ToolResult<K>>,
  ): void => {
    server.registerTool(name, { description: config.description, inputSchema: config.inputSchema }, handle<K>(work) as unknown as ToolCallback<S>);
  };

  // Models fill unused optional arguments with null: null is taken as not given, everywhere.
  const optionalText = () => z.string().nullish();
  const limitArg = () => z.number().int().nullish().describe('how many at most (0 or less: none; above 10000: 10000)');
  /** A limit as given: absent or null → the default; 0 or less → none; above 10,000 → 10,000. */
  const limitOf = (value: number | null | undefined, fallback: number): number => Math.min(MAX_LIMIT, Math.max(0, value ?? fallback));

  server.registerTool(
    'whoami',
    { description: 'Who this session is on the bus: its name, repo, session address, topic and repo-mates.', inputSchema: {} },
    async (_args: Record<string, never>, extra: Extra): Promise<CallToolResult> => {
      // Who this is never depends on the store: with the store unreachable, whoami still answers and says why.
      try {
        await prepare(extra);
      } catch (error) {
        if (!isStoreUnavailable(error)) return toolError(error);
        session.noteStoreProblem((error as Error).message);
      }
      let rows: AgentView[] = [];
      try {
        rows = await bus.roster.agents();
        session.noteStoreProblem(null);
      } catch (error) {
        if (!isStoreUnavailable(error)) return toolError(error);
        session.noteStoreProblem((error as Error).message);
      }
      const { group_members, ...who } = composeWhoami(session.name, rows);
      const whoami: Whoami = { ...who, mcp_client: server.server.getClientVersion()?.name ?? null, group_members, warnings: session.warnings };
      return toolResult(whoami);
    },
  );

  tool(
    'list_agents',
    {
      description: 'Everyone on the bus with unread counts; pass a bare repo name as group to see one repo. Sessions show whether they are running (live).',
      inputSchema: { group: optionalText() },
    },
    async ({ group }) => bus.roster.agents(group === null || group === '' ? undefined : group),
  );

  tool(
    'send_message',
    {
      description:
        "Send mail. to: 'repo/client-N' or 'repo/client-label' (one session), 'repo/client' (any session of that client), 'repo' (every client in the repo; one claims it), or '*' (everyone). Reply with the thread_id you received.",
      // Empty strings reach the bus, whose errors say what to do ("use '*' to broadcast").
      inputSchema: { to: z.string(), body: z.string(), thread_id: optionalText() },
    },
    async ({ to, body, thread_id }) => bus.mail.sendFromSession({ from: session.name, holdsSession: session.holdsSession, to, body, threadId: thread_id ?? null }),
  );

  tool(
    'read_inbox',
    {
      description: "Unread mail for this session (its own, plus mail to its client address no other session took), oldest first. mark_read=false only peeks.",
      inputSchema: { mark_read: z.boolean().nullish(), limit: limitArg() },
    },
    async ({ mark_read, limit }) => {
      const markRead = mark_read ?? true;
      // A model's peek puts the mail in its context (delivered); a person's peek through the remote inbox records nothing, as on this machine.
      const via = markRead || session.readWay === 'read_inbox' ? session.readWay : null;
      return bus.inbox.read({ reader: session.name, markRead, limit: limitOf(limit, 50), via, deliver: session.readWay === 'chat' });
    },
  );

  tool(
    'set_session',
    {
      description: "Name this session after its work (label → '<repo>/<client>-<label>'; its unread mail moves with it) and/or set the topic shown in list_agents (an empty topic clears it).",
      inputSchema: { label: optionalText(), topic: optionalText() },
    },
    async ({ label, topic }) => {
      if (label !== undefined && label !== null) await session.rename(label);
      let current = (await bus.roster.get(session.name))?.topic ?? null;
      if (topic !== undefined && topic !== null) current = await bus.roster.setTopic(session.name, topic);
      return { name: session.name, client_address: clientAddressOf(session.name), topic: current };
    },
  );

  tool(
    'read_thread',
    { description: 'A whole conversation across participants, in the order it was sent.', inputSchema: { thread_id: z.string().min(1), limit: limitArg() } },
    async ({ thread_id, limit }) => bus.mail.thread(thread_id, limitOf(limit, 100)),
  );

  tool(
    'message_status',
    {
      description:
        "Where mail you sent or received has got to: each recipient's copy is sent, delivered (put in front of its model or person) or read, with when and how (hook-user-prompt, hook-stop, hook-watch, read_inbox, chat, web, inbox); state is the least advanced copy's. message_id: any id send_message returned (one of message_ids, or fanout_id for the whole send), or the start of one.",
      inputSchema: { message_id: z.string().min(1) },
    },
    async ({ message_id }) => bus.receipts.status(message_id, session.name),
  );

  tool(
    'search_messages',
    {
      description:
        'Find mail by its words, newest first, each with a snippet: words (all must match), "quoted phrases" and prefix*. Finds your own mail and your repo\'s. from: a sender (a client address takes its sessions, a repo its agents); to: a recipient, a repo or *; since: a duration (2h, 7d) or a date; thread_id: a thread (or the start of its id).',
      inputSchema: { query: z.string().min(1), from: optionalText(), to: optionalText(), since: optionalText(), thread_id: optionalText(), limit: limitArg() },
    },
    async ({ query, from, to, since, thread_id, limit }) => {
      const hits = await bus.mail.search({ query, reader: session.name, from: from ?? null, to: to ?? null, since: since ?? null, thread: thread_id ?? null, limit: limitOf(limit, 20) });
      // The snippet as text with the matches in **bold** (as markdown shows them), and in parts for a program.
      return hits.map(({ snippet, ...hit }) => ({ ...hit, snippet: snippet.map((part) => (part.match ? `**${part.text}**` : part.text)).join(''), snippet_parts: snippet }));
    },
  );

  tool(
    'tail_audit',
    { description: 'The last entries of the audit log (any agent), oldest first.', inputSchema: { limit: limitArg() } },
    async ({ limit }) => context.tailAudit(context.auditPath, limitOf(limit, 50)),
  );

  tool(
    'channel_publish',
    {
      description:
        "Publish a notice (broadcast context, not mail) to the sessions subscribed to a channel; an empty channel reaches every session. severity: critical (every turn and before every tool call), alert (every turn) or info (once per session). ttl: seconds or '30m', '4h', '1d'; default by severity.",
      inputSchema: {
        channel: optionalText(),
        message: z.string(),
        severity: optionalText().describe('info, alert or critical'),
        ttl: z.union([z.string(), z.number().int()]).nullish(),
      },
    },
    async ({ channel, message, severity, ttl }) =>
      bus.notices.publish({ channel: channel ?? '', message, severity: severity ?? 'info', ttl: ttl ?? null, source: session.name }, session.name),
  );

  tool(
    'channel_list',
    { description: 'Channels with live notices and their counts by severity (channel null: global notices).', inputSchema: {} },
    async () => {
      const channels = await bus.notices.channels();
      return { channels, total: channels.reduce((sum, row) => sum + row.total, 0) };
    },
  );

  tool(
    'channel_acknowledge',
    {
      description:
        "Stop showing one notice to this session (others still see it). message_id is the id shown with the notice; session_id names the client session when this server cannot tell it.",
      inputSchema: { message_id: z.string().min(1), session_id: optionalText() },
    },
    async ({ message_id, session_id }, callKey) => {
      const given = session_id?.trim() ?? '';
      const key = given !== '' ? given : session.clientSessionKey(callKey);
      if (key === null) {
        throw new InvalidInputError(
          "this server does not know its client's session id (no CLAUDE_CODE_SESSION_ID and no Codex thread id), so it cannot say whose notice to silence; pass session_id",
        );
      }
      const notice = await bus.notices.acknowledge(message_id, key);
      return { ...notice, acknowledged: true, session: key };
    },
  );

  tool(
    'brain_refresh',
    { description: "Read the brain's source now and reconcile it into the brain channel (unchanged entries keep their ids; an unavailable source keeps the last good content).", inputSchema: {} },
    async () => {
      const settings = brainSettings(context.env);
      return { channel: settings.channel, ...(await refreshBrain(bus, settings)) };
    },
  );

  tool(
    'brain_status',
    { description: "The brain adapter's source, entry and live notice counts, content hash, refresh cadence, last fetch and warnings.", inputSchema: {} },
    // A client's settings files (Claude Code's) say what its sessions subscribe to. Other clients give the
    // repo's default to their hooks alone, so their servers know a launch value or the user's default, and else nothing.
    async () => {
      const client = profileFor(parseNameLenient(session.name)?.client);
      const source = sessionSubscriptionSource(context.env, client, session.repoPath);
      return brainStatus(bus, brainSettings(context.env), source.layer === 'none' && client.settings === null ? null : source);
    },
  );
}
