/**
 * The dashboard over HTTP: its files, its sign-in, its API and its live feed,
 * mounted by `agent-bus web` on its own listener and by the hub beside /mcp.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Bus } from '../../core/bus.js';
import type { Env } from '../../core/settings.js';
import type { AgentView } from '../../core/views.js';
import { BusError, isStoreUnavailable } from '../../model/errors.js';
import { ForbiddenError } from '../call-endpoint.js';
import type { SharedChanges } from '../waits.js';
import { clearedCookie, forRequest, sameOrigin, type DashboardAccess, type DashboardActor } from './access.js';
import { GET_ROUTES, POST_ROUTES, type ApiContext } from './api.js';
import { isAssetPath, MissingAssetsError, SECURITY_HEADERS, serveAsset } from './assets.js';
import { DashboardEvents } from './events.js';

export interface DashboardOptions {
  bus: Bus;
  env: Env;
  auditPath: string;
  access: DashboardAccess;
  changes: SharedChanges;
  version: string;
  /** Origins besides the dashboard's own that may make changes (AGENT_BUS_HTTP_ORIGINS on the hub). */
  trustedOrigins?: ReadonlySet<string>;
  log(line: string): void;
  /** Runs each change a signed-in actor asks for (the hub stamps its audit rows with the token). */
  within?<T>(actor: DashboardActor, work: () => Promise<T>): Promise<T>;
}

const BODY_LIMIT = 1 << 20;
const ROSTER_KEPT_MS = 2_000;

function reply(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent) return;
  const text = `${JSON.stringify(body)}\n`;
  res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers });
  res.end(text);
}

function readJson(req: IncomingMessage): Promise<Record<string, unknown> | 'too-large' | 'not-json'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > BODY_LIMIT) over = true;
      else chunks.push(chunk);
    });
    req.on('end', () => {
      if (over) return resolve('too-large');
      const raw = Buffer.concat(chunks).toString('utf8');
      try {
        const value: unknown = raw.trim() === '' ? {} : JSON.parse(raw);
        resolve(value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : 'not-json');
      } catch {
        resolve('not-json');
      }
    });
    req.on('error', reject);
  });
}

export class Dashboard {
  private readonly events: DashboardEvents;
  private roster: { at: number; agents: Promise<AgentView[]> } | null = null;
  private readonly trusted: ReadonlySet<string>;

  constructor(private readonly options: DashboardOptions) {
    this.events = new DashboardEvents(options.auditPath, options.changes);
    this.trusted = options.trustedOrigins ?? new Set();
  }

  /** Whether a path is the dashboard's. */
  static owns(path: string): boolean {
    return isAssetPath(path) || path.startsWith('/api/');
  }

  private agents(): Promise<AgentView[]> {
    const now = Date.now();
    if (this.roster === null || now - this.roster.at > ROSTER_KEPT_MS) {
      const agents = this.options.bus.agents();
      agents.catch(() => (this.roster = null));
      this.roster = { at: now, agents };
    }
    return this.roster.agents;
  }

  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://dashboard');
    const path = url.pathname;
    const method = req.method ?? 'GET';
    try {
      if (isAssetPath(path)) {
        if (method !== 'GET' && method !== 'HEAD') return reply(res, 405, { error: 'GET only' }, { allow: 'GET, HEAD' });
        const key = url.searchParams.get('key');
        if (path === '/' && key !== null) {
          // The printed URL: its key becomes the cookie, and the address bar loses it.
          const signed = await this.options.access.signIn(key);
          if (signed.ok) {
            res.writeHead(303, { ...SECURITY_HEADERS, location: '/', 'set-cookie': forRequest(signed.cookie, req), 'cache-control': 'no-store' });
            res.end();
            return;
          }
        }
        return serveAsset(req, res, path);
      }
      if (method === 'POST') return await this.post(req, res, path);
      if (method !== 'GET') return reply(res, 405, { error: 'GET or POST only' }, { allow: 'GET, POST' });
      const actor = await this.options.access.actor(req);
      if (actor === null) return reply(res, 401, { error: 'sign in first', asks: this.options.access.asks });
      if (path === '/api/events') {
        this.events.open(res);
        return;
      }
      const route = Object.hasOwn(GET_ROUTES, path) ? GET_ROUTES[path] : undefined;
      if (route === undefined) return reply(res, 404, { error: `no ${path} here` });
      return reply(res, 200, await route(this.context(actor), url.searchParams));
    } catch (error) {
      this.fail(res, method, path, error);
    }
  }

  private async post(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    // A change must come from this dashboard's own page, as JSON (which no plain cross-site form can send).
    if (!sameOrigin(req, this.trusted)) {
      req.resume();
      return reply(res, 403, { error: `changes are taken only from this dashboard's own page (Origin ${JSON.stringify(req.headers.origin ?? 'missing')})` });
    }
    if (!String(req.headers['content-type'] ?? '').startsWith('application/json')) {
      req.resume();
      return reply(res, 415, { error: 'send JSON (content-type: application/json)' });
    }
    const body = await readJson(req);
    if (body === 'too-large') return reply(res, 413, { error: `request body over ${BODY_LIMIT} bytes` });
    if (body === 'not-json') return reply(res, 400, { error: 'the body is not a JSON object' });
    if (path === '/api/signin') {
      const signed = await this.options.access.signIn(typeof body.secret === 'string' ? body.secret : '');
      if (!signed.ok) return reply(res, 401, { error: signed.reason, asks: this.options.access.asks });
      return reply(res, 200, { ok: true }, { 'set-cookie': forRequest(signed.cookie, req) });
    }
    if (path === '/api/signout') return reply(res, 200, { ok: true }, { 'set-cookie': clearedCookie() });
    const actor = await this.options.access.actor(req);
    if (actor === null) return reply(res, 401, { error: 'sign in first', asks: this.options.access.asks });
    const route = Object.hasOwn(POST_ROUTES, path) ? POST_ROUTES[path] : undefined;
    if (route === undefined) return reply(res, 404, { error: `no ${path} here` });
    const work = (): Promise<unknown> => route(this.context(actor), body);
    const result = await (this.options.within === undefined ? work() : this.options.within(actor, work));
    this.roster = null;
    return reply(res, 200, result);
  }

  private context(actor: ApiContext['actor']): ApiContext {
    const { bus, env, auditPath, version } = this.options;
    return { bus, env, auditPath, actor, version, agents: () => this.agents() };
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
