/**
 * `agent-bus serve` on a machine set to use a hub: the client's stdio MCP server relays every message
 * to the hub's `/mcp` and every answer back, with the token, so the tools run at the hub as the
 * token's agent (and the session the client's conversation id names), exactly as a client wired to
 * the hub over HTTP. What a relay adds is a process of ours that is a child of the client on this
 * machine: it can wake the session through the client's inbox socket, hearing the mail through the
 * hub's change feed; and it answers the client's hooks (`client_hook`, Claude Code's `mcp_tool` hooks)
 * with one request each to the hub's hook endpoint, the payload's paths read here, where they mean
 * something: no process per hook.
 */
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { CallToolResult, JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { askHub, hookRequestOf } from '../hooks/remote-hook.js';
import { clientOf } from '../hooks/run-kind.js';
import { HOOK_KINDS, HOOK_TOOL, hookEnv, hookToolListing, isModelCall, MODEL_CALL_REFUSAL, payloadOfInput } from '../hooks/tool-input.js';
import type { HookKind } from '../model/hooks.js';
import type { HubAccess } from '../adapters/hub-access.js';
import { sessionFromEnvironment } from '../clients/profile.js';
import { profileFor } from '../clients/registry/profiles.js';
import { HUB_PATHS, SESSION_HEADER } from '../protocol/hub.js';
import { nameHeaders } from '../remote/http.js';
import type { Env } from '../model/settings.js';

export interface RelayOptions {
  access: HubAccess;
  env: Env;
  client: string | undefined;
  log(line: string): void;
  /** Start waking the session while the relay runs (null: not this relay's job); stopped when it ends. */
  wake?: (sessionKey: string | null) => Promise<{ stop(): Promise<void> } | null>;
}

/** JSON-RPC's code for an error inside the server that answers. */
const INTERNAL_ERROR = -32603;

/** The request a message is, when it is one (an id and a method): what a relay that could not forward it must answer. */
function requestId(message: JSONRPCMessage): string | number | null {
  const candidate = message as { id?: unknown; method?: unknown };
  return typeof candidate.method === 'string' && (typeof candidate.id === 'string' || typeof candidate.id === 'number') ? candidate.id : null;
}

/** A call of the hook tool: its request id, arguments and metadata; null for any other message. */
function hookCall(message: JSONRPCMessage): { id: string | number; args: Record<string, unknown>; meta: Record<string, unknown> | undefined } | null {
  const candidate = message as { id?: unknown; method?: unknown; params?: { name?: unknown; arguments?: unknown; _meta?: unknown } };
  const id = requestId(message);
  if (id === null || candidate.method !== 'tools/call' || candidate.params?.name !== HOOK_TOOL) return null;
  const args = candidate.params.arguments;
  const meta = candidate.params._meta;
  return { id, args: args !== null && typeof args === 'object' ? (args as Record<string, unknown>) : {}, meta: meta !== null && typeof meta === 'object' ? (meta as Record<string, unknown>) : undefined };
}

/**
 * The hook's answer from the hub, as the tool's result: the hub's JSON, or `{}` (nothing to say) when
 * it did not answer, which the client takes as no objection. `shown` says whether the answer reached
 * the client: the mail it held is confirmed, or given back.
 */
async function answerFromHub(options: RelayOptions, args: Record<string, unknown>, meta: Record<string, unknown> | undefined): Promise<{ result: CallToolResult; shown(printed: boolean): Promise<void> }> {
  const nothing = { result: { content: [{ type: 'text' as const, text: '{}' }] }, shown: () => Promise.resolve() };
  if (isModelCall(meta)) return { ...nothing, result: { content: [{ type: 'text', text: MODEL_CALL_REFUSAL }], isError: true } };
  const kind = args.kind as HookKind;
  if (!(HOOK_KINDS as readonly string[]).includes(kind)) return nothing;
  const env = hookEnv(options.env, args.default_channels);
  const request = await hookRequestOf(payloadOfInput(args), { kind, client: clientOf({ client: options.client, env }), env, cwd: process.cwd(), json: true });
  const answered = await askHub(options.access, request, { env, warn: options.log });
  if (answered === null) return nothing;
  const text = answered.output.trim();
  return { result: { content: [{ type: 'text', text: text === '' ? '{}' : text }] }, shown: (printed) => answered.confirm(printed) };
}

/** Relay the client's MCP session to the hub until the client closes it: the exit status. */
export async function relayToHub(options: RelayOptions): Promise<number> {
  const { access, env, log } = options;
  // The conversation id the client gives its server (Claude Code's session id) picks the session address at the hub.
  const sessionKey = sessionFromEnvironment(profileFor(options.client), env);
  // The name the agent was given here (AGENT_BUS_NAME, as a spawned agent has it) is the session address it holds there.
  const headers: Record<string, string> = { authorization: `Bearer ${access.token}`, ...nameHeaders(access) };
  if (sessionKey !== null) headers[SESSION_HEADER] = sessionKey;
  const upstream = new StreamableHTTPClientTransport(new URL(`${access.url}${HUB_PATHS.mcp}`), { requestInit: { headers } });
  const local = new StdioServerTransport();

  // The tool lists the hub sends back get the hook tool, which this relay answers itself.
  const listings = new Set<string | number>();
  local.onmessage = (message) => {
    const hook = hookCall(message);
    if (hook !== null) {
      void answerFromHub(options, hook.args, hook.meta)
        .then(async ({ result, shown }) => {
          const printed = await local.send({ jsonrpc: '2.0', id: hook.id, result }).then(() => true, () => false);
          await shown(printed);
        })
        .catch((error: unknown) => log(`agent-bus hook: ${(error as Error).message}`));
      return;
    }
    const id = requestId(message);
    if (id !== null && (message as { method?: unknown }).method === 'tools/list') listings.add(id);
    upstream.send(message).catch((error: unknown) => {
      // A request the hub never got is answered here, so the client is not left waiting on it.
      const id = requestId(message);
      const detail = `agent-bus: the hub at ${access.url} did not take the call: ${(error as Error).message}`;
      if (id === null) log(detail);
      else void local.send({ jsonrpc: '2.0', id, error: { code: INTERNAL_ERROR, message: detail } }).catch(() => undefined);
    });
  };
  upstream.onmessage = (message) => {
    const answer = message as { id?: unknown; result?: { tools?: unknown } };
    if ((typeof answer.id === 'string' || typeof answer.id === 'number') && listings.delete(answer.id) && Array.isArray(answer.result?.tools)) {
      answer.result.tools = [...answer.result.tools, hookToolListing()];
    }
    void local.send(message).catch(() => undefined);
  };
  upstream.onerror = (error) => log(`agent-bus: the hub at ${access.url}: ${error.message}`);

  await upstream.start();
  const waker = await (options.wake?.(sessionKey) ?? Promise.resolve(null)).catch((error: unknown) => {
    log(`agent-bus: socket wake: ${(error as Error).message}`);
    return null;
  });
  return new Promise<number>((resolve) => {
    let stopping = false;
    const stop = (code: number): void => {
      if (stopping) return;
      stopping = true;
      process.stdin.destroy();
      void Promise.all([waker?.stop(), upstream.close(), local.close()])
        .catch(() => undefined)
        .finally(() => resolve(code));
    };
    local.onclose = () => stop(0);
    process.stdin.once('end', () => stop(0));
    process.once('SIGTERM', () => stop(143));
    process.once('SIGHUP', () => stop(129));
    process.once('SIGINT', () => stop(130));
    void local.start();
  });
}
