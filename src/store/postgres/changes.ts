/**
 * PostgreSQL's change feed: one dedicated connection per waiting process runs
 * `LISTEN agent_bus`; every write transaction of the store sends a NOTIFY on
 * that channel as it commits. A notification is a hint: the waiter reads the
 * store again after each one, and after every reconnect (a notification sent
 * while the connection was down is gone). A dropped connection is re-opened
 * with capped, jittered backoff; the waiting loop's slow poll covers the gap.
 */
import pg from 'pg';
import type { ChangeFeed, ChangesPort } from '../ports/changes.js';

export const CHANGE_CHANNEL = 'agent_bus';
/** How often the listening connection proves it is alive. */
const HEARTBEAT_MS = 15_000;
const MAX_BACKOFF_MS = 10_000;

export function postgresChangeFeed(config: pg.ClientConfig): ChangeFeed {
  let version = 0;
  let closed = false;
  let client: pg.Client | null = null;
  let attempts = 0;
  let wakeUp: (() => void) | null = null;
  let retry: NodeJS.Timeout | null = null;
  let heartbeat: NodeJS.Timeout | null = null;

  const hint = (): void => {
    version++;
    wakeUp?.();
  };

  const drop = (failed: pg.Client): void => {
    if (client !== failed) return;
    client = null;
    if (heartbeat) clearInterval(heartbeat);
    heartbeat = null;
    failed.removeAllListeners('notification');
    failed.end().catch(() => undefined);
    if (closed) return;
    // Whatever was sent meanwhile is lost: the waiter must look again.
    hint();
    const backoff = Math.min(MAX_BACKOFF_MS, 100 * 2 ** Math.min(attempts, 7)) * (0.5 + Math.random() / 2);
    attempts++;
    retry = setTimeout(() => {
      retry = null;
      void connect();
    }, backoff);
    retry.unref();
  };

  const connect = async (): Promise<void> => {
    if (closed) return;
    const next = new pg.Client(config);
    client = next;
    next.on('notification', hint);
    next.on('error', () => drop(next));
    next.on('end', () => drop(next));
    try {
      await next.connect();
      await next.query(`LISTEN ${CHANGE_CHANNEL}`);
    } catch {
      drop(next);
      return;
    }
    if (closed) {
      await next.end().catch(() => undefined);
      return;
    }
    attempts = 0;
    // Connected again: whatever came before the LISTEN must be read now.
    hint();
    heartbeat = setInterval(() => {
      next.query('SELECT 1').catch(() => drop(next));
    }, HEARTBEAT_MS);
    heartbeat.unref();
  };

  // The first look waits for the LISTEN, so no commit can fall between it and the waiter's first read.
  const ready = connect();

  return {
    version: async () => {
      await ready;
      return version;
    },
    wait: (ms) =>
      new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => done(false), ms);
        function done(byHint: boolean): void {
          clearTimeout(timer);
          wakeUp = null;
          resolve(byHint);
        }
        wakeUp = () => done(true);
      }),
    interrupt: () => wakeUp?.(),
    close: async () => {
      closed = true;
      if (retry) clearTimeout(retry);
      if (heartbeat) clearInterval(heartbeat);
      wakeUp?.();
      const current = client;
      client = null;
      if (current) await current.end().catch(() => undefined);
    },
  };
}

export function postgresChanges(config: pg.ClientConfig): ChangesPort {
  return {
    changes: () => postgresChangeFeed(config),
  };
}
