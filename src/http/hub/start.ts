/**
 * The hub: `agent-bus serve --http`. The bus over HTTP for agents on other
 * machines (its routes in routes.ts). Every request but /healthz carries a
 * bearer token, and the token is the only thing that says who is asking. The
 * hub keeps nothing of its own between requests: any number of hubs can share
 * one PostgreSQL database, and a restart loses nothing.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { createServer } from 'node:http';
import { hostname } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { Bus } from '../../core/bus.js';
import { busPaths } from '../../adapters/paths.js';
import { registrationsFor } from '../../core/roster.js';
import { setting, type Env } from '../../model/settings.js';
import { BusError } from '../../model/errors.js';
import type { AuditRow } from '../../audit/record.js';
import { tokenAccess } from '../dashboard/access.js';
import { Dashboard } from '../dashboard/dashboard.js';
import { answerFailure, sendJson } from '../errors.js';
import { listenOn } from '../listen.js';
import { SharedChanges } from '../waits.js';
import { tokenChecker } from './auth.js';
import { SessionsReadAhead } from './hub-session.js';
import { Gate, RateLimiter } from './limits.js';
import { McpServers } from './mcp-endpoint.js';
import { HubMetrics } from './metrics.js';
import { route, routeOf, WAIT_ROUTES, type HubContext, type RequestStamp } from './routes.js';
import { serveOutbox } from '../../adapters/outbox-serving.js';

export interface HubOptions {
  env: Env;
  host: string;
  port: number;
  version: string;
  /** Diagnostics (stderr). */
  log(line: string): void;
  /** The line that says the hub is ready (stdout). */
  announce(line: string): void;
  /**
   * Open the hub's bus: with `poolMax` PostgreSQL connections at most, every audit row of a request
   * carrying the request's stamp (`auditStamp`), and each batch of rows heard by `auditObserve`.
   */
  openBus(how: {
    poolMax: number;
    auditStamp: () => Record<string, string> | undefined;
    auditObserve: (rows: readonly AuditRow[], stamp: Record<string, string> | undefined) => void;
  }): Bus;
}

/** Requests waiting for their turn past the ones handled at once (AGENT_BUS_HTTP_CONCURRENCY). */
const QUEUE = 1024;
/** How long SIGTERM waits for requests in flight before it closes anyway. */
const DRAIN_MS = 10_000;

export interface Hub {
  url: string;
  close(): Promise<void>;
}

export async function startHub(options: HubOptions): Promise<Hub> {
  const { env, log } = options;
  const stamps = new AsyncLocalStorage<RequestStamp>();
  const metrics = new HubMetrics();
  const bus: Bus = options.openBus({
    poolMax: setting(env, 'AGENT_BUS_PG_POOL'),
    // Each audit row says which hub did it and for which token.
    auditStamp: () => stamps.getStore(),
    auditObserve: (rows, stamp) => {
      if (stamp !== undefined) metrics.rows(rows);
    },
  });
  bus.mail.keepSearchIndexCurrent();
  const limiter = new RateLimiter(setting(env, 'AGENT_BUS_HTTP_RATE'));
  const gate = new Gate(setting(env, 'AGENT_BUS_HTTP_CONCURRENCY'), QUEUE);
  // Requests that wait for the bus to move hold no place of the work above: they have a bound of their own.
  const waits = new Gate(setting(env, 'AGENT_BUS_HTTP_WAITS'), 0);
  const memory = { registered: new Set<string>(), touched: new Map<string, number>() };
  const changes = new SharedChanges(bus, setting(env, 'AGENT_BUS_WATCH_POLL_SECONDS') * 1000);
  const auditPath = busPaths(env).audit;
  const checkToken = tokenChecker(bus, metrics);
  let hubName = '';
  let hubOrigin = '';
  const hub: HubContext = {
    bus,
    env,
    auditPath,
    metrics,
    checkToken,
    changes,
    memory,
    limiter,
    stamps,
    requestLimit: Math.max(1 << 20, 2 * bus.settings.maxBodyBytes + 65_536),
    allowedOrigins: new Set(setting(env, 'AGENT_BUS_HTTP_ORIGINS')),
    sessionsReadAhead: new SessionsReadAhead(bus, env),
    servers: new McpServers({ bus, env, auditPath, version: options.version, memory }),
    // The human's dashboard at /: signed in with a token, acting as the token's agent.
    dashboard: new Dashboard({
      bus,
      env,
      auditPath,
      access: tokenAccess(checkToken, (token) => registrationsFor(token.agent, token.repoPath, true)),
      changes,
      version: options.version,
      // Its requests count against the same per-token rate as the hub's others (sign-ins per address).
      rateLimit: (key) => limiter.take(key),
      log: (line) => log(line),
      within: (actor, work) => stamps.run({ hub: hubName, token_id: actor.tokenId ?? '' }, work),
    }),
    origin: () => hubOrigin,
    name: () => hubName,
    log,
  };

  const inFlight = new Set<Promise<void>>();
  // Counted from the first moment, so a request answered without waiting (a scrape of /metrics) counts itself.
  let answering = 0;
  const server = createServer((req, res) => {
    answering++;
    const started = performance.now();
    res.once('finish', () => metrics.request(routeOf(req.url), res.statusCode, (performance.now() - started) / 1000));
    const work = (WAIT_ROUTES.has((req.url ?? '').split('?')[0] ?? '') ? waits : gate)
      .run(() => route(hub, req, res))
      .then((ran) => {
        if (ran === null) sendJson(res, 503, { error: 'busy', error_description: 'too many requests at once; try again' }, { 'retry-after': '1' });
      })
      .catch((error: unknown) => answerFailure(res, error, log, `${req.method ?? '?'} ${(req.url ?? '').split('?')[0]}`))
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

  let url: string;
  try {
    url = await listenOn(server, options.host, options.port, '--port');
  } catch (error) {
    // Nothing may keep the process waiting once the hub cannot start.
    hub.dashboard.close();
    await changes.close();
    await bus.close();
    throw error;
  }
  hubOrigin = url;
  hubName = setting(env, 'AGENT_BUS_HUB_NAME') || `${hostname()}:${url.slice(url.lastIndexOf(':') + 1)}`;

  const stopPruning = bus.retention.keepPruned(hubName, (line) => process.stderr.write(`${line}\n`));
  // The outbox's events go out from here, or from another hub of the same store serving it already.
  const outbound = serveOutbox(bus, env, (line) => process.stderr.write(`${line}\n`));
  let closing: Promise<void> | null = null;
  return {
    url,
    close(): Promise<void> {
      closing ??= (async () => {
        stopPruning();
        hub.dashboard.close();
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
        await outbound.stop();
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
