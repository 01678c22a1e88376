/**
 * Receipt latency: a sender waiting (`send --wait read`'s loop, Bus.awaitReceipts)
 * hears its mail read by another connection to the store, over 200 sends. Measured
 * from the read's commit to the waiter's return: with a slow poll as the only
 * fallback, only the change feed (file-system events and data_version; NOTIFY)
 * can make it fast.
 */
import { performance } from 'node:perf_hooks';
import { Bus } from '../src/core/bus.js';
import { registrationsFor } from '../src/core/roster.js';
import { busSettings } from '../src/core/settings.js';
import { livenessFrom } from '../src/core/liveness.js';
import { openAuditLog, openBus, openStoreAt } from '../src/runtime.js';
import { systemProcessTable } from '../src/adapters/procs.js';
import { median, quantile, round, type Engine, type Workspace } from './util.js';

const SENDS = 200;
/** How long the waiter is given to start waiting before the read, as a sender starts waiting after its send. */
const SETTLE_MS = 20;

export async function receiptWaitLatency(ws: Workspace, engine: Engine = 'sqlite'): Promise<{ value: number; shown: string; details: Record<string, unknown> }> {
  const location = await ws.bus(`receipt-wait-${engine}`, engine);
  const name = 'bench-repo/claude';
  const sender = openBus(location.env);
  // The reader: a bus of its own over its own connection, as another process has.
  const reader = new Bus(openStoreAt(location.db, location.env), openAuditLog(location.audit, location.env), busSettings(location.env), { liveness: () => livenessFrom(systemProcessTable()) });
  await sender.roster.register([...registrationsFor(name, location.home, true), ...registrationsFor('human', location.home, true)]);
  const delays: number[] = [];
  try {
    for (let index = 0; index < SENDS; index++) {
      const sent = await sender.mail.send({ from: 'human', to: name, body: `receipt ${index}` });
      const waiting = sender.receipts.await(sent.message_ids[0] as string, null, 'read', 30_000);
      await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
      await reader.inbox.read({ reader: name, via: 'read_inbox' });
      const read = performance.now();
      const outcome = await waiting;
      delays.push(performance.now() - read);
      if (!outcome.reached) throw new Error(`send ${index}: the wait gave up`);
    }
  } finally {
    await reader.close();
    await sender.close();
  }
  const p50 = median(delays);
  const p99 = quantile(delays, 0.99);
  return {
    value: round(p50, 2),
    shown: `p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms`,
    details: { sends: SENDS, p50Ms: round(p50, 2), p99Ms: round(p99, 2), maxMs: round(Math.max(...delays), 2) },
  };
}
