/**
 * Delivering the outbox: due events are taken under a lease, posted (by the adapter handed in), and
 * settled: delivered, due again after a backoff, or failed after a day of tries or a permanent
 * refusal. Each integration is a lane: its posts run side by side, beside the other lanes', so a
 * hanging receiver holds up only its own events, and never a send (the send only queued them). One
 * long-running process at a time serves the outbox, under a lease in the store; `integration test`
 * posts its one event itself.
 */
import { integrationRow } from './integration-rows.js';
import type { AuditSink } from './audit-sink.js';
import { formatStamp, stampToMillis, type Clock } from '../model/clock.js';
import type { IntegrationRecord, OutboxRecord } from '../model/records.js';
import type { ChangeFeed, IntegrationsPort, OutboxPort } from '../store/ports.js';
import { backoffMs, eventOf, GIVE_UP_AFTER_MS, isPermanentRefusal, KEEP_DELIVERED_MS, type OutboundEvent } from './outbound.js';

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
/**
 * The most posts one integration has under way at once: receivers of chat webhooks take about one a
 * second (Slack) or a few (Discord) and answer more with 429, and a receiver that hangs holds each
 * post's connection until its timeout; a few at a time keep a backlog moving without a burst.
 */
const BATCH = 8;
/**
 * The least time between two looks at the outbox: a burst of sends moves the change feed at every
 * commit, and a look at each would cost every send a query. An event queued waits this long at most
 * before it is taken.
 */
const LOOK_GAP_MS = 50;
const WORKER_LEASE = 'outbound';

