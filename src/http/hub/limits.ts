/** What keeps one agent, or a flood, from taking the hub: a rate per token and a bound on requests at once. */

/** Requests per second per token, refilled smoothly; a burst of one second's worth is allowed. */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly perSecond: number,
    private readonly now: () => number = Date.now,
  ) {}

  get perSecondLimit(): number {
    return this.perSecond;
  }

  /** 0 when `key` may go on now, else the whole seconds to wait before it may. */
  take(key: string): number {
    const now = this.now();
    const bucket = this.buckets.get(key) ?? { tokens: this.perSecond, at: now };
    bucket.tokens = Math.min(this.perSecond, bucket.tokens + ((now - bucket.at) / 1000) * this.perSecond);
    bucket.at = now;
    this.buckets.set(key, bucket);
    if (this.buckets.size > 10_000) this.forgetFull(now);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - bucket.tokens) / this.perSecond));
  }

  /** Buckets full again say nothing a new one would not: drop them. */
  private forgetFull(now: number): void {
    for (const [key, bucket] of this.buckets) if (bucket.tokens + ((now - bucket.at) / 1000) * this.perSecond >= this.perSecond) this.buckets.delete(key);
  }
}

/** At most `limit` pieces of work at once; the rest wait their turn, up to `queue` of them. */
export class Gate {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(
    private readonly limit: number,
    private readonly queue: number,
  ) {}

  get inFlight(): number {
    return this.running;
  }

  /** Run `work` when a place is free; null (nothing run) when too many wait already. */
  async run<T>(work: () => Promise<T>): Promise<T | null> {
    if (this.running >= this.limit) {
      if (this.waiting.length >= this.queue) return null;
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.running++;
    }
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}
