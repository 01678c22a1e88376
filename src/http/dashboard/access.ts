/**
 * Who may use the dashboard, and as whom. Locally (`agent-bus web`) a secret
 * made for the run is the key: the printed URL carries it once, and it
 * becomes a session cookie. On the hub the human's own token is the key, and
 * the dashboard acts as the token's agent. Either way the cookie is HttpOnly
 * and SameSite=Strict, and a request that changes something must also come
 * from the dashboard's own origin.
 */
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
  /** Where the dashboard runs, for the page to say. */
  place: 'local' | 'hub';
  /** On the hub: the id of the token signed in with (its audit rows carry it, as every hub request's do). */
  tokenId?: string;
}

export const COOKIE = 'agent_bus_dashboard';

/** What a request's cookie header says the dashboard session is, if anything. */
export function cookieOf(req: IncomingMessage, name = COOKIE): string | null {
  const header = req.headers.cookie;
  if (typeof header !== 'string') return null;
  for (const part of header.split(';')) {
    const at = part.indexOf('=');
    if (at < 0) continue;
    if (part.slice(0, at).trim() === name) {
      try {
        return decodeURIComponent(part.slice(at + 1).trim());
      } catch {
        return null;
      }
    }
  }
  return null;
}

/** The cookie that signs a browser in: never readable by the page's script, never sent by another site. */
export function sessionCookie(value: string): string {
  return `${COOKIE}=${encodeURIComponent(value)}; Path=/; HttpOnly; SameSite=Strict`;
}

/** Behind a proxy that speaks HTTPS to the browser, the cookie is also Secure: never sent over plain HTTP. */
export function forRequest(cookie: string, req: IncomingMessage): string {
  return req.headers['x-forwarded-proto'] === 'https' ? `${cookie}; Secure` : cookie;
}

export function clearedCookie(): string {
  return `${COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0`;
}

/**
 * Whether a request that changes something came from the dashboard's own page: an Origin
 * header (every browser sends one with a POST) naming the host the request was sent to, or
 * one of `trusted`. A page elsewhere, or a rebinding of another name to this address, has
 * another origin or no cookie.
 */
export function sameOrigin(req: IncomingMessage, trusted: ReadonlySet<string>): boolean {
  const origin = req.headers.origin;
  const host = req.headers.host;
  if (typeof origin !== 'string' || origin === 'null') return false;
  if (trusted.has(origin)) return true;
  return typeof host === 'string' && (origin === `http://${host}` || origin === `https://${host}`);
}

/** How a dashboard tells who is asking. */
export interface DashboardAccess {
  /** The actor a request's cookie signs in, or null (401). */
  actor(req: IncomingMessage): Promise<DashboardActor | null>;
  /** What the sign-in form sends (a key or a token): the cookie value to set, or why not. */
  signIn(presented: string): Promise<{ ok: true; cookie: string } | { ok: false; reason: string }>;
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
      return sameSecret(presented.trim(), key) ? { ok: true, cookie: sessionCookie(key) } : { ok: false, reason: 'that is not the key this dashboard printed' };
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
      return { name: result.token.agent, registrations: registrationsOf(result.token), mayClearNotices: false, place: 'hub', tokenId: result.token.tokenId };
    },
    async signIn(presented) {
      const result = await check(presented.trim());
      return result.ok ? { ok: true, cookie: sessionCookie(presented.trim()) } : { ok: false, reason: result.reason };
    },
  };
}
