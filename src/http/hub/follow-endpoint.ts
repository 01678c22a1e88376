/**
 * `POST /v1/follow`: what a remote `tail -f` asks for. The sends the bus stored
 * past a position (and at positions the follower saw skipped), as audit rows
 * with their positions; the request is held until there are some or
 * `wait_seconds` (at most 50) pass. With no position, the newest one, at once.
 */
import type { FollowAnswer } from '../../protocol/hub.js';
import type { Bus } from '../../core/bus.js';
import { InvalidInputError } from '../../model/errors.js';
import type { HubMetrics } from './metrics.js';
import type { SharedChanges } from '../waits.js';
import { MAX_WAIT_SECONDS } from './watch-endpoint.js';

const BATCH = 500;

function positions(value: unknown, field: string, many: boolean): number[] {
  const list = many ? value : [value];
  if (!Array.isArray(list) || list.length > 1_000 || list.some((item) => !Number.isSafeInteger(item) || (item as number) < 0)) {
    throw new InvalidInputError(`${field} must be ${many ? 'a list of positions' : 'a position'} (whole numbers of at least 0)`);
  }
  return list as number[];
}

export async function followSends(bus: Bus, changes: SharedChanges, metrics: HubMetrics, body: unknown, signal: AbortSignal): Promise<FollowAnswer> {
  const request = (body ?? {}) as { after?: unknown; also?: unknown; wait_seconds?: unknown };
  if (request.after === undefined || request.after === null) return { position: await bus.mail.lastPosition(), rows: [] };
  const [after] = positions(request.after, 'after', false) as [number];
  const also = request.also === undefined ? [] : positions(request.also, 'also', true);
  const wait = typeof request.wait_seconds === 'number' && request.wait_seconds >= 0 ? Math.min(request.wait_seconds, MAX_WAIT_SECONDS) : 25;
  const deadline = Date.now() + wait * 1000;
  metrics.waitsOpen++;
  try {
    for (;;) {
      const next = changes.next(deadline - Date.now(), signal);
      const found = await bus.mail.byPosition(after, also, BATCH);
      if (found.length > 0 || signal.aborted || changes.closed || Date.now() >= deadline) {
        return {
          position: Math.max(after, ...found.map((message) => message.position)),
          rows: found.map(({ position, ...message }) => ({ position, row: bus.mail.sendRow(message) })),
        };
      }
      await next;
    }
  } finally {
    metrics.waitsOpen--;
  }
}
