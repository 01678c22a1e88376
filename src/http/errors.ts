/**
 * How the hub and the dashboard answer: JSON, never cached, and an error as `{error,
 * error_description}` with the status that says what went wrong.
 */
import type { ServerResponse } from 'node:http';
import { BusError, errorKind, isStoreUnavailable } from '../model/errors.js';
import { ERROR_KIND_KEY } from '../protocol/hub.js';

/** A valid token asking for what it may not: 403. */
export class ForbiddenError extends BusError {}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent) return;
  const text = `${JSON.stringify(body)}\n`;
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers });
  res.end(text);
}

/** A missing, bad, expired or revoked token. No resource_metadata: no client should start an OAuth flow. */
export function unauthorized(res: ServerResponse, description: string): void {
  sendJson(res, 401, { error: 'invalid_token', error_description: description }, { 'www-authenticate': 'Bearer realm="agent-bus", error="invalid_token"' });
}

/**
 * The answer to what an operation threw, when the request's own fault: 403 for what the token may
 * not do, 400 for any other refusal the bus explains. False for what is the hub's trouble (the store
 * out of reach, a bug): the caller answers 503 or 500 and logs it.
 */
export function answerRefusal(res: ServerResponse, error: unknown): boolean {
  if (!(error instanceof BusError) || isStoreUnavailable(error)) return false;
  if (error instanceof ForbiddenError) sendJson(res, 403, { error: 'forbidden', error_description: error.message });
  else sendJson(res, 400, { error: 'invalid_request', error_description: error.message, [ERROR_KIND_KEY]: errorKind(error) });
  return true;
}

/** The answer to a failure that is not the request's: the store out of reach (503, try again), else 500. */
export function answerFailure(res: ServerResponse, error: unknown, log: (line: string) => void, what: string): void {
  if (isStoreUnavailable(error)) {
    sendJson(res, 503, { error: 'store_unavailable', error_description: (error as Error).message }, { 'retry-after': '1' });
    return;
  }
  log(`agent-bus hub: ${what}: ${(error as Error).message ?? String(error)}`);
  sendJson(res, 500, { error: 'internal', error_description: 'the hub could not answer; see its log' });
}
