/**
 * The hub's routes: which answers what. `/healthz` and `/metrics` for operators, the dashboard at
 * `/`, MCP at `/mcp`, and the endpoints of the hub protocol (src/protocol/hub.ts) for remote CLIs,
 * hooks, watchers and followers. Every request but `/healthz` is checked for its token and its
 * origin; the token's agent, or one of its sessions that `?as=` names, is who speaks.
 */
import type { AsyncLocalStorage } from 'node:async_hooks';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Bus } from '../../core/bus.js';
import { clientAddressOf, speakerProblem } from '../../core/names.js';
import type { Env } from '../../model/settings.js';
import { isSurfaceWay } from '../../model/receipts.js';
import type { TokenRecord } from '../../model/records.js';
import { quoted } from '../../model/quote.js';
import { HUB_PATHS, NAME_HEADER, SPEAKER_HEADER, type EndpointPath, type EndpointResponse } from '../../protocol/hub.js';
import type { TokenCheck } from '../dashboard/access.js';
import { Dashboard } from '../dashboard/dashboard.js';
import { answerRefusal, sendJson } from '../errors.js';
import { readBody } from '../request-body.js';
import type { SharedChanges } from '../waits.js';
import { authenticate, mayReadMetrics, presentedToken } from './auth.js';
import { callOperation } from './call-endpoint.js';
import { waitForChange } from './changes-endpoint.js';
import { confirmRemoteDelivery } from './delivered-endpoint.js';
import { followSends } from './follow-endpoint.js';
import { answerRemoteHook } from './hook-endpoint.js';
import { pinnedHandle, type HubMemory, type SessionsRead, type SessionsReadAhead } from './hub-session.js';
import type { RateLimiter } from './limits.js';
import type { McpServers } from './mcp-endpoint.js';
import type { HubMetrics } from './metrics.js';
import { watchForMail } from './watch-endpoint.js';

/** What a request's audit rows carry of the hub and the token that asked. */
export interface RequestStamp {
  hub: string;
  token_id: string;
  [field: string]: string;
}

/** Everything the routes answer with, made once when the hub starts. */
export interface HubContext {
  bus: Bus;
  env: Env;
  auditPath: string;
  metrics: HubMetrics;
  checkToken: TokenCheck;
  dashboard: Dashboard;
  servers: McpServers;
  changes: SharedChanges;
  memory: HubMemory;
  sessionsReadAhead: SessionsReadAhead;
  limiter: RateLimiter;
  /** The largest request body taken. */
  requestLimit: number;
  /** Browser origins allowed besides the hub's own (AGENT_BUS_HTTP_ORIGINS). */
  allowedOrigins: Set<string>;
  stamps: AsyncLocalStorage<RequestStamp>;
  /** The hub's own origin and its name in audit rows: known once it listens. */
  origin(): string;
  name(): string;
  log(line: string): void;
}

/** One request to a protocol endpoint, its token checked. */
interface EndpointCall {
  token: TokenRecord;
  body: unknown;
  /** The token's agent's session rows, read while its token was checked (the routes that name a session). */
  sessions: SessionsRead | null;
  /** Ends when the asker goes away: a wait stops, and a watcher takes nothing. */
  gone: AbortSignal;
  /** The handle the asking agent's name pins for a conversation not yet held (pinnedHandle), else null. */
  pinned: string | null;
}

/** Each endpoint of the protocol, answering with the type the protocol gives it. */
const ENDPOINTS: { [P in EndpointPath]: (hub: HubContext, call: EndpointCall) => Promise<EndpointResponse<P>> } = {
  '/v1/call': async (hub, { token, body, pinned }) => ({ result: await callOperation({ bus: hub.bus, env: hub.env, auditPath: hub.auditPath, token, pinned }, body) }),
  '/v1/hook': (hub, { token, body, sessions, pinned }) => answerRemoteHook(hub.bus, hub.env, token, hub.memory, body, (line) => hub.log(`agent-bus hub: ${line}`), sessions, pinned),
  '/v1/watch': (hub, { token, body, sessions, gone, pinned }) => watchForMail(hub.bus, hub.env, hub.changes, hub.metrics, token, body, gone, sessions, pinned),
  '/v1/delivered': (hub, { token, body, sessions, pinned }) => confirmRemoteDelivery(hub.bus, hub.env, token, body, sessions, pinned),
  '/v1/follow': (hub, { body, gone }) => followSends(hub.bus, hub.changes, hub.metrics, body, gone),
  '/v1/changes': (hub, { body, gone }) => waitForChange(hub.changes, hub.metrics, body, gone),
};

