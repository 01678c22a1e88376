/**
 * Who is asking the hub: a bearer token, checked at every request (a revoked token stops working at
 * once), and the only thing that says who speaks. /metrics is open to this machine and, elsewhere,
 * to a token with the metrics scope.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Bus } from '../../core/bus.js';
import { hasScope } from '../../core/tokens.js';
import type { TokenRecord } from '../../model/records.js';
import type { TokenCheck } from '../dashboard/access.js';
import { sendJson, unauthorized } from '../errors.js';
import type { HubMetrics } from './metrics.js';

const BEARER = /^Bearer\s+(\S+)\s*$/i;

const TOKEN_PROBLEMS = { malformed: 'that is not an agent-bus token', unknown: 'no such token', expired: 'the token has expired', revoked: 'the token was revoked' } as const;

/** The token a request presents, if any (not yet checked). */
export function presentedToken(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  return typeof header === 'string' ? BEARER.exec(header)?.[1] : undefined;
}

/** A token's check, counted in the metrics when it passes; the dashboard signs in with the same. */
export function tokenChecker(bus: Bus, metrics: HubMetrics): TokenCheck {
  return async (presented) => {
    const check = await bus.tokens.check(presented);
    if (!check.ok) return { ok: false, reason: TOKEN_PROBLEMS[check.reason] };
    metrics.tokenUsed(check.token.tokenId);
    return { ok: true, token: check.token };
  };
}

/** The request's token, checked; null when it has none or a bad one (answered 401 here). */
export async function authenticate(checkToken: TokenCheck, req: IncomingMessage, res: ServerResponse): Promise<TokenRecord | null> {
  const presented = presentedToken(req);
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

function isLoopback(address: string | undefined): boolean {
  return address !== undefined && (address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.'));
}

/** Whether this request may read /metrics; when not, it has been answered (401 or 403). */
export async function mayReadMetrics(checkToken: TokenCheck, req: IncomingMessage, res: ServerResponse): Promise<boolean> {
  if (isLoopback(req.socket.remoteAddress)) return true;
  const token = await authenticate(checkToken, req, res);
  if (token === null) return false;
  if (hasScope(token, 'metrics')) return true;
  sendJson(res, 403, { error: 'insufficient_scope', error_description: 'this token may not read /metrics (agent-bus token create NAME --scope metrics)' }, {
    'www-authenticate': 'Bearer realm="agent-bus", error="insufficient_scope", scope="metrics"',
  });
  return false;
}
