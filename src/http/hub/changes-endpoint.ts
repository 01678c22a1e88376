/**
 * `POST /v1/changes`: a remote chat, or a sender waiting on its receipts, waits here for the bus to
 * move. Answered at once with where the hub's change feed stands, unless `since` is that very
 * place: then when it moves, or `wait_seconds` (at most 50) pass, or the asker goes away.
 */
import type { EndpointResponse } from '../../protocol/hub.js';
import type { SharedChanges } from '../waits.js';
import type { HubMetrics } from './metrics.js';
import { MAX_WAIT_SECONDS } from './watch-endpoint.js';

export async function waitForChange(changes: SharedChanges, metrics: HubMetrics, body: unknown, signal: AbortSignal): Promise<EndpointResponse<'/v1/changes'>> {
  const since = (body as { since?: unknown } | null)?.since;
  const wait = (body as { wait_seconds?: unknown } | null)?.wait_seconds;
  if (since === changes.version) {
    metrics.waitsOpen++;
    try {
      await changes.next(Math.min(typeof wait === 'number' && wait >= 0 ? wait : 25, MAX_WAIT_SECONDS) * 1000, signal);
    } finally {
      metrics.waitsOpen--;
    }
  }
  return { version: changes.version };
}
