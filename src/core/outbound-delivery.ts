/**
 * Delivering the outbox: due events are taken under a lease, posted (by the adapter handed in), and
 * settled: delivered, due again after a backoff, or failed after a day of tries or a permanent
 * refusal. Posts run side by side, so a hanging receiver holds up only its own events, and never a
 * send (the send only queued them). One long-running process at a time serves the outbox, under a
 * lease in the store; any may run one pass (`integration test` does).
 */
import { integrationRow } from './integration-rows.js';
import type { AuditSink } from './audit-sink.js';
import { formatStamp, stampToMillis, type Clock } from '../model/clock.js';
import type { IntegrationRecord, OutboxRecord } from '../model/records.js';
import type { ChangeFeed, IntegrationsPort, OutboxPort } from '../store/ports.js';
import { backoffMs, GIVE_UP_AFTER_MS, isPermanentRefusal, KEEP_DELIVERED_MS, type OutboundEvent } from './outbound.js';

/** What a receiver answered: its status (null when none came: refused, timed out), and why it failed. */
export interface PostResult {
  status: number | null;
  error: string | null;
  /** A receiver's `Retry-After`, in milliseconds. */
  retryAfterMs: number | null;
}

/** Makes one request for one event, in the shape its integration's kind expects. Never throws. */
export type Post = (integration: IntegrationRecord, event: OutboundEvent) => Promise<PostResult>;

/** How long a worker holds an event it took: longer than any one post may take. */
export const ATTEMPT_LEASE_MS = 60_000;
/** The lease of the one process that serves the outbox, and how often it is renewed. */
export const WORKER_LEASE_MS = 45_000;
const RENEW_EVERY_MS = 15_000;
/** The longest a serving loop sleeps without looking, when no hint comes. */
const IDLE_LOOK_MS = 15_000;
const BATCH = 32;
const WORKER_LEASE = 'outbound';

/** What one settled attempt came to. */
export interface Settled {
  event_id: string;
  integration: string;
  state: 'delivered' | 'queued' | 'failed';
  status: number | null;
  error: string | null;
}

export class OutboundDelivery {
  constructor(
    private readonly store: OutboxPort & Pick<IntegrationsPort, 'integration'>,
    private readonly audit: AuditSink,
    private readonly clock: Clock,
    private readonly post: Post | null,
    private readonly random: () => number = Math.random,
  ) {}

  private nowMs(): number {
    return Math.floor(this.clock.nowMicros() / 1000);
  }

  /** One pass: the due events taken (or only `only`), posted side by side, each settled. */
  async deliverDue(only: string | null = null): Promise<Settled[]> {
    if (this.post === null) return [];
    const now = this.nowMs();
    const taken = await this.store.claimOutbox(formatStamp(now * 1000), formatStamp((now + ATTEMPT_LEASE_MS) * 1000), BATCH, only);
    if (taken.length === 0) return [];
    const integrations = new Map<string, Promise<IntegrationRecord | null>>();
    const integrationOf = (name: string): Promise<IntegrationRecord | null> => {
      let found = integrations.get(name);
      if (found === undefined) integrations.set(name, (found = this.store.integration(name)));
      return found;
    };
    return Promise.all(taken.map(async (entry) => this.attempt(entry, await integrationOf(entry.integration))));
  }

  private async attempt(entry: OutboxRecord, integration: IntegrationRecord | null): Promise<Settled> {
    const post = this.post as Post;
    const result: PostResult =
      integration === null || integration.url === null
        ? { status: null, error: 'the integration was removed', retryAfterMs: null }
        : await post(integration, JSON.parse(entry.payload) as OutboundEvent).catch((error: unknown) => ({ status: null, error: String(error), retryAfterMs: null }));
    const now = this.nowMs();
    const at = formatStamp(now * 1000);
    const forgetBefore = formatStamp((now - KEEP_DELIVERED_MS) * 1000);
    const ok = result.status !== null && result.status >= 200 && result.status < 300;
    const givenUp = integration === null || isPermanentRefusal(result.status) || now - stampToMillis(entry.createdAt) >= GIVE_UP_AFTER_MS;
    const settled: Settled = { event_id: entry.eventId, integration: entry.integration, state: ok ? 'delivered' : givenUp ? 'failed' : 'queued', status: result.status, error: ok ? null : (result.error ?? `status ${result.status}`) };
    if (settled.state === 'delivered') {
      await this.store.finishOutbox(entry.eventId, { state: 'delivered', at, status: result.status as number }, forgetBefore);
    } else if (settled.state === 'failed') {
      await this.store.finishOutbox(entry.eventId, { state: 'failed', at, status: result.status, error: settled.error as string }, forgetBefore);
    } else {
      const wait = backoffMs(entry.attempts, this.random(), result.retryAfterMs);
      await this.store.finishOutbox(entry.eventId, { state: 'queued', nextAt: formatStamp((now + wait) * 1000), status: result.status, error: settled.error as string }, forgetBefore);
    }
    if (settled.state !== 'queued') {
      const text = `integration ${entry.integration}: ${entry.event} event ${entry.eventId} ${settled.state}${settled.status === null ? '' : ` (status ${settled.status})`} after ${entry.attempts} attempt${entry.attempts === 1 ? '' : 's'}${settled.error === null ? '' : `: ${settled.error}`}`;
      this.audit.append([integrationRow(at, entry.integration, settled.state, entry.integration, text, { event_id: entry.eventId, delivered_message: entry.messageId })]);
    }
    return settled;
  }

  /**
   * Serve the outbox until `stop` is called, while this process holds the worker lease (another
   * process serving it keeps it; this one looks again now and then). Waits on the store's change
   * feed, so an event queued anywhere is posted at once.
   */
  serve(holder: string, changes: () => ChangeFeed): { stop: () => Promise<void> } {
    let stopped = false;
    let feed: ChangeFeed | null = null;
    const loop = (async () => {
      feed = changes();
      let heldUntil = 0;
      while (!stopped) {
        try {
          const now = this.nowMs();
          if (now >= heldUntil - WORKER_LEASE_MS + RENEW_EVERY_MS) {
            const held = await this.store.holdWorkerLease(WORKER_LEASE, holder, formatStamp(now * 1000), formatStamp((now + WORKER_LEASE_MS) * 1000));
            heldUntil = held ? now + WORKER_LEASE_MS : 0;
          }
          if (heldUntil === 0) {
            await feed.wait(RENEW_EVERY_MS);
            continue;
          }
          const due = await this.store.nextOutboxDue();
          const wait = due === null ? IDLE_LOOK_MS : Math.min(IDLE_LOOK_MS, stampToMillis(due) - this.nowMs());
          if (wait <= 0) {
            await this.deliverDue();
            continue;
          }
          await feed.wait(Math.min(wait, heldUntil - this.nowMs() - WORKER_LEASE_MS + RENEW_EVERY_MS + 1));
        } catch {
          // The store away for a moment: look again shortly.
          if (!stopped) await feed.wait(1000);
        }
      }
      if (heldUntil > 0) await this.store.releaseWorkerLease(WORKER_LEASE, holder).catch(() => undefined);
    })();
    return {
      stop: async () => {
        stopped = true;
        (feed as ChangeFeed | null)?.interrupt();
        await loop;
        await (feed as ChangeFeed | null)?.close();
      },
    };
  }
}
