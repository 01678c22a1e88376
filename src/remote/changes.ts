/**
 * The change feed of a bus reached through a hub: a wait is one request to the
 * hub (POST /v1/changes), answered when the hub's own feed moves or its time
 * runs out. For a remote chat, and for a sender waiting on its receipts.
 */
import type { ChangeFeed } from '../core/store-changes.js';
import { HubUnreachable } from './http.js';
import { postToHub } from './calls.js';
import { HUB_PATHS } from '../protocol/hub.js';
import type { HubAccess } from '../adapters/hub-access.js';

/** One wait at the hub, at most: long enough to be cheap, short enough that no proxy cuts it. */
const WAIT_CAP_MS = 25_000;
/** How long a wait the hub refused pauses before it says nothing moved. */
const REFUSED_PAUSE_MS = 1_000;

export class HubChangeFeed implements ChangeFeed {
  private seen: number | null = null;
  private current: AbortController | null = null;

  constructor(private readonly access: HubAccess) {}

  async version(): Promise<number> {
    if (this.seen === null) this.seen = await this.ask(null, 0);
    return this.seen;
  }

  async wait(ms: number): Promise<boolean> {
    const before = await this.version();
    const after = await this.ask(before, Math.min(ms, WAIT_CAP_MS));
    this.seen = after;
    return after !== before;
  }

  interrupt(): void {
    this.current?.abort();
  }

  async close(): Promise<void> {
    this.interrupt();
  }

  private async ask(since: number | null, ms: number): Promise<number> {
    const controller = new AbortController();
    this.current = controller;
    try {
      const reply = await postToHub(this.access, HUB_PATHS.changes, { since, wait_seconds: ms / 1000 }, ms + 15_000, controller.signal);
      const version = reply.status === 200 ? (reply.body as { version?: unknown } | null)?.version : undefined;
      // A refusal (a rate limit, a restart) is answered at once: waited out here, so no caller asks again in a tight loop.
      if (reply.status !== 200 && ms > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(ms, REFUSED_PAUSE_MS)));
      return typeof version === 'number' ? version : (this.seen ?? 0);
    } catch (error) {
      // An interrupted or failed wait reads as "nothing moved"; the chat looks again at its poll.
      if (error instanceof HubUnreachable) return this.seen ?? 0;
      throw error;
    } finally {
      if (this.current === controller) this.current = null;
    }
  }
}
