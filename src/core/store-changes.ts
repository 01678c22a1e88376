/**
 * Waiting for the store to change without polling it hard, on either engine:
 * the store's change feed says when to look (a file-system event, a NOTIFY)
 * and whether anything changed; a slow poll is the fallback where no hint comes.
 */
import type { ChangeFeed } from '../store/ports.js';

export type { ChangeFeed } from '../store/ports.js';

/** After a hint, look again this often, this many times: a hint can come before its commit is visible. */
const FOLLOW_UP_MS = 20;
const FOLLOW_UPS = 5;

export interface ChangeLoop {
  feed: ChangeFeed;
  pollMs: number;
  /** Give up at this time (epoch milliseconds); never when absent. */
  deadline?: number;
  stopped(): boolean;
}

/**
 * Call `step` once at the start and then after every wait, telling it whether
 * the store changed since its last call; the loop ends with the first result
 * `step` gives, or undefined when stopped or past the deadline.
 */
export async function eachChange<T>(loop: ChangeLoop, step: (changed: boolean) => Promise<T | undefined>): Promise<T | undefined> {
  const deadline = loop.deadline ?? Number.POSITIVE_INFINITY;
  let seen = -1;
  let followUps = 0;
  while (!loop.stopped() && Date.now() < deadline) {
    const version = await loop.feed.version();
    const changed = version !== seen;
    if (changed) {
      seen = version;
      followUps = 0;
    }
    const result = await step(changed);
    if (result !== undefined) return result;
    const pause = followUps > 0 ? Math.min(FOLLOW_UP_MS, loop.pollMs) : loop.pollMs;
    if (followUps > 0) followUps--;
    // A stop asked for during the step found no wait to interrupt: none begins.
    if (loop.stopped()) break;
    if (await loop.feed.wait(Math.min(pause, Math.max(0, deadline - Date.now())))) followUps = FOLLOW_UPS;
  }
  return undefined;
}
