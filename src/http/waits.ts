/**
 * One change feed for every request that waits on this hub (remote watchers):
 * a PostgreSQL hub holds one LISTEN connection however many agents wait, and
 * each waiter looks at the store again whenever the feed moves (or, as a
 * fallback, every poll).
 */
import type { Bus } from '../core/bus.js';
import { eachChange } from '../core/store-changes.js';

export class SharedChanges {
  private readonly feed;
  private readonly waiters = new Set<() => void>();
  private stopped = false;
  private readonly loop: Promise<void>;
  /** Moves on at every change the feed brings: what a remote chat waits to see move. */
  version = 0;

  constructor(bus: Bus, pollMs: number) {
    this.feed = bus.changes();
    this.loop = eachChange({ feed: this.feed, pollMs, stopped: () => this.stopped }, async (changed) => {
      if (changed) this.version++;
      const waiting = [...this.waiters];
      this.waiters.clear();
      for (const wake of waiting) wake();
      return undefined;
    }).then(
      () => undefined,
      () => undefined,
    );
  }

  /** Resolves at the next change (or poll), or after `ms`, or when `signal` aborts. Take it before looking, so no change falls between. */
  get closed(): boolean {
    return this.stopped;
  }

  next(ms: number, signal: AbortSignal): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.waiters.delete(done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      signal.addEventListener('abort', done, { once: true });
      this.waiters.add(done);
    });
  }

  async close(): Promise<void> {
    if (this.stopped) return this.loop;
    this.stopped = true;
    this.feed.interrupt();
    for (const wake of [...this.waiters]) wake();
    await this.loop;
    await this.feed.close().catch(() => undefined);
  }
}
