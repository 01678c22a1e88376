/**
 * `POST /v1/delivered`: a remote hook or watcher printed the mail the hub
 * handed it, and says so (`printed: true`). The hub marks it read and delivered
 * now, not when it answered: a remote hook that died (or gave up on a slow hub)
 * before printing confirms nothing, the mail's lease runs out, and a later turn
 * shows it again. One that could not print says so (`printed: false`) and the
 * mail is given back at once. Only what the take still holds is touched: rows
 * under its lease, addressed to the token's reader.
 */
import type { Bus } from '../../core/bus.js';
import type { PendingDelivery } from '../../core/inbox-ops.js';
import type { Env } from '../../model/settings.js';
import { InvalidInputError } from '../../model/errors.js';
import type { TokenRecord } from '../../model/records.js';
import { hubSpeaker, type SessionsRead } from './hub-session.js';
import { sessionKeyArg } from './request-args.js';
import type { EndpointResponse } from '../../protocol/hub.js';

/** The ways a remote surface confirms: the hooks' and the watcher's. */
const REMOTE_WAYS = new Set(['hook-user-prompt', 'hook-stop', 'hook-pre-tool', 'hook-watch']);
const MAX_IDS = 1_000;
const MAX_TEXT = 200;

function ids(value: unknown, field: string): string[] {
  if (!Array.isArray(value) || value.length > MAX_IDS || value.some((id) => typeof id !== 'string' || id.length > MAX_TEXT)) {
    throw new InvalidInputError(`delivery.${field} must be a list of at most ${MAX_IDS} ids`);
  }
  return value as string[];
}

/** A pending delivery as the hub handed it out, checked: anything else is a 400. */
export function pendingDeliveryArg(value: unknown): PendingDelivery {
  const given = (value ?? null) as Record<string, unknown> | null;
  if (given === null || typeof given !== 'object') throw new InvalidInputError('delivery is required: what the hub answered the hook or watch with');
  if (typeof given.via !== 'string' || !REMOTE_WAYS.has(given.via)) throw new InvalidInputError(`delivery.via must be one of ${[...REMOTE_WAYS].join(', ')}`);
  if (typeof given.lease !== 'string' || given.lease === '' || given.lease.length > MAX_TEXT) throw new InvalidInputError('delivery.lease must be the lease the hub handed out');
  return {
    via: given.via as PendingDelivery['via'],
    lease: given.lease,
    message_ids: ids(given.message_ids, 'message_ids'),
    claims: ids(given.claims, 'claims'),
    settle: ids(given.settle, 'settle'),
    contested: ids(given.contested, 'contested'),
  };
}

export async function confirmRemoteDelivery(
  bus: Bus,
  env: Env,
  token: TokenRecord,
  body: unknown,
  sessions: SessionsRead | null = null,
  pinned: string | null = null,
): Promise<EndpointResponse<'/v1/delivered'>> {
  const request = (body ?? {}) as { delivery?: unknown; session_key?: unknown; printed?: unknown };
  const pending = pendingDeliveryArg(request.delivery);
  if (typeof request.printed !== 'boolean') throw new InvalidInputError('printed must be true (the mail was printed) or false (give it back)');
  // The reader is the token's (or the session address its session id holds), never one the request names.
  const reader = (await hubSpeaker(bus, env, token, sessionKeyArg(request.session_key), sessions, pinned))?.name ?? token.agent;
  if (!request.printed) {
    await bus.inbox.giveBack(reader, pending);
    return { marked: 0 };
  }
  return { marked: (await bus.inbox.confirm(reader, pending)).length };
}
