/**
 * The hub: `agent-bus serve --http`. The bus over HTTP for agents on other
 * machines: MCP at /mcp, /healthz for load balancers. Every request but
 * /healthz carries a bearer token, and the token is the only thing that says
 * who is asking. The hub keeps nothing of its own between requests: any
 * number of hubs can share one PostgreSQL database, and a restart loses nothing.
 */
import { confirmRemoteDelivery } from './delivered-endpoint.js';
import { isSurfaceWay } from '../model/receipts.js';
import { AsyncLocalStorage } from 'node:async_hooks';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { hostname } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { Bus } from '../core/bus.js';
import { busPaths } from '../core/paths.js';
import { floatSetting, intSetting, type Env } from '../core/settings.js';
import { BusError, isStoreUnavailable } from '../model/errors.js';
import type { TokenRecord } from '../model/records.js';
import { keepPruned, openBusHere } from '../runtime.js';
import { Gate, RateLimiter } from './limits.js';
import { HubMetrics } from './metrics.js';
import { hasScope } from '../core/tokens.js';
import { clientAddressOf, nameProblem } from '../core/names.js';
import { McpServers } from './mcp-endpoint.js';
import { answerRemoteHook } from './hook-endpoint.js';
import { SessionsReadAhead } from './hub-session.js';
import { callOperation, ForbiddenError } from './call-endpoint.js';
import { SharedChanges } from './waits.js';
import { watchForMail } from './watch-endpoint.js';
import { followSends } from './follow-endpoint.js';
import { quoted } from '../model/quote.js';
import { listenOn } from './listen.js';
import { readBody } from './request-body.js';
import { tokenAccess, type TokenCheck } from './dashboard/access.js';
import { Dashboard } from './dashboard/dashboard.js';
import { registrationsFor } from '../core/roster.js';

export interface HubOptions {
  env: Env;
  host: string;
  port: number;
  version: string;
  /** Diagnostics (stderr). */
  log(line: string): void;
  /** The line that says the hub is ready (stdout). */
  announce(line: string): void;
}

/** Requests per second per token unless AGENT_BUS_HTTP_RATE says otherwise. */
export const DEFAULT_RATE = 200;
/** Requests handled at once; the rest wait, up to QUEUE of them. */
const DEFAULT_CONCURRENCY = 64;
const QUEUE = 1024;
/** Requests waiting for the bus to move (watchers, followers, chats) at once; past it, 503. */
const DEFAULT_WAITS = 1024;
const WAIT_ROUTES = new Set(['/v1/watch', '/v1/follow', '/v1/changes']);
/** PostgreSQL connections a hub holds at most (a CLI or hook holds a few). */
const DEFAULT_PG_POOL = 16;
/** How long SIGTERM waits for requests in flight before it closes anyway. */
const DRAIN_MS = 10_000;
const BEARER = /^Bearer\s+(\S+)\s*$/i;
/** The hub's own endpoints beside /mcp, for remote hooks and the CLI (POST, JSON). */
const API_ROUTES = new Set(['/v1/hook', '/v1/watch', '/v1/delivered', '/v1/call', '/v1/follow', '/v1/changes']);
/** The routes whose every request names a session of the token's agent. */
const READS_SESSIONS = new Set(['/v1/hook', '/v1/watch', '/v1/delivered']);

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent) return;
  const text = `${JSON.stringify(body)}\n`;
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers });
  res.end(text);
}

/** A missing, bad, expired or revoked token. No resource_metadata: no client should start an OAuth flow. */
function unauthorized(res: ServerResponse, description: string): void {
  send(res, 401, { error: 'invalid_token', error_description: description }, { 'www-authenticate': 'Bearer realm="agent-bus", error="invalid_token"' });
}

/** The routes metrics are kept by: the known ones, and everything else as one. */
function routeOf(url: string | undefined): string {
  const path = (url ?? '/').split('?')[0] ?? '/';
  if (Dashboard.owns(path)) return 'dashboard';
  return ['/mcp', '/healthz', '/metrics', ...API_ROUTES].includes(path) ? path : 'other';
}

