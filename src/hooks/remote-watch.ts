/**
 * `hook-watch` on a machine without the database: it holds a request open at
 * the hub (POST /v1/watch), which answers when mail for the token's agent
 * arrives anywhere on the bus, and asks again until its time is up. Exits 10
 * with the mail on stderr, as a local watcher does; 0 when it gives up.
 */
import { WOKE_EXIT, type WatchRun } from './watch.js';
import { HubUnreachable } from '../remote/http.js';
import { postToHub } from '../remote/calls.js';
import { confirmDelivered } from '../remote/delivered.js';
import type { HubAccess } from '../adapters/hub-access.js';
import { HUB_PATHS, type WatchAnswer } from '../protocol/hub.js';

/** One wait at the hub: long enough to be cheap, short enough that no proxy cuts it. */
const WAIT_SECONDS = 25;
/** How long the hub may take to note the mail said. */
const CONFIRM_TIMEOUT_MS = 5_000;
/** After a failed request, how long before asking again. */
const RETRY_MS = 2_000;
/**
 * How often the watcher looks whether the client that started it is still there. The hub takes
 * the mail it hands over, so a watcher left behind by a client that quit would take mail no model
 * will see: once its parent is gone it ends its wait at the hub (which then takes nothing) and exits.
 */
const PARENT_CHECK_MS = 100;

/** `sessionKey`: the client's id for the session (which session of a client address's token waits). */
export async function runRemoteWatch(run: WatchRun, access: HubAccess, maxMs: number, sessionKey: string | null): Promise<number> {
  const deadline = Date.now() + maxMs;
  const stopped = new AbortController();
  const stop = (): void => stopped.abort();
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  process.once('SIGHUP', stop);
  // A child whose parent exits is handed to another process: its parent id changes.
  const parent = process.ppid;
  const watchParent = setInterval(() => {
    if (process.ppid !== parent) stop();
  }, PARENT_CHECK_MS);
  try {
    return await waitAtHub(run, access, deadline, sessionKey, stopped.signal);
  } finally {
    clearInterval(watchParent);
  }
}

async function waitAtHub(run: WatchRun, access: HubAccess, deadline: number, sessionKey: string | null, stopped: AbortSignal): Promise<number> {
  while (!stopped.aborted && Date.now() < deadline) {
    const wait = Math.min(WAIT_SECONDS, Math.max(0, (deadline - Date.now()) / 1000));
    try {
      // Ending the request ends the hub's wait: it takes nothing for a watcher that is gone.
      const reply = await postToHub(access, HUB_PATHS.watch, { wait_seconds: wait, session_key: sessionKey }, (wait + 15) * 1000, stopped);
      if (reply.status === 401 || reply.status === 403) return 0; // A token the hub no longer takes: nothing to wait for.
      const body = reply.body as Partial<WatchAnswer> | null;
      // Its MCP server (a relay to the hub) wakes the session through the client's socket: nothing to wait for.
      if (reply.status === 200 && body?.socket === true) return 0;
      if (reply.status === 200 && body?.woke === true) {
        // Said, and only then delivered: a watcher killed before saying it confirms nothing.
        const delivery = body.delivery ?? null;
        try {
          if (typeof body.text === 'string') run.say(body.text);
        } catch (error) {
          if (delivery !== null) await confirmDelivered(access, { delivery, session_key: sessionKey, printed: false }, CONFIRM_TIMEOUT_MS, run);
          throw error;
        }
        if (delivery !== null) await confirmDelivered(access, { delivery, session_key: sessionKey, printed: true }, CONFIRM_TIMEOUT_MS, run);
        return WOKE_EXIT;
      }
      if (reply.status === 200) continue;
    } catch (error) {
      if (!(error instanceof HubUnreachable)) throw error;
    }
    if (stopped.aborted) return 0;
    await new Promise((resolve) => setTimeout(resolve, Math.min(RETRY_MS, Math.max(0, deadline - Date.now()))));
  }
  return 0;
}
