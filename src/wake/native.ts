/** Whether an idle session is woken natively (by its own watcher or its MCP server), and if not, why. */
import { profileFor } from '../clients/registry/profiles.js';
import type { Wakes } from '../core/wake-ops.js';
import { stampToMillis } from '../model/clock.js';
import { processRuns } from '../adapters/procs.js';
import type { MessageRecord } from '../model/records.js';
import { setting, type Env } from '../model/settings.js';

/** Why a session is not woken natively at all, or null when it is. */
export function watchRefusal(client: string | undefined, env: Env): string | null {
  if (!setting(env, 'AGENT_BUS_NATIVE_WAKE')) return 'native wake is off (AGENT_BUS_NATIVE_WAKE=0)';
  // A client that would wait for background hooks in the foreground outside an interactive session
  // (Claude Code's print mode and SDK runs): only an interactive session is woken.
  const profile = profileFor(client);
  const interactive = profile.wake.kind === 'watch' ? profile.wake.interactive : null;
  if (interactive !== null && (env[interactive.variable] ?? '').trim() !== interactive.value) {
    return `not an interactive ${profile.name} session (${interactive.variable} is not ${interactive.value})`;
  }
  return null;
}

/**
 * How long a watcher row of a process on another machine (a relay's, pid 0, set at a hub) counts
 * as running after it was last said: the relay says it again every minute while it waits.
 */
export const REMOTE_WATCHER_FRESH_MS = 3 * 60_000;

/** Whether a watcher row's process still runs: one of this machine by its pid, a relay elsewhere by when it last said so. */
export function watcherRuns(watcher: { pid: number; startedAt: string }, nowMs = Date.now()): boolean {
  if (watcher.pid > 0) return processRuns(watcher.pid);
  return nowMs - stampToMillis(watcher.startedAt) < REMOTE_WATCHER_FRESH_MS;
}

/** Whether the session reading as `reader` is woken through its inbox socket by a running MCP server (or relay): its hook-watch steps aside. */
export async function socketWatching(wakes: Wakes, reader: string): Promise<boolean> {
  return (await wakes.watchers()).some((watcher) => watcher.way === 'socket' && watcher.agent === reader && watcherRuns(watcher));
}

/** The fields of a message view an audit row needs. */
export function viewRecord(view: unknown): MessageRecord {
  const message = view as { message_id: string; from: string; to: string; body: string; thread_id: string; sent_at: string; addressed_to: string | null };
  return {
    messageId: message.message_id,
    fromAgent: message.from,
    toAgent: message.to,
    body: message.body,
    threadId: message.thread_id,
    sentAt: message.sent_at,
    readAt: null,
    deliveredAt: null,
    addressedTo: message.addressed_to,
    fanoutId: null,
    toGroup: null,
    claimedBy: null,
    deliveredVia: null,
    readVia: null,
    priority: null,
    taskId: null,
    taskState: null,
  };
}
