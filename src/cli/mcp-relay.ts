/**
 * `agent-bus serve` on a machine set to use a hub: the client's stdio MCP server relays every message
 * to the hub's `/mcp` and every answer back, with the token, so the tools run at the hub as the
 * token's agent (and the session the client's conversation id names), exactly as a client wired to
 * the hub over HTTP. What a relay adds is a process of ours that is a child of the client on this
 * machine: it can wake the session through the client's inbox socket, hearing the mail through the
 * hub's change feed.
 */
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { HubAccess } from '../adapters/hub-access.js';
import { sessionFromEnvironment } from '../clients/profile.js';
import { profileFor } from '../clients/registry/profiles.js';
import { HUB_PATHS, SESSION_HEADER } from '../protocol/hub.js';
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

/** Relay the client's MCP session to the hub until the client closes it: the exit status. */
export async function relayToHub(options: RelayOptions): Promise<number> {
  const { access, env, log } = options;
  // The conversation id the client gives its server (Claude Code's session id) picks the session address at the hub.
  const sessionKey = sessionFromEnvironment(profileFor(options.client), env);
  const headers: Record<string, string> = { authorization: `Bearer ${access.token}` };
  if (sessionKey !== null) headers[SESSION_HEADER] = sessionKey;
  const upstream = new StreamableHTTPClientTransport(new URL(`${access.url}${HUB_PATHS.mcp}`), { requestInit: { headers } });
  const local = new StdioServerTransport();

  local.onmessage = (message) => {
    upstream.send(message).catch((error: unknown) => {
      // A request the hub never got is answered here, so the client is not left waiting on it.
      const id = requestId(message);
      const detail = `agent-bus: the hub at ${access.url} did not take the call: ${(error as Error).message}`;
      if (id === null) log(detail);
      else void local.send({ jsonrpc: '2.0', id, error: { code: INTERNAL_ERROR, message: detail } }).catch(() => undefined);
    });
  };
  upstream.onmessage = (message) => {
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