export interface ServeOptions {
  /** This process, as the worker lease names it. */
  holder: string;
  changes: () => ChangeFeed;
  /** The longest the loop sleeps without looking when no hint comes (file-system events can run out). */
  pollMs: number;
  /** Whether a lease's holder is known to be gone (its process ended), so it is replaced at once. */
  holderGone?: (holder: string) => boolean;
  /** Where a failure of the loop is told. */
  report?: (line: string) => void;
}

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

  /** The due events of each integration not `busy`, taken under an attempt's lease, by integration. */
  private async takeDue(busy: readonly string[]): Promise<Map<string, OutboxRecord[]>> {
    const lanes = new Map<string, OutboxRecord[]>();
    if (this.post === null) return lanes;
    const now = this.nowMs();
    for (const entry of await this.store.claimOutbox(formatStamp(now * 1000), formatStamp((now + ATTEMPT_LEASE_MS) * 1000), BATCH, busy)) {
      const lane = lanes.get(entry.integration);
      if (lane === undefined) lanes.set(entry.integration, [entry]);
      else lane.push(entry);
    }
    return lanes;
  }

  /** One integration's events taken together, posted side by side, each settled. */
  private async settleLane(entries: OutboxRecord[]): Promise<Settled[]> {
    const integration = await this.store.integration(entries[0]?.integration ?? '');
    return Promise.all(entries.map((entry) => this.attempt(entry, integration)));
  }

  /**
   * Queue an event already taken by this process (its first attempt's lease held), and post it now:
   * no serving process takes it meanwhile. What `integration test` sends.
   */
  async deliverNow(entry: OutboxRecord): Promise<Settled> {
    const now = this.nowMs();
    const taken = { ...entry, attempts: 1, leaseUntil: formatStamp((now + ATTEMPT_LEASE_MS) * 1000) };
    await this.store.queueOutbound([taken]);
    return this.attempt(taken, await this.store.integration(entry.integration));
  }

  private async attempt(entry: OutboxRecord, integration: IntegrationRecord | null): Promise<Settled> {
    if (this.post === null) return { event_id: entry.eventId, integration: entry.integration, state: 'queued', status: null, error: 'this process does not post' };
    const post = this.post;
    const result: PostResult =
      integration === null || integration.url === null
        ? { status: null, error: 'the integration was removed', retryAfterMs: null }
        : await Promise.resolve()
            .then(() => post(integration, eventOf(entry)))
            .catch((error: unknown) => ({ status: null, error: String(error), retryAfterMs: null }));
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

  /** The process serving the outbox now (its lease running), or null. */
  async servedBy(): Promise<string | null> {
    const lease = await this.store.workerLease(WORKER_LEASE);
    return lease !== null && stampToMillis(lease.until) > this.nowMs() ? lease.holder : null;
  }

  /**
   * Serve the outbox until `stop` is called. While events are queued, the process that holds the
   * worker lease posts them (the others look again now and then); with none queued, nobody holds it
   * and nothing is written. Waits on the store's change feed, so an event queued anywhere is posted
   * at once.
   */
  serve(options: ServeOptions): { stop: () => Promise<void> } {
    const { holder, changes, pollMs } = options;
    const holderGone = options.holderGone ?? (() => false);
    const report = options.report ?? (() => undefined);
    let stopped = false;
    let feed: ChangeFeed | null = null;
    // Each integration's attempts under way, as a lane of its own: a receiver that hangs holds up only its own events.
    const inFlight = new Map<string, Promise<void>>();
    // An attempt settled in this process since the loop last looked (this process's own commits move no change feed).
    let settledSince = false;
    // Every wait begins only if `stop` has not been asked for: a stop that came while the loop was between
    // waits would find no wait to interrupt, and the next would last its whole time.
    const waitUnlessStopped = async (ms: number): Promise<void> => {
      if (!stopped) await (feed as ChangeFeed).wait(ms);
    };
    const pause = async (ms: number): Promise<void> => {
      if (!settledSince) await waitUnlessStopped(ms);
      settledSince = false;
    };
    // Whatever prompted a look (a commit, its file event), the next comes no sooner than the gap after the last; a settled attempt is looked at at once.
    let lookedAt = -LOOK_GAP_MS;
    const spaceLooks = async (): Promise<void> => {
      const gap = lookedAt + LOOK_GAP_MS - performance.now();
      if (gap > 0 && !settledSince) await new Promise((resolve) => setTimeout(resolve, gap));
      lookedAt = performance.now();
    };
    const loop = (async () => {
      feed = changes();
      let heldUntil = 0;
      while (!stopped) {
        try {
          await spaceLooks();
          // Read before the look: a commit after it moves the version, and the wait is skipped.
          const version = await feed.version();
          const busy = [...inFlight.keys()];
          const due = await this.store.nextOutboxDue(busy);
          if (due === null) {
            // Nothing queued: no lease held, nothing written, until a hint says to look again.
            if (heldUntil > 0 && inFlight.size === 0) {
              await this.store.releaseWorkerLease(WORKER_LEASE, holder);
              heldUntil = 0;
            }
            if ((await feed.version()) === version) await pause(pollMs);
            continue;
          }
          const now = this.nowMs();
          if (now >= heldUntil - WORKER_LEASE_MS + RENEW_EVERY_MS) {
            // A holder whose process is gone (killed, it could not let go) is replaced at once, not after its lease.
            const current = heldUntil === 0 ? await this.store.workerLease(WORKER_LEASE) : null;
            const replacing = current !== null && current.holder !== holder && holderGone(current.holder) ? current.holder : null;
            const held = await this.store.holdWorkerLease(WORKER_LEASE, holder, formatStamp(now * 1000), formatStamp((now + WORKER_LEASE_MS) * 1000), replacing);
            heldUntil = held ? now + WORKER_LEASE_MS : 0;
            // The attempts a gone worker had under way ended with it: taken again now, not once their leases run out.
            if (held && replacing !== null) await this.store.releaseAttemptLeases();
          }
          if (heldUntil === 0) {
            // Another process serves the outbox: look again when it may have let go.
            await waitUnlessStopped(RENEW_EVERY_MS);
            continue;
          }
          const wait = Math.min(pollMs, stampToMillis(due) - this.nowMs(), heldUntil - WORKER_LEASE_MS + RENEW_EVERY_MS - this.nowMs() + 1);
          if (stampToMillis(due) <= this.nowMs()) {
            const lanes = await this.takeDue(busy);
            for (const [lane, entries] of lanes) {
              const settling = this.settleLane(entries).then(
                () => undefined,
                (error: unknown) => report(`agent-bus: the outbox: ${(error as Error).message}`),
              );
              inFlight.set(
                lane,
                settling.finally(() => {
                  inFlight.delete(lane);
                  settledSince = true;
                  (feed as ChangeFeed | null)?.interrupt();
                }),
              );
            }
            // Nothing taken: what is due is another process's attempt under way; look again shortly.
            if (lanes.size === 0) await pause(Math.min(pollMs, 1000));
            continue;
          }
          if ((await feed.version()) !== version) continue;
          await pause(Math.max(1, wait));
        } catch (error) {
          // The store away for a moment: look again shortly.
          report(`agent-bus: the outbox: ${(error as Error).message}`);
          await waitUnlessStopped(1000);
        }
      }
      // The attempts under way settle (each post has its timeout) before the lease is let go.
      await Promise.all(inFlight.values());
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
