/**
 * `POST /mcp`: the stdio server's tools over Streamable HTTP, stateless. Every
 * request gets a server and a transport of its own (the SDK's stateless
 * transport serves one request), speaking as the agent its token names, so any
 * hub sharing the database can answer any request: no sticky sessions.
 */
import { hasScope } from '../../core/tokens.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import { tailAudit } from '../../audit/log.js';
import type { Bus } from '../../core/bus.js';
import type { Env } from '../../model/settings.js';
import type { TokenRecord } from '../../model/records.js';
import type { SurfaceWay } from '../../model/receipts.js';
import { instructionsFor } from '../../mcp/server.js';
import { buildTools } from '../../mcp/tools.js';
import { HubSession, type HubMemory } from './hub-session.js';
import { SESSION_HEADER } from '../../protocol/hub.js';

export interface McpEndpointContext {
  bus: Bus;
  env: Env;
  auditPath: string;
  version: string;
  memory: HubMemory;
}

/** A server with its tools, speaking as one token's agent, idle between requests. */
interface PooledServer {
  server: McpServer;
  session: HubSession;
}

/** Idle servers kept per token, and tokens kept: enough for the agents of a busy fleet. */
const IDLE_PER_TOKEN = 8;
const TOKENS_KEPT = 2_000;

/**
 * Servers ready to answer, by token. Building a server and its tools costs more than most
 * calls; a request takes an idle one of its token (or builds one), connects a transport of
 * its own, and gives the server back when its response is done. Nothing in a server outlives
 * the request but its tools; the identity it speaks as is the token's, fixed when it is built.
 */
export class McpServers {
  private readonly idle = new Map<string, PooledServer[]>();
  /** Only elicitation would use it; one for all servers spares building one per request. */
  private readonly validator = new AjvJsonSchemaValidator();

  constructor(private readonly context: McpEndpointContext) {}

  private borrow(token: TokenRecord): PooledServer {
    const pooled = this.idle.get(token.tokenId)?.pop();
    if (pooled !== undefined) return pooled;
    const { context } = this;
    const session = new HubSession(context.bus, token, context.env, context.memory.registered);
    const server = new McpServer({ name: 'agent-bus', version: context.version }, { instructions: instructionsFor(session.name), jsonSchemaValidator: this.validator });
    buildTools(server, { bus: context.bus, session, auditPath: context.auditPath, tailAudit, touched: context.memory.touched, env: context.env, mayStart: hasScope(token, 'spawn') });
    return { server, session };
  }

  private giveBack(token: TokenRecord, pooled: PooledServer): void {
    let list = this.idle.get(token.tokenId);
    if (list === undefined) {
      if (this.idle.size >= TOKENS_KEPT) this.idle.delete(this.idle.keys().next().value as string);
      list = [];
      this.idle.set(token.tokenId, list);
    }
    if (list.length < IDLE_PER_TOKEN) list.push(pooled);
  }

  /**
   * `speakAs`: a session of the token's agent this request speaks as (checked by the caller); `via`:
   * the remote surface that reads; `pinned`: the handle the asking agent's name pins (pinnedHandle).
   */
  async serve(token: TokenRecord, req: IncomingMessage, res: ServerResponse, body: unknown, speakAs: string | null = null, via: SurfaceWay | null = null, pinned: string | null = null): Promise<void> {
    const header = req.headers[SESSION_HEADER];
    const pooled = this.borrow(token);
    pooled.session.begin(speakAs, typeof header === 'string' && header.trim() !== '' ? header.trim().slice(0, 200) : null, via, pinned);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.once('close', () => {
      void pooled.server
        .close()
        .catch(() => undefined)
        .then(() => this.giveBack(token, pooled));
    });
    await pooled.server.connect(transport);
    await transport.handleRequest(req, res, body);
  }
}
