/**
 * Waiting in tests: for a condition the product makes true, with a deadline and a message that
 * names what never came. A test that must show something did NOT happen waits for a later event
 * instead (see `waitForAudit`), so it neither sleeps longer than it must nor looks too early.
 */

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
