/**
 * Waiting in tests: for a condition the product makes true, with a deadline and a message that
 * names what never came. A test that must show something did NOT happen waits for a later event
 * instead (`waitForAudit` in agents.ts), so it neither sleeps longer than it must nor looks too early.
 */
import { readFileSync } from 'node:fs';

/** A fixed pause: only where the product gives no signal to wait on (each use says why). */
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** What a wait is for, in its timeout's message; a function is asked only then (to show the state it gave up in). */
export type What = string | (() => string);

/** The first value `get` gives other than undefined, asked every `everyMs` until `timeoutMs` has passed. */
export async function waitFor<T>(get: () => T | undefined | Promise<T | undefined>, what: What, timeoutMs = 5000, everyMs = 25): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await get();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${typeof what === 'string' ? what : what()}`);
    await sleep(everyMs);
  }
}

/** Until `check` holds, asked every `everyMs` until `timeoutMs` has passed. */
export async function waitUntil(check: () => boolean | Promise<boolean>, what: What, timeoutMs = 5000, everyMs = 25): Promise<void> {
  await waitFor(async () => ((await check()) ? true : undefined), what, timeoutMs, everyMs);
}

/** Whether process `pid` has exited: gone, or a zombie no one has reaped yet (its parent gone too). */
export function hasExited(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.startsWith('Z') ?? false;
  } catch {
    return true;
  }
}

/** Until process `pid` has exited. */
export function waitForExit(pid: number, what = `process ${pid} to exit`, timeoutMs = 10_000): Promise<void> {
  return waitUntil(() => hasExited(pid), what, timeoutMs, 20);
}
