/**
 * The dashboard over HTTP: its files, its sign-in, its API and its live feed,
 * mounted by `agent-bus web` on its own listener and by the hub beside /mcp.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Bus } from '../../core/bus.js';
import type { Env } from '../../model/settings.js';
import type { AgentView } from '../../core/views.js';
import { BusError, isStoreUnavailable } from '../../model/errors.js';
import { ForbiddenError } from '../errors.js';
import type { SharedChanges } from '../waits.js';
import { clearedCookie, sameOrigin, sessionCookie, type DashboardAccess, type DashboardActor } from './access.js';
import { GET_ROUTES, POST_ROUTES, type ApiContext } from './api.js';
import type { DashboardFleet } from './fleet-api.js';
import { isAssetPath, MissingAssetsError, SECURITY_HEADERS, serveAsset } from './assets.js';
import { DashboardEvents } from './events.js';
import { readBody } from '../request-body.js';

export interface DashboardOptions {
  bus: Bus;
  env: Env;
  auditPath: string;
  access: DashboardAccess;
  changes: SharedChanges;
  version: string;
  /** This machine's fleet, to spawn and stop agents and read their logs: `agent-bus web`'s; none on the hub. */
  fleet?: DashboardFleet | null;
  /** The Host headers this dashboard answers (its own names: a rebinding of another name is refused); null: any. */
  hosts?: ReadonlySet<string> | null;
  /** Seconds to wait before another request from `key` (a token id, or an address signing in) is taken; 0: now. */
  rateLimit?(key: string): number;
  log(line: string): void;
  /** Runs each change a signed-in actor asks for (the hub stamps its audit rows with the token). */
  within?<T>(actor: DashboardActor, work: () => Promise<T>): Promise<T>;
}

const BODY_LIMIT = 1 << 20;
/** A sign-in carries a key or a token, nothing more. */
const SIGNIN_LIMIT = 4_096;
const ROSTER_KEPT_MS = 2_000;
/**
 * How long a view's answer is shared by every page that asks while the bus has not moved: a
 * busy bus with many pages open costs one read per view per second, not one per page per change.
 */
const ANSWER_KEPT_MS = 1_000;
/**
 * Views whose answer is the same for every actor. The rest say who is asking, or do something for
 * them: a thread drawn marks the copies addressed to the one looking delivered.
 */
const SHARED_VIEWS = new Set(['/api/roster', '/api/threads', '/api/mail', '/api/notices', '/api/reservations', '/api/activity', '/api/names', '/api/wake', '/api/fleet']);

function reply(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent) return;
  const text = `${JSON.stringify(body)}\n`;
  res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers });
  res.end(text);
}

/** The body as a JSON object, or why not. */
async function readJson(req: IncomingMessage, limit: number): Promise<Record<string, unknown> | 'too-large' | 'not-json'> {
  const raw = await readBody(req, limit);
  if (raw === null) return 'too-large';
  try {
    const text = raw.toString('utf8');
    const value: unknown = text.trim() === '' ? {} : JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : 'not-json';
  } catch {
    return 'not-json';
  }
}

export class Dashboard {
  private readonly events: DashboardEvents;
  private roster: { at: number; agents: Promise<AgentView[]> } | null = null;
  private readonly answers = new Map<string, { at: number; version: number; value: Promise<unknown> }>();

  constructor(private readonly options: DashboardOptions) {
    this.events = new DashboardEvents(options.auditPath, options.changes);
  }

  /** Whether a path is the dashboard's. */
  static owns(path: string): boolean {
    return isAssetPath(path) || path.startsWith('/api/');
  }

  private agents(): Promise<AgentView[]> {
    const now = Date.now();
    if (this.roster === null || now - this.roster.at > ROSTER_KEPT_MS) {
      const agents = this.options.bus.roster.agents();
      const kept = { at: now, agents };
      agents.catch(() => {
        if (this.roster === kept) this.roster = null;
      });
      this.roster = kept;
    }
    return this.roster.agents;
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://dashboard');
    const path = url.pathname;
    const method = req.method ?? 'GET';
    try {
      const hosts = this.options.hosts ?? null;
      if (hosts !== null && !hosts.has(String(req.headers.host ?? ''))) {
        req.resume();
        return reply(res, 421, { error: `this dashboard answers ${[...hosts].join(', ')}, not ${JSON.stringify(String(req.headers.host ?? '')).slice(0, 100)}` });
      }
      if (isAssetPath(path)) {
        if (method !== 'GET' && method !== 'HEAD') return reply(res, 405, { error: 'GET only' }, { allow: 'GET, HEAD' });
        const key = url.searchParams.get('key');
        // The printed URL (`agent-bus web` only: a token never travels in a URL): its key becomes the cookie, and the address bar loses it.
        if (path === '/' && key !== null && this.options.access.asks === 'key') {
          const signed = await this.options.access.signIn(key);
          if (signed.ok) {
            res.writeHead(303, { ...SECURITY_HEADERS, location: '/', 'set-cookie': sessionCookie(req, signed.value), 'cache-control': 'no-store' });
            res.end();
            return;
          }
        }
        return serveAsset(req, res, path);
      }
      if (method === 'POST') return await this.post(req, res, path);
      if (method !== 'GET') return reply(res, 405, { error: 'GET or POST only' }, { allow: 'GET, POST' });
      const actor = await this.signedIn(req, res);
      if (actor === null) return;
      if (path === '/api/events') {
        this.events.open(req, res, actor.name, async () => (await this.options.access.actor(req)) !== null);
        return;
      }
      const route = Object.hasOwn(GET_ROUTES, path) ? GET_ROUTES[path] : undefined;
      if (route === undefined) return reply(res, 404, { error: `no ${path} here` });
      return reply(res, 200, await this.answer(path, url.searchParams, actor, route));
    } catch (error) {
      this.fail(res, method, path, error);
    }
  }

