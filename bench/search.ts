/**
 * Search on a large bus (1,000,000 messages, 10,000 agents): queries of each
 * kind (a word, a phrase, a prefix, two words; by the human and by an agent,
 * who sees only its own and its repo's mail), p50 over many. And what keeping
 * the index costs sends: sends/s with the index brought up to date after them
 * against the same sends with no index kept.
 */
import { performance } from 'node:perf_hooks';
import { connectSqlite } from '../src/store/sqlite/driver.js';
import pg from 'pg';
import { openBus, openStoreAt } from '../src/runtime.js';
import { registrationsFor } from '../src/core/roster.js';
import { largeBus } from './seed.js';
import { median, progress, quantile, round, yieldToLoop, type BusLocation, type Engine, type Workspace } from './util.js';

const QUERIES = ['review', '"login form"', 'migrat*', 'flaky migration', '"token expires" rebase', 'schema*'];
const ROUNDS = 30;

export async function searchLargeBus(ws: Workspace, engine: Engine = 'sqlite'): Promise<{ value: number; shown: string; details: Record<string, unknown> }> {
  const { location, seed } = await largeBus(ws, engine, 'search', { messages: 1_000_000, repos: 1_000, readers: 10 });
  const started = performance.now();
  const store = openStoreAt(location.db, location.env);
  try {
    await store.indexForSearch();
  } finally {
    await store.close();
  }
  const indexSeconds = (performance.now() - started) / 1000;
  progress(`indexed in ${indexSeconds.toFixed(1)} s`);
  const bus = openBus(location.env);
  try {
    const agent = seed.readers[0]?.name ?? null;
    const times: number[] = [];
    const byQuery: Record<string, number[]> = {};
    let found = 0;
    for (let round_ = 0; round_ < ROUNDS + 1; round_++) {
      for (const query of QUERIES) {
        for (const reader of [null, agent]) {
          const start = performance.now();
          const hits = await bus.mail.search({ query, reader, limit: 20 });
          const elapsed = performance.now() - start;
          if (round_ === 0) continue; // warm-up
          found += hits.length;
          times.push(elapsed);
          (byQuery[`${query}${reader === null ? '' : ' (agent)'}`] ??= []).push(elapsed);
        }
      }
      await yieldToLoop();
    }
    if (found === 0) throw new Error('no search found anything; the seed is wrong');
    const p50 = median(times);
    return {
      value: round(p50, 2),
      shown: `p50 ${p50.toFixed(2)} ms, p95 ${quantile(times, 0.95).toFixed(2)} ms`,
      details: {
        messages: seed.messages,
        agents: seed.agents,
        searches: times.length,
        indexSeconds: round(indexSeconds, 1),
        p50ByQueryMs: Object.fromEntries(Object.entries(byQuery).map(([query, list]) => [query, round(median(list), 2)])),
      },
    };
  } finally {
    await bus.close();
  }
}

/** The index rows of a bus, counted in its database itself: the figure means nothing unless the index holds every send. */
async function assertIndexHolds(location: BusLocation, sends: number): Promise<void> {
  let rows: number;
  if (location.engine === 'postgres') {
    const client = new pg.Client({ connectionString: location.db });
    await client.connect();
    try {
      rows = Number((await client.query<{ n: string }>('SELECT COUNT(*) AS n FROM message_search')).rows[0]?.n);
    } finally {
      await client.end();
    }
  } else {
    const db = connectSqlite(location.db, { readonly: true });
    try {
      rows = (db.prepare('SELECT COUNT(*) AS n FROM message_search').get() as { n: number }).n;
    } finally {
      db.close();
    }
  }
  if (rows !== sends) throw new Error(`the search index holds ${rows} messages of the ${sends} sent`);
}

/**
 * Wait for the server to finish what earlier sections left it (autovacuum on their million-message
 * databases, a checkpoint), so that neither side of a comparison pays for it: at most a minute.
 */
export async function quietServer(location: BusLocation): Promise<void> {
  if (location.engine !== 'postgres') return;
  const client = new pg.Client({ connectionString: location.db });
  await client.connect();
  try {
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      const busy = await client.query<{ n: string }>("SELECT COUNT(*) AS n FROM pg_stat_activity WHERE backend_type = 'autovacuum worker'");
      if (Number(busy.rows[0]?.n) === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    await client.query('CHECKPOINT');
  } finally {
    await client.end();
  }
}

/**
 * Sends/s when the index is kept over sends/s with no index kept. Kept: a process that lives on (as the
 * hub or an MCP server does) keeps it current as the sends commit, and the clock stops only once the
 * index holds every send. Not kept: nothing indexes.
 */
export async function searchIndexCost(ws: Workspace, body: string, engine: Engine = 'sqlite'): Promise<{ value: number; shown: string; details: Record<string, unknown> }> {
  const SENDS = 20_000;
  const SENDERS = 32;
  const RUNS = 5;
  const ratios: number[] = [];
  const rates: Array<{ plain: number; indexed: number }> = [];
  for (let run = 0; run < RUNS; run++) {
    const measure = async (indexed: boolean): Promise<number> => {
      const location = await ws.bus(`search-cost-${engine}-${run}-${indexed ? 'on' : 'off'}`, engine);
      await quietServer(location);
      const bus = openBus(location.env);
      if (indexed) bus.mail.keepSearchIndexCurrent();
      try {
        for (const name of ['bench/alpha', 'bench/beta']) await bus.roster.register(registrationsFor(name, '/home/dev/src/bench', true));
        const request = { from: 'bench/alpha', to: 'bench/beta', body };
        const start = performance.now();
        await Promise.all(Array.from({ length: SENDERS }, async () => {
          for (let index = 0; index < SENDS / SENDERS; index++) await bus.mail.send(request);
        }));
        if (indexed) await bus.mail.indexForSearch();
        const rate = SENDS / ((performance.now() - start) / 1000);
        if (indexed) await assertIndexHolds(location, SENDS);
        return rate;
      } finally {
        await bus.close();
      }
    };
    // The order alternates, so a machine that slows down favours neither.
    const plainFirst = run % 2 === 0;
    const first = await measure(!plainFirst);
    const second = await measure(plainFirst);
    const rate = plainFirst ? { plain: first, indexed: second } : { plain: second, indexed: first };
    rates.push(rate);
    ratios.push(rate.indexed / rate.plain);
  }
  const ratio = median(ratios);
  const last = rates[rates.length - 1] as { plain: number; indexed: number };
  return {
    value: round(ratio, 3),
    shown: `${ratio.toFixed(2)}× (${Math.round(last.indexed).toLocaleString('en-US')} vs ${Math.round(last.plain).toLocaleString('en-US')} sends/s)`,
    details: { sends: SENDS, senders: SENDERS, runs: RUNS, ratios: ratios.map((value) => round(value, 3)), sendsPerSecond: rates.map((rate) => ({ plain: Math.round(rate.plain), indexed: Math.round(rate.indexed) })) },
  };
}
