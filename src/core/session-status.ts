/**
 * What a session's status line shows of it: its name, its unread mail, the live notices it
 * receives, where its turn stands (working, idle, waiting; unknown where its hooks have said
 * nothing) and the task in hand. One answer, on this machine and at the hub alike.
 */
import type { PresenceState } from '../model/records.js';
import type { Bus } from './bus.js';
import { receivedCounts } from './notice-ops.js';
import type { Subscriptions } from './subscriptions.js';

export interface SessionStatus {
  /** The name the session reads as. */
  name: string;
  pending_mail: number;
  notices: { critical: number; alert: number; info: number };
  state: PresenceState;
  state_since: string | null;
  /** The oldest task it took and has not closed. */
  task: { id: string; title: string } | null;
}

export async function sessionStatus(bus: Bus, reader: string, subscriptions: Subscriptions): Promise<SessionStatus> {
  const [pending, channels, noted, held] = await Promise.all([bus.inbox.pending(reader), bus.notices.channels(), bus.presence.of(reader), bus.tasks.heldBy(reader)]);
  const [task] = held;
  return {
    name: reader,
    pending_mail: pending,
    notices: receivedCounts(channels, subscriptions),
    state: noted?.state ?? 'unknown',
    state_since: noted?.since ?? null,
    task: task === undefined ? null : { id: task.id, title: task.title },
  };
}