const ENDPOINT_PATHS = new Set<string>(Object.keys(ENDPOINTS));

/** The routes whose every request names a session of the token's agent. */
const READS_SESSIONS = new Set<string>([HUB_PATHS.hook, HUB_PATHS.watch, HUB_PATHS.delivered]);

/** Requests that wait for the bus to move (watchers, followers, chats): they have a bound of their own. */
export const WAIT_ROUTES = new Set<string>([HUB_PATHS.watch, HUB_PATHS.follow, HUB_PATHS.changes]);

/** Where services post their deliveries: the integration's name follows. */
const INTEGRATIONS_PREFIX = '/v1/integrations/';

/** The largest delivery an integration takes. */
const DELIVERY_LIMIT = 1024 * 1024;

/**
 * A webhook delivery: no token, since the service signs it with its integration's secret instead,
 * which the core checks over the raw bytes. Each integration has the per-token rate limit.
 */
async function takeIntegrationDelivery(hub: HubContext, req: IncomingMessage, res: ServerResponse, encodedName: string): Promise<void> {
  if (req.method !== 'POST') {
    sendJson(res, 405, { ok: false, error: 'method_not_allowed', detail: 'an integration takes deliveries by POST' }, { allow: 'POST' });
    return;
  }
  let name: string;
  try {
    name = decodeURIComponent(encodedName);
  } catch {
    sendJson(res, 404, { ok: false, result: 'unknown', detail: 'no such integration' });
    return;
  }
  const wait = hub.limiter.take(`integration:${name}`);
  if (wait > 0) {
    sendJson(res, 429, { ok: false, error: 'rate_limited', detail: `more than ${hub.limiter.perSecondLimit} deliveries a second (AGENT_BUS_HTTP_RATE)` }, { 'retry-after': String(wait) });
    return;
  }
  const body = await readBody(req, DELIVERY_LIMIT);
  if (body === null) {
    sendJson(res, 413, { ok: false, error: 'too_large', detail: `a delivery is at most ${DELIVERY_LIMIT} bytes` });
    return;
  }
  const headers: Record<string, string | undefined> = {};
  for (const [key, value] of Object.entries(req.headers)) headers[key] = Array.isArray(value) ? value[0] : value;
  const answer = await hub.stamps.run({ hub: hub.name(), token_id: '' }, () => hub.bus.integrations.receive({ name, headers, body }));
  sendJson(res, answer.status, answer.body);
}

/** The routes metrics are kept by: the known ones, and everything else as one. */
export function routeOf(url: string | undefined): string {
  const path = (url ?? '/').split('?')[0] ?? '/';
  if (Dashboard.owns(path)) return 'dashboard';
  if (path.startsWith(INTEGRATIONS_PREFIX)) return INTEGRATIONS_PREFIX;
  return path === HUB_PATHS.mcp || path === '/healthz' || path === '/metrics' || ENDPOINT_PATHS.has(path) ? path : 'other';
}

