/**
 * `POST /mcp`: the stdio server's tools over Streamable HTTP, stateless. Every
 * request gets a server and a transport of its own (the SDK's stateless
 * transport serves one request), speaking as the agent its token names, so any
 * hub sharing the database can answer any request: no sticky sessions.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { tailAudit } from '../audit/log.js';
import type { Bus } from '../core/bus.js';
import type { Env } from '../core/settings.js';
import type { TokenRecord } from '../model/records.js';
import { instructionsFor, TOUCH_INTERVAL_MS } from '../mcp/server.js';
import { buildTools } from '../mcp/tools.js';
import { HubSession } from './hub-session.js';

export interface McpEndpointContext {
  bus: Bus;
  env: Env;
  auditPath: string;
  version: string;
  registered: Set<string>;
  touched: Map<string, { last: number }>;
}

export async function serveMcp(context: McpEndpointContext, token: TokenRecord, req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
  const header = req.headers['x-agent-bus-session'];
  const conversation = typeof header === 'string' && header.trim() !== '' ? header.trim().slice(0, 200) : null;
  const session = new HubSession(context.bus, token, context.registered, conversation);
  let touched = context.touched.get(token.agent);
  if (touched === undefined) {
    touched = { last: 0 };
    context.touched.set(token.agent, touched);
  }
  const server = new McpServer({ name: 'agent-bus', version: context.version }, { instructions: instructionsFor(session.name) });
  buildTools(server, { bus: context.bus, session, auditPath: context.auditPath, tailAudit, touchIntervalMs: TOUCH_INTERVAL_MS, touched, env: context.env });
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  res.on('close', () => {
    void transport.close().catch(() => undefined);
    void server.close().catch(() => undefined);
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, body);
}