  /** The actor the request's cookie signs in, or null once it has been answered 401 (or 429). */
  private async signedIn(req: IncomingMessage, res: ServerResponse): Promise<DashboardActor | null> {
    const actor = await this.options.access.actor(req);
    if (actor === null) {
      req.resume();
      reply(res, 401, { error: 'sign in first', asks: this.options.access.asks });
      return null;
    }
    const wait = this.options.rateLimit?.(actor.tokenId ?? actor.name) ?? 0;
    if (wait > 0) {
      req.resume();
      reply(res, 429, { error: 'too many requests from this sign-in; try again shortly' }, { 'retry-after': String(wait) });
      return null;
    }
    return actor;
  }

  /** A view's answer, shared while the bus has not moved (and at most a second). */
  private answer(path: string, query: URLSearchParams, actor: DashboardActor, route: (context: ApiContext, query: URLSearchParams) => Promise<unknown>): Promise<unknown> {
    if (!SHARED_VIEWS.has(path)) return route(this.context(actor), query);
    const key = `${actor.place}:${path}?${query.toString()}`;
    const now = Date.now();
    const version = this.options.changes.version;
    const kept = this.answers.get(key);
    if (kept !== undefined && kept.version === version && now - kept.at < ANSWER_KEPT_MS) return kept.value;
    if (this.answers.size > 500) this.answers.clear();
    const value = route(this.context(actor), query);
    const entry = { at: now, version, value };
    this.answers.set(key, entry);
    value.catch(() => {
      if (this.answers.get(key) === entry) this.answers.delete(key);
    });
    return value;
  }

  private async post(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    // A change must come from this dashboard's own page, as JSON (which no plain cross-site form can send).
    if (!sameOrigin(req)) {
      req.resume();
      return reply(res, 403, { error: `changes are taken only from this dashboard's own page (Origin ${JSON.stringify(String(req.headers.origin ?? 'missing')).slice(0, 100)})` });
    }
    if (!String(req.headers['content-type'] ?? '').startsWith('application/json')) {
      req.resume();
      return reply(res, 415, { error: 'send JSON (content-type: application/json)' });
    }
    if (path === '/api/signin') {
      const wait = this.options.rateLimit?.(`signin:${req.socket.remoteAddress ?? ''}`) ?? 0;
      if (wait > 0) {
        req.resume();
        return reply(res, 429, { error: 'too many sign-ins from this address; try again shortly' }, { 'retry-after': String(wait) });
      }
      const body = await this.body(req, res, SIGNIN_LIMIT);
      if (body === null) return;
      const signed = await this.options.access.signIn(typeof body.secret === 'string' ? body.secret : '');
      if (!signed.ok) return reply(res, 401, { error: signed.reason, asks: this.options.access.asks });
      return reply(res, 200, { ok: true }, { 'set-cookie': sessionCookie(req, signed.value) });
    }
    if (path === '/api/signout') {
      req.resume();
      return reply(res, 200, { ok: true }, { 'set-cookie': clearedCookie(req) });
    }
    // Who is asking is known before anything of the body is read.
    const actor = await this.signedIn(req, res);
    if (actor === null) return;
    const route = Object.hasOwn(POST_ROUTES, path) ? POST_ROUTES[path] : undefined;
    if (route === undefined) {
      req.resume();
      return reply(res, 404, { error: `no ${path} here` });
    }
    const body = await this.body(req, res, BODY_LIMIT);
    if (body === null) return;
    const work = (): Promise<unknown> => route(this.context(actor), body);
    const result = await (this.options.within === undefined ? work() : this.options.within(actor, work));
    this.roster = null;
    this.answers.clear();
    return reply(res, 200, result);
  }

  /** The request's JSON body, or null once the request has been answered (and, when too large, cut off). */
  private async body(req: IncomingMessage, res: ServerResponse, limit: number): Promise<Record<string, unknown> | null> {
    const body = await readJson(req, limit);
    if (body === 'too-large') {
      reply(res, 413, { error: `request body over ${limit} bytes` }, { connection: 'close' });
      res.once('finish', () => req.destroy());
      return null;
    }
    if (body === 'not-json') {
      reply(res, 400, { error: 'the body is not a JSON object' });
      return null;
    }
    return body;
  }

  private context(actor: DashboardActor): ApiContext {
    const { bus, env, auditPath, version } = this.options;
    return { bus, env, auditPath, actor, version, fleet: this.options.fleet ?? null, agents: () => this.agents() };
  }

  private fail(res: ServerResponse, method: string, path: string, error: unknown): void {
    if (error instanceof ForbiddenError) return reply(res, 403, { error: error.message });
    if (isStoreUnavailable(error) || error instanceof MissingAssetsError) return reply(res, 503, { error: (error as Error).message }, { 'retry-after': '1' });
    if (error instanceof BusError) return reply(res, 400, { error: error.message });
    this.options.log(`agent-bus web: ${method} ${path}: ${(error as Error).message ?? String(error)}`);
    reply(res, 500, { error: 'the dashboard could not answer; see its log' });
  }

  close(): void {
    this.events.close();
  }
}
