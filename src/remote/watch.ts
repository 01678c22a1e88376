/**
 * `hook-watch` on a machine without the database: it holds a request open at
 * the hub (POST /v1/watch), which answers when mail for the token's agent
 * arrives anywhere on the bus, and asks again until its time is up. Exits 10
 * with the mail on stderr, as a local watcher does; 0 when it gives up.
 */
import { WOKE_EXIT, type WatchRun } from '../wake/watch.js';
import { hubRequest, HubUnreachable } from './http.js';
import type { HubAccess } from './settings.js';

/** One wait at the hub: long enough to be cheap, short enough that no proxy cuts it. */
const WAIT_SECONDS = 25;
/** After a failed request, how long before asking again. */
const RETRY_MS = 2_000;

/** `sessionKey`: the client's id for the session (which session of a client address's token waits). */
export async function runRemoteWatch(run: WatchRun, access: HubAccess, maxMs: number, sessionKey: string | null): Promise<number> {
  const deadline = Date.now() + maxMs;
  let stopping = false;
  const stop = (): void => {
    stopping = true;
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  process.once('SIGHUP', stop);
  while (!stopping && Date.now() < deadline) {
    const wait = Math.min(WAIT_SECONDS, Math.max(0, (deadline - Date.now()) / 1000));
    try {
      const response = await hubRequest(access, 'POST', '/v1/watch', { wait_seconds: wait, session_key: sessionKey }, (wait + 15) * 1000);
      if (response.status === 401 || response.status === 403) return 0; // A token the hub no longer takes: nothing to wait for.
      const body = response.body as { woke?: unknown; text?: unknown } | null;
      if (response.status === 200 && body?.woke === true) {
        if (typeof body.text === 'string') run.say(body.text);
        return WOKE_EXIT;
      }
      if (response.status === 200) continue;
    } catch (error) {
      if (!(error instanceof HubUnreachable)) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(RETRY_MS, Math.max(0, deadline - Date.now()))));
  }
  return 0;
}
