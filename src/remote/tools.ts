/**
 * The bus's tools on the hub, called as one JSON-RPC POST each (no MCP
 * session: the hub is stateless), for the remote CLI. The token says who
 * speaks; `as` may name the token's own agent or one of its sessions, and the
 * hub refuses anything else.
 */
import { BusError } from '../model/errors.js';
import { hubRequest, HubUnreachable, refusal, type HubResponse } from './http.js';
import type { HubAccess } from './settings.js';
import type { SurfaceWay } from '../model/receipts.js';

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
  if (response.status === 400) throw new BusError(refusal(response));
  if (response.status !== 200) throw new BusError(`the hub at ${access.url} said: ${refusal(response)}`);
  return response;
}

/**
 * One tool call at the hub. `via`: the surface of this machine that shows what `read_inbox` takes
 * (the CLI's inbox, the chat), recorded as the mail's receipt instead of a model's read.
 */
export async function callHubTool<T>(access: HubAccess, tool: string, args: Record<string, unknown>, as: string | null = null, via: SurfaceWay | null = null): Promise<HubResult<T>> {
  const query = new URLSearchParams();
  if (as !== null) query.set('as', as);
  if (via !== null) query.set('via', via);
  const path = query.size === 0 ? '/mcp' : `/mcp?${query.toString()}`;
  const response = await askHub(access, path, { jsonrpc: '2.0', id: ++ids, method: 'tools/call', params: { name: tool, arguments: args } });
  const body = response.body as { result?: { content?: Array<{ text?: string }>; isError?: boolean }; error?: { message?: string } } | null;
  if (body?.error) throw new BusError(`the hub at ${access.url} said: ${body.error.message ?? 'an error'}`);
  const text = body?.result?.content?.[0]?.text ?? '';
  if (body?.result?.isError) throw new BusError(text);
  const header = response.headers['x-agent-bus-agent'];
  try {
    return { value: JSON.parse(text) as T, speaker: typeof header === 'string' ? header : (as ?? '') };
  } catch {
    throw new BusError(`the hub at ${access.url} answered what is not the bus's JSON`);
  }
}

/** One of the hub's operations beyond the tools (POST /v1/call), for the token's agent. */
export async function callHubOp<T>(access: HubAccess, op: string, args: Record<string, unknown> = {}): Promise<T> {
  return ((await askHub(access, '/v1/call', { op, args })).body as { result: T }).result;
}
