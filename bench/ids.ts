/**
 * Ids taken back as listings show them, on a large bus (1,000,000 messages, 10,000 agents): `status`
 * by the start of a message's short id, p50. No index holds a message id's random half (one would
 * cost every send a random page of it), so this is a scan of the key's index: the figure says what
 * a person or an agent waits for it, and keeps it bounded.
 */
import { performance } from 'node:perf_hooks';
import { openBus } from '../src/runtime.js';
import { shortId } from '../src/model/short-id.js';
import { largeBus } from './seed.js';
import { median, quantile, round, yieldToLoop, type Engine, type Workspace } from './util.js';

const LOOKUPS = 20;

export async function shortIdLookup(ws: Workspace, engine: Engine = 'sqlite'): Promise<{ value: number; shown: string; details: Record<string, unknown> }> {
  const { location, seed } = await largeBus(ws, engine, 'ids', { messages: 1_000_000, repos: 1_000, readers: 10 });
  const bus = openBus(location.env);
  try {
    // The newest sends, as a listing shows them: each looked up by the first eight characters of its short id.
    const shown = (await bus.mail.recent(LOOKUPS + 1)).map((message) => message.message_id);
    if (shown.length < LOOKUPS + 1) throw new Error('the seed has too few messages');
    const times: number[] = [];
    for (const [index, id] of shown.entries()) {
      const start = performance.now();
      const status = await bus.receipts.status(shortId(id).slice(0, 8), null);
      const elapsed = performance.now() - start;
      if (!status.copies.some((copy) => copy.message_id === id)) throw new Error(`the start of ${id}'s short id named another send`);
      if (index > 0) times.push(elapsed); // the first warms the page cache
      await yieldToLoop();
    }
    const p50 = median(times);
    return {
      value: round(p50, 1),
      shown: `p50 ${p50.toFixed(1)} ms, p95 ${quantile(times, 0.95).toFixed(1)} ms`,
      details: { engine, messages: seed.messages, agents: seed.agents, lookups: times.length, p50Ms: round(p50, 1) },
    };
  } finally {
    await bus.close();
  }
}
