/**
 * `POST /v1/watch`: a remote `hook-watch` waits here for its agent's mail. The
 * request is held until mail comes (it is taken, as a local watcher takes it,
 * and its text returned) or `wait_seconds` pass: at most 50, so no proxy or
 * client gives up on a silent request first. The watcher asks again.
 */
import type { Bus } from '../../core/bus.js';
import type { PendingDelivery } from '../../core/inbox-ops.js';
import type { Env } from '../../model/settings.js';
import { InvalidInputError } from '../../model/errors.js';
import type { TokenRecord } from '../../model/records.js';
import { wakeIfMail } from '../../hooks/watch.js';
import { socketWatching } from '../../wake/native.js';
import { hubSpeaker, type SessionsRead } from './hub-session.js';
import { sessionKeyArg } from './request-args.js';
import type { HubMetrics } from './metrics.js';
import type { SharedChanges } from '../waits.js';
import type { WatchAnswer } from '../../protocol/hub.js';

export const MAX_WAIT_SECONDS = 50;

export async function watchForMail(
  bus: Bus,
  env: Env,
  changes: SharedChanges,
  metrics: HubMetrics,
  token: TokenRecord,
  body: unknown,
  signal: AbortSignal,
  sessions: SessionsRead | null = null,
  pinned: string | null = null,
): Promise<WatchAnswer> {
  const raw = (body as { wait_seconds?: unknown } | null)?.wait_seconds ?? 25;
  if (typeof raw !== 'number' || !Number.isFinite(raw) || raw < 0) throw new InvalidInputError('wait_seconds must be a number of seconds');
  // A client address's session waits for the mail of the session address its session id holds.
  const sessionKey = sessionKeyArg((body as { session_key?: unknown } | null)?.session_key);
  const reader = (await hubSpeaker(bus, env, token, sessionKey, sessions, pinned))?.name ?? token.agent;
  const deadline = Date.now() + Math.min(raw, MAX_WAIT_SECONDS) * 1000;
  metrics.waitsOpen++;
  try {
    for (;;) {
      // A watcher that went away takes nothing: its mail waits for the next turn's hook.
      if (signal.aborted) return { woke: false, text: null, delivery: null };
      const next = changes.next(deadline - Date.now(), signal);
      // A relay on the session's machine wakes it through its client's socket: no watcher need wait.
      if (await socketWatching(bus.wakes, reader)) return { woke: false, text: null, delivery: null, socket: true };
      let text = '';
      let delivery: PendingDelivery | null = null;
      // The watcher confirms the mail once it has printed it (POST /v1/delivered): until then it is leased.
      const outcome = await wakeIfMail(bus, { env, say: (said) => (text += said), defer: (pending) => (delivery = pending) }, reader);
      if (outcome !== null) return { woke: outcome > 0, text: text === '' ? null : text, delivery };
      if (signal.aborted || changes.closed || Date.now() >= deadline) return { woke: false, text: null, delivery: null };
      await next;
    }
  } finally {
    metrics.waitsOpen--;
  }
}