export async function route(hub: HubContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = (req.url ?? '/').split('?')[0] ?? '/';
  // The dashboard checks origins itself: the page is read from wherever the hub is reached.
  if (Dashboard.owns(path)) {
    await hub.dashboard.handle(req, res);
    return;
  }
  const origin = req.headers.origin;
  if (typeof origin === 'string' && !hub.allowedOrigins.has(origin) && origin !== hub.origin()) {
    sendJson(res, 403, { error: 'forbidden', error_description: `requests from the origin ${origin} are not allowed (AGENT_BUS_HTTP_ORIGINS)` });
    return;
  }
  if (path === '/healthz') {
    try {
      await hub.bus.health.ping();
      sendJson(res, 200, { status: 'ok' });
    } catch {
      sendJson(res, 503, { status: 'unavailable' });
    }
    return;
  }
  if (path === '/metrics' && req.method === 'GET') {
    if (!(await mayReadMetrics(hub.checkToken, req, res))) return;
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8', 'cache-control': 'no-store' });
    res.end(hub.metrics.render());
    return;
  }
  if (path.startsWith(INTEGRATIONS_PREFIX)) {
    await takeIntegrationDelivery(hub, req, res, path.slice(INTEGRATIONS_PREFIX.length));
    return;
  }
  if (path !== HUB_PATHS.mcp && !ENDPOINT_PATHS.has(path)) {
    sendJson(res, 404, { error: 'not_found', error_description: `no ${path} here: MCP is at /mcp, the dashboard at /` });
    return;
  }
  if (req.method !== 'POST') {
    // Stateless: no stream to open with GET, no session to end with DELETE.
    sendJson(res, 405, { jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this hub answers POST only' }, id: null }, { allow: 'POST' });
    return;
  }
  // A hook's or a watcher's session rows are read while its token is checked, once this hub has
  // met the token (an MCP request says whether it names a session only in its body).
  const readAhead = READS_SESSIONS.has(path) ? hub.sessionsReadAhead.start(presentedToken(req)) : null;
  const token = await authenticate(hub.checkToken, req, res);
  if (token === null) return;
  const sessions = hub.sessionsReadAhead.checked(token, readAhead);
  // The remote CLI's --name: the token's own agent, or one of its sessions; nothing else.
  const params = new URLSearchParams((req.url ?? '').split('?')[1] ?? '');
  const as = params.get('as');
  // The remote chat and inbox say so: the mail they read is a person's to see, not a model's call.
  const via = params.get('via');
  // The name the asking machine gave its agent: a session of the token's agent it pins, else nothing.
  const named = req.headers[NAME_HEADER];
  const pinned = pinnedHandle(token, typeof named === 'string' ? named.trim() : null, hub.env);
  if (as !== null && speakerProblem(as) !== null) {
    sendJson(res, 400, { error: 'invalid_request', error_description: `${quoted(as)} is not a name to speak as: ${speakerProblem(as)}` });
    return;
  }
  if (as !== null && as !== token.agent && clientAddressOf(as) !== token.agent) {
    sendJson(res, 403, { error: 'forbidden', error_description: `this token speaks for ${quoted(token.agent)}, not ${quoted(as)}; nothing was done` });
    return;
  }
  const wait = hub.limiter.take(token.tokenId);
  if (wait > 0) {
    sendJson(res, 429, { error: 'rate_limited', error_description: `more than ${hub.limiter.perSecondLimit} requests a second with this token (AGENT_BUS_HTTP_RATE)` }, { 'retry-after': String(wait) });
    return;
  }
  const raw = await readBody(req, hub.requestLimit);
  if (raw === null) {
    sendJson(res, 413, { jsonrpc: '2.0', error: { code: -32000, message: `request body over ${hub.requestLimit} bytes` }, id: null });
    return;
  }
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    sendJson(res, 400, { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error: the body is not JSON' }, id: null });
    return;
  }
  await hub.stamps.run({ hub: hub.name(), token_id: token.tokenId }, async () => {
    // Which name the token spoke as: the remote CLI prints it.
    res.setHeader(SPEAKER_HEADER, as ?? token.agent);
    if (path === HUB_PATHS.mcp) {
      await hub.servers.serve(token, req, res, body, as === token.agent ? null : as, isSurfaceWay(via) ? via : null, pinned);
      return;
    }
    // A waiter that goes away stops its wait.
    const gone = new AbortController();
    res.once('close', () => gone.abort());
    try {
      sendJson(res, 200, await ENDPOINTS[path as EndpointPath](hub, { token, body, sessions, gone: gone.signal, pinned }));
    } catch (error) {
      if (!answerRefusal(res, error)) throw error;
    }
  });
}
