/**
 * Socket wake's desk at a hub: a relay on the agent's machine (`serve` there) waits on the hub's change
 * feed and asks the hub, one call each, where its session's mail stands, whether it may nudge, and
 * records what came of it; the hub answers for the token's agent, or the session the conversation id
 * holds, and never another. The relay itself posts into the client's socket.
 */
import type { HubAccess } from '../adapters/hub-access.js';
import type { NudgeDesk } from '../core/wake-ops.js';
import { randomId } from '../model/ids.js';
import { callHubOp } from './calls.js';
import { HubChangeFeed } from './changes.js';

/**
 * How often the relay says again that it watches: the hub takes a relay's row as gone three minutes
 * after it was last said (wake/native.ts), since it cannot see a process on another machine.
 */
export const RELAY_HEARTBEAT_MS = 60_000;

export function hubNudgeDesk(access: HubAccess, sessionKey: string | null): NudgeDesk {
  // Which relay holds the row: a newer one of the same conversation replaces it.
  const watcher = randomId();
  const session_key = sessionKey;
  return {
    heartbeatMs: RELAY_HEARTBEAT_MS,
    // The hub holds each wait until its feed moves: a long one costs nothing in how soon mail is seen.
    waitMs: 25_000,
    changes: () => new HubChangeFeed(access),
    nowMicros: () => Date.now() * 1000,
    look: () => callHubOp(access, 'wake.look', { session_key }),
    claimShared: (message_id) => callHubOp(access, 'wake.claim', { session_key, message_id }),
    // The hub's limit: it counts the wake, and the asking machine's setting does not apply.
    allow: () => callHubOp(access, 'wake.allow', { session_key }),
    note: async (_reader, message, status) => {
      await callHubOp(access, 'wake.note', { session_key, message_id: message.message_id, status });
    },
    watch: async () => {
      await callHubOp(access, 'wake.watch', { session_key, watcher, state: 'socket', note: null });
    },
    giveUp: async (reason) => {
      await callHubOp(access, 'wake.watch', { session_key, watcher, state: 'refused', note: reason });
    },
    stop: async () => {
      await callHubOp(access, 'wake.watch', { session_key, watcher, state: 'stopped', note: null });
    },
  };
}
