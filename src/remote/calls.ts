/**
 * The hub's operations as the client calls them, typed by the hub's protocol (src/protocol/hub.ts):
 * a tool is one JSON-RPC POST to /mcp (no MCP session: the hub is stateless), a call one POST to
 * /v1/call, an endpoint one POST of its own. The token says who speaks; `as` may name the token's
 * own agent or one of its sessions, and the hub refuses anything else.
 */
import { BusError, errorOfKind } from '../model/errors.js';
import { hubRequest, HubUnreachable, refusal, type HubResponse } from './http.js';
import type { HubAccess } from '../adapters/hub-access.js';
import type { SurfaceWay } from '../model/receipts.js';
import { ERROR_KIND_KEY, HUB_PATHS, SPEAKER_HEADER, type CallArgs, type CallName, type CallResult, type EndpointPath, type EndpointRequest, type EndpointResponse, type ToolArgs, type ToolName, type ToolResult } from '../protocol/hub.js';

/** How long a CLI command waits for the hub. */
const CLI_TIMEOUT_MS = 30_000;

let ids = 0;

/** A tool's result, and the name the hub spoke as. */
export interface HubResult<T> {
  value: T;
  speaker: string;
}

/**
 * One request of the remote CLI to the hub, its failures said in one line: no token, the hub out of
 * reach, the token refused, or what the hub answered instead (a 400's reason as it is).
 */
async function askHub(access: HubAccess, path: string, body: unknown): Promise<HubResponse> {
  if (access.token === '') throw new BusError(`no token for the hub at ${access.url}: set AGENT_BUS_TOKEN, or run agent-bus login ${access.url} --token TOKEN`);
  let response: HubResponse;
  try {
    response = await hubRequest(access, 'POST', path, body, CLI_TIMEOUT_MS);
  } catch (error) {
    if (error instanceof HubUnreachable) throw new BusError(`cannot reach the hub at ${access.url}: ${error.message}`);
    throw error;
  }
  if (response.status === 401) throw new BusError(`the hub at ${access.url} refused the token: ${refusal(response)}`);
  if (response.status === 400) throw errorOfKind(refusal(response), (response.body as Record<string, unknown> | null)?.[ERROR_KIND_KEY]);
  if (response.status !== 200) throw new BusError(`the hub at ${access.url} said: ${refusal(response)}`);
  return response;
}

/**
 * One tool call at the hub. `via`: the surface of this machine that shows what `read_inbox` takes
 * (the CLI's inbox, the chat), recorded as the mail's receipt instead of a model's read.
 */
export async function callHubTool<K extends ToolName>(access: HubAccess, tool: K, args: ToolArgs<K>, as: string | null = null, via: SurfaceWay | null = null): Promise<HubResult<ToolResult<K>>> {
  const query = new URLSearchParams();
  if (as !== null) query.set('as', as);
  if (via !== null) query.set('via', via);
  const path = query.size === 0 ? HUB_PATHS.mcp : `${HUB_PATHS.mcp}?${query.toString()}`;
  const response = await askHub(access, path, { jsonrpc: '2.0', id: ++ids, method: 'tools/call', params: { name: tool, arguments: args } });
  const body = response.body as { result?: { content?: Array<{ text?: string }>; isError?: boolean; _meta?: Record<string, unknown> }; error?: { message?: string } } | null;
  if (body?.error) throw new BusError(`the hub at ${access.url} said: ${body.error.message ?? 'an error'}`);
  const text = body?.result?.content?.[0]?.text ?? '';
  if (body?.result?.isError) throw errorOfKind(text, body.result._meta?.[ERROR_KIND_KEY]);
  const header = response.headers[SPEAKER_HEADER];
  try {
    return { value: JSON.parse(text) as ToolResult<K>, speaker: typeof header === 'string' ? header : (as ?? '') };
  } catch {
    throw new BusError(`the hub at ${access.url} answered what is not the bus's JSON`);
  }
}

/** One of the hub's operations beyond the tools (POST /v1/call), for the token's agent. */
export async function callHubOp<K extends CallName>(access: HubAccess, op: K, args: CallArgs<K>): Promise<CallResult<K>> {
  return ((await askHub(access, HUB_PATHS.call, { op, args })).body as { result: CallResult<K> }).result;
}

/** What an endpoint answered: its typed body when the status is 200, else whatever came. */
export type EndpointReply<P extends EndpointPath> = { status: 200; body: EndpointResponse<P>; response: HubResponse } | { status: number; body: unknown; response: HubResponse };

/**
 * One request to a remote hook's, watcher's or follower's endpoint, failures left to the caller (a
 * hook goes on without the hub; a watcher asks again). `signal` ends it early.
 */
export async function postToHub<P extends EndpointPath>(access: HubAccess, path: P, body: EndpointRequest<P>, timeoutMs: number, signal?: AbortSignal): Promise<EndpointReply<P>> {
  const response = await hubRequest(access, 'POST', path, body, timeoutMs, signal);
  return { status: response.status, body: response.body, response } as EndpointReply<P>;
}