function isLoopback(address: string | undefined): boolean {
  return address !== undefined && (address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.'));
}

export interface Hub {
  url: string;
  close(): Promise<void>;
}

interface RequestStamp {
  hub: string;
  token_id: string;
  [field: string]: string;
}

export async function startHub(options: HubOptions): Promise<Hub> {
  const { env, log } = options;
  const bus: Bus = openBusHere(env, intSetting(env, 'AGENT_BUS_PG_POOL', DEFAULT_PG_POOL, 1));
  bus.keepSearchIndexCurrent();
  const stamps = new AsyncLocalStorage<RequestStamp>();
  bus.audit.stamp = () => stamps.getStore();
  const metrics = new HubMetrics();
  bus.audit.observe = (rows, stamp) => {
    if (stamp !== undefined) metrics.rows(rows);
  };
  const limiter = new RateLimiter(intSetting(env, 'AGENT_BUS_HTTP_RATE', DEFAULT_RATE, 1));
  const gate = new Gate(intSetting(env, 'AGENT_BUS_HTTP_CONCURRENCY', DEFAULT_CONCURRENCY, 1), QUEUE);
  // Requests that wait for the bus to move hold no place of the work above: they have a bound of their own.
  const waits = new Gate(intSetting(env, 'AGENT_BUS_HTTP_WAITS', DEFAULT_WAITS, 1), 0);
  const requestLimit = Math.max(1 << 20, 2 * bus.settings.maxBodyBytes + 65_536);
  const allowedOrigins = new Set((env.AGENT_BUS_HTTP_ORIGINS ?? '').split(',').map((origin) => origin.trim()).filter((origin) => origin !== ''));
  const memory = { registered: new Set<string>(), touched: new Map<string, number>() };
  const sessionsReadAhead = new SessionsReadAhead(bus, env);
  const changes = new SharedChanges(bus, floatSetting(env, 'AGENT_BUS_WATCH_POLL_SECONDS', 2, 0.05) * 1000);
  const servers = new McpServers({ bus, env, auditPath: busPaths(env).audit, version: options.version, memory });
  let hubName = '';
  const TOKEN_PROBLEMS = { malformed: 'that is not an agent-bus token', unknown: 'no such token', expired: 'the token has expired', revoked: 'the token was revoked' } as const;
  const checkToken: TokenCheck = async (presented) => {
    const check = await bus.tokens.check(presented);
    if (!check.ok) return { ok: false, reason: TOKEN_PROBLEMS[check.reason] };
    metrics.tokenUsed(check.token.tokenId);
    return { ok: true, token: check.token };
  };
  // The human's dashboard at /: signed in with a token, acting as the token's agent.
  const dashboard = new Dashboard({
    bus,
    env,
    auditPath: busPaths(env).audit,
    access: tokenAccess(checkToken, (token) => registrationsFor(token.agent, token.repoPath, true)),
    changes,
    version: options.version,
    // Its requests count against the same per-token rate as the hub's others (sign-ins per address).
    rateLimit: (key) => limiter.take(key),
    log: (line) => log(line),
    within: (actor, work) => stamps.run({ hub: hubName, token_id: actor.tokenId ?? '' }, work),
  });

  async function authenticate(req: IncomingMessage, res: ServerResponse): Promise<TokenRecord | null> {
    const header = req.headers.authorization;
    const presented = typeof header === 'string' ? BEARER.exec(header)?.[1] : undefined;
    if (presented === undefined) {
      unauthorized(res, 'this hub needs a bearer token: Authorization: Bearer <token> (agent-bus token create)');
      return null;
    }
    const check = await checkToken(presented);
    if (!check.ok) {
      unauthorized(res, check.reason);
      return null;
    }
    return check.token;
  }

  /** /metrics: to anyone on this machine, and elsewhere to a token with the metrics scope. */
  async function serveMetrics(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!isLoopback(req.socket.remoteAddress)) {
      const token = await authenticate(req, res);
      if (token === null) return;
      if (!hasScope(token, 'metrics')) {
        send(res, 403, { error: 'insufficient_scope', error_description: 'this token may not read /metrics (agent-bus token create NAME --scope metrics)' }, {
          'www-authenticate': 'Bearer realm="agent-bus", error="insufficient_scope", scope="metrics"',
        });
        return;
      }
    }
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8', 'cache-control': 'no-store' });
    res.end(metrics.render());
  }

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0];
    // The dashboard checks origins itself: the page is read from wherever the hub is reached.
    if (Dashboard.owns(path ?? '/')) {
      await dashboard.handle(req, res);
      return;
    }
    const origin = req.headers.origin;
    if (typeof origin === 'string' && !allowedOrigins.has(origin) && origin !== hubOrigin) {
      send(res, 403, { error: 'forbidden', error_description: `requests from the origin ${origin} are not allowed (AGENT_BUS_HTTP_ORIGINS)` });
      return;
    }
    if (path === '/healthz') {
      try {
        await bus.ping();
        send(res, 200, { status: 'ok' });
      } catch {
        send(res, 503, { status: 'unavailable' });
      }
      return;
    }
    if (path === '/metrics' && req.method === 'GET') {
      await serveMetrics(req, res);
      return;
    }
    if (path !== '/mcp' && !API_ROUTES.has(path ?? '')) {
      send(res, 404, { error: 'not_found', error_description: `no ${path} here: MCP is at /mcp, the dashboard at /` });
      return;
    }
    if (req.method !== 'POST') {
      // Stateless: no stream to open with GET, no session to end with DELETE.
      send(res, 405, { jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this hub answers POST only' }, id: null }, { allow: 'POST' });
      return;
    }
    // A hook's or a watcher's session rows are read while its token is checked, once this hub has
    // met the token (an MCP request says whether it names a session only in its body).
    const header = req.headers.authorization;
    const readAhead = READS_SESSIONS.has(path ?? '') ? sessionsReadAhead.start(typeof header === 'string' ? BEARER.exec(header)?.[1] : undefined) : null;
    const token = await authenticate(req, res);
    if (token === null) return;
    const sessions = sessionsReadAhead.checked(token, readAhead);
    // The remote CLI's --name: the token's own agent, or one of its sessions; nothing else.
    const params = new URLSearchParams((req.url ?? '').split('?')[1] ?? '');
    const as = params.get('as');
    // The remote chat and inbox say so: the mail they read is a person's to see, not a model's call.
    const via = params.get('via');
    if (as !== null && nameProblem(as) !== null) {
      send(res, 400, { error: 'invalid_request', error_description: `${quoted(as)} is not a name: ${nameProblem(as)}` });
      return;
    }
    if (as !== null && as !== token.agent && clientAddressOf(as) !== token.agent) {
      send(res, 403, { error: 'forbidden', error_description: `this token speaks for ${quoted(token.agent)}, not ${quoted(as)}; nothing was done` });
      return;
    }
    const wait = limiter.take(token.tokenId);
    if (wait > 0) {
      send(res, 429, { error: 'rate_limited', error_description: `more than ${limiter.perSecondLimit} requests a second with this token (AGENT_BUS_HTTP_RATE)` }, { 'retry-after': String(wait) });
      return;
    }
    const raw = await readBody(req, requestLimit);
    if (raw === null) {
      send(res, 413, { jsonrpc: '2.0', error: { code: -32000, message: `request body over ${requestLimit} bytes` }, id: null });
      return;
    }
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      send(res, 400, { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error: the body is not JSON' }, id: null });
      return;
    }
    await stamps.run({ hub: hubName, token_id: token.tokenId }, async () => {
      // Which name the token spoke as: the remote CLI prints it.
      res.setHeader('x-agent-bus-agent', as ?? token.agent);
      if (path === '/mcp') {
        await servers.serve(token, req, res, body, as === token.agent ? null : as, isSurfaceWay(via) ? via : null);
        return;
      }
      try {
        if (path === '/v1/watch' || path === '/v1/follow') {
          // A waiter that goes away stops its wait.
          const gone = new AbortController();
          res.once('close', () => gone.abort());
          send(res, 200, path === '/v1/watch' ? await watchForMail(bus, env, changes, metrics, token, body, gone.signal, sessions) : await followSends(bus, changes, metrics, body, gone.signal));
          return;
        }
        if (path === '/v1/changes') {
          // A remote chat waits here for the bus to move: the answer is where the hub's feed stands.
          const since = (body as { since?: unknown } | null)?.since;
          const wait = (body as { wait_seconds?: unknown } | null)?.wait_seconds;
          if (since === changes.version) {
            const gone = new AbortController();
            res.once('close', () => gone.abort());
            metrics.waitsOpen++;
            try {
              await changes.next(Math.min(typeof wait === 'number' && wait >= 0 ? wait : 25, 50) * 1000, gone.signal);
            } finally {
              metrics.waitsOpen--;
            }
          }
          send(res, 200, { version: changes.version });
          return;
        }
        if (path === '/v1/delivered') {
          send(res, 200, await confirmRemoteDelivery(bus, env, token, body, sessions));
          return;
        }
        if (path === '/v1/call') {
          send(res, 200, { result: await callOperation({ bus, env, auditPath: busPaths(env).audit, token }, body) });
          return;
        }
        send(res, 200, await answerRemoteHook(bus, env, token, memory, body, (line) => log(`agent-bus hub: ${line}`), sessions));
      } catch (error) {
        if (!(error instanceof BusError) || isStoreUnavailable(error)) throw error;
        if (error instanceof ForbiddenError) send(res, 403, { error: 'forbidden', error_description: error.message });
        else send(res, 400, { error: 'invalid_request', error_description: error.message });
      }
    });
  }

  const inFlight = new Set<Promise<void>>();
  // Counted from the first moment, so a request answered without waiting (a scrape of /metrics) counts itself.
  let answering = 0;
  const server = createServer((req, res) => {
    answering++;
    const started = performance.now();
    res.once('finish', () => metrics.request(routeOf(req.url), res.statusCode, (performance.now() - started) / 1000));
    const work = (WAIT_ROUTES.has((req.url ?? '').split('?')[0] ?? '') ? waits : gate)
      .run(() => route(req, res))
      .then((ran) => {
        if (ran === null) send(res, 503, { error: 'busy', error_description: 'too many requests at once; try again' }, { 'retry-after': '1' });
      })
      .catch((error: unknown) => {
        if (isStoreUnavailable(error)) {
          send(res, 503, { error: 'store_unavailable', error_description: (error as Error).message }, { 'retry-after': '1' });
          return;
        }
        log(`agent-bus hub: ${req.method ?? '?'} ${(req.url ?? '').split('?')[0]}: ${(error as Error).message ?? String(error)}`);
        send(res, 500, { error: 'internal', error_description: 'the hub could not answer; see its log' });
      })
      .finally(() => {
        answering--;
        inFlight.delete(work);
      });
    inFlight.add(work);
  });
  metrics.requestsInFlight = () => answering;
  server.keepAliveTimeout = 5_000;
  server.headersTimeout = 15_000;
  server.requestTimeout = 60_000;

  let hubOrigin = '';
  let url: string;
  try {
    url = await listenOn(server, options.host, options.port, '--port');
  } catch (error) {
    // Nothing may keep the process waiting once the hub cannot start.
    dashboard.close();
    await changes.close();
    await bus.close();
    throw error;
  }
  hubOrigin = url;
  hubName = env.AGENT_BUS_HUB_NAME?.trim() || `${hostname()}:${url.slice(url.lastIndexOf(':') + 1)}`;

  const stopPruning = keepPruned(bus, env, hubName, (line) => process.stderr.write(`${line}\n`));
  let closing: Promise<void> | null = null;
  return {
    url,
    close(): Promise<void> {
      closing ??= (async () => {
        stopPruning();
        dashboard.close();
        // Stop taking connections, let idle keep-alive ones go, and wait for what is in flight.
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        // Waiting watchers are answered "no mail" at once; they ask the next hub.
        void changes.close();
        const drained = Promise.allSettled([...inFlight]);
        await Promise.race([drained, new Promise((resolve) => setTimeout(resolve, DRAIN_MS).unref())]);
        server.closeAllConnections();
        await closed;
        await changes.close();
        await bus.close();
      })();
      return closing;
    },
  };
}

/** `agent-bus serve --http`: start the hub, say where, and run until SIGTERM or SIGINT drains it. */
export async function runHub(options: HubOptions): Promise<number> {
  let hub: Hub;
  try {
    hub = await startHub(options);
  } catch (error) {
    options.log(`agent-bus: ${(error as Error).message}`);
    return error instanceof BusError ? error.exitCode : 1;
  }
  options.announce(`agent-bus hub: listening on ${hub.url}`);
  return new Promise<number>((resolve) => {
    const stop = (): void => {
      void hub.close().finally(() => resolve(0));
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
}
