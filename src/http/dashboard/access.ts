/**
 * Who may use the dashboard, and as whom. Locally (`agent-bus web`) a secret
 * made for the run is the key: the printed URL carries it once, and it
 * becomes a session cookie. On the hub the human's own token is the key, and
 * the dashboard acts as the token's agent. Either way the cookie is HttpOnly
 * and SameSite=Strict, and a request that changes something must also come
 * from the dashboard's own origin.
 */
import { hasScope } from '../../core/tokens.js';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Registration, TokenRecord } from '../../model/records.js';

/** The one the dashboard speaks as, and what it may do there. */
export interface DashboardActor {
  name: string;
  /** The roster rows a send writes for the speaker, as every surface's sends do. */
  registrations: Registration[];
  /** Clearing notices for everyone: on the bus's own machine only, as on every other surface. */
  mayClearNotices: boolean;
  /** Releasing anyone's reservations: the person on the bus's own machine, as `agent-bus release --holder` there. */
  mayReleaseReservations: boolean;
  /** Where the dashboard runs, for the page to say. */
  place: 'local' | 'hub';
  /** On the hub: the id of the token signed in with (its audit rows carry it, as every hub request's do). */
  tokenId?: string;
  /** On the hub: whether the token may stop agents and read their logs, which their runners do (its `spawn` scope). */
  mayStart?: boolean;
}

/**
 * The cookie's name for the dashboard a request reached. A browser sends a host's cookies to
 * every port of it, so each port's dashboard names its own: `agent-bus web` and a hub on one
 * machine never overwrite each other's sign-in.
 */
export function cookieName(req: IncomingMessage): string {
  const port = /:(\d+)$/.exec(String(req.headers.host ?? ''))?.[1];
  return port === undefined ? 'agent_bus_dashboard' : `agent_bus_dashboard_${port}`;
}

/** What a request's cookie says the dashboard session is, if anything. */
export function cookieOf(req: IncomingMessage): string | null {
  const header = req.headers.cookie;
  if (typeof header !== 'string') return null;
  const name = cookieName(req);
  for (const part of header.split(';')) {
    const at = part.indexOf('=');
    if (at < 0 || part.slice(0, at).trim() !== name) continue;
    try {
      return decodeURIComponent(part.slice(at + 1).trim());
    } catch {
      return null;
    }
  }
  return null;
}

/**
 * The cookie that signs a browser in: never readable by the page's script, never sent by
 * another site, and behind a proxy that speaks HTTPS to the browser never sent over plain HTTP.
 */
export function sessionCookie(req: IncomingMessage, value: string): string {
  const secure = req.headers['x-forwarded-proto'] === 'https' ? '; Secure' : '';
  return `${cookieName(req)}=${encodeURIComponent(value)}; Path=/; HttpOnly; SameSite=Strict${secure}`;
}

export function clearedCookie(req: IncomingMessage): string {
  return `${cookieName(req)}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0`;
}

/**
 * Whether a request that changes something came from the dashboard's own page: an Origin
 * header (every browser sends one with a POST) naming the host the request was sent to (or, behind
 * a proxy, the host it forwarded: a page elsewhere cannot set that header without a preflight this
 * server never grants). A page elsewhere has another origin; a rebinding of another name to this
 * address has no cookie, and locally its Host is refused first.
 */
export function sameOrigin(req: IncomingMessage): boolean {
  const origin = req.headers.origin;
  if (typeof origin !== 'string' || origin === 'null') return false;
  return [req.headers.host, req.headers['x-forwarded-host']].some((host) => typeof host === 'string' && host !== '' && (origin === `http://${host}` || origin === `https://${host}`));
}

/** How a dashboard tells who is asking. */
export interface DashboardAccess {
  /** The actor a request's cookie signs in, or null (401). */
  actor(req: IncomingMessage): Promise<DashboardActor | null>;
  /** What the sign-in form sends (a key or a token): the cookie's value, or why not. */
  signIn(presented: string): Promise<{ ok: true; value: string } | { ok: false; reason: string }>;
  /** What the sign-in form asks for. */
  readonly asks: 'key' | 'token';
}

function sameSecret(presented: string, secret: string): boolean {
  const a = Buffer.from(presented);
  const b = Buffer.from(secret);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** `agent-bus web`: one key for the run; every signed-in browser is the local human. */
export function localAccess(actor: Omit<DashboardActor, 'place'>, key = randomBytes(24).toString('base64url')): DashboardAccess & { key: string } {
  const signedIn: DashboardActor = { ...actor, place: 'local' };
  return {
    key,
    asks: 'key',
    async actor(req) {
      const presented = cookieOf(req);
      return presented !== null && sameSecret(presented, key) ? signedIn : null;
    },
    async signIn(presented) {
      return sameSecret(presented.trim(), key) ? { ok: true, value: key } : { ok: false, reason: 'that is not the key this dashboard printed' };
    },
  };
}

export type TokenCheck = (presented: string) => Promise<{ ok: true; token: TokenRecord } | { ok: false; reason: string }>;

/** The hub: the cookie holds the human's token, checked at every request as every hub request is. */
export function tokenAccess(check: TokenCheck, registrationsOf: (token: TokenRecord) => Registration[]): DashboardAccess {
  return {
    asks: 'token',
    async actor(req) {
      const presented = cookieOf(req);
      if (presented === null) return null;
      const result = await check(presented);
      if (!result.ok) return null;
      return { name: result.token.agent, registrations: registrationsOf(result.token), mayClearNotices: false, mayReleaseReservations: false, place: 'hub', tokenId: result.token.tokenId, mayStart: hasScope(result.token, 'spawn') };
    },
    async signIn(presented) {
      const result = await check(presented.trim());
      return result.ok ? { ok: true, value: presented.trim() } : { ok: false, reason: result.reason };
    },
  };
}
