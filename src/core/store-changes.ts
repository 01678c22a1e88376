/**
 * Waiting for the store to change without polling it hard: file-system events
 * in the database's folder (its WAL grows at every commit) say when to look,
 * SQLite's data_version says whether anything changed, and a slow poll is the
 * fallback where no events come.
 */
import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';

/** After an event, look again this often, this many times: the event can come before its commit is visible. */
const FOLLOW_UP_MS = 20;
const FOLLOW_UPS = 5;

export interface Waiter {
  /** Resolves true when a file-system event ended the wait, false when the time ran out. */
  wait(ms: number): Promise<boolean>;
  /** End the current wait now. */
  interrupt(): void;
  close(): void;
}

/** Wake on any change in the database's folder, or after `ms`, whichever comes first. */
export function folderWaiter(db: string): Waiter {
  let wakeUp: (() => void) | null = null;
  let watcher: FSWatcher | null = null;
  const name = basename(db);
  try {
    watcher = watch(dirname(db), { persistent: false }, (_event, file) => {
      if (file === null || String(file).startsWith(name)) wakeUp?.();
    });
    watcher.on('error', () => undefined);
  } catch {
    watcher = null; // No file-system events here: the poll alone.
  }
  return {
    wait: (ms) =>
      new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => done(false), ms);
        function done(byEvent: boolean): void {
          clearTimeout(timer);
          wakeUp = null;
          resolve(byEvent);
        }
        wakeUp = () => done(true);
      }),
    interrupt: () => wakeUp?.(),
    close: () => watcher?.close(),
  };
}

export interface ChangeLoop {
  /** The store's change counter (SQLite's data_version). */
  changeCounter(): number;
  waiter: Waiter;
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
    const version = loop.changeCounter();
    const changed = version !== seen;
    if (changed) {
      seen = version;
      followUps = 0;
    }
    const result = await step(changed);
    if (result !== undefined) return result;
    const pause = followUps > 0 ? Math.min(FOLLOW_UP_MS, loop.pollMs) : loop.pollMs;
    if (followUps > 0) followUps--;
    if (await loop.waiter.wait(Math.min(pause, Math.max(0, deadline - Date.now())))) followUps = FOLLOW_UPS;
  }
  return undefined;
}
