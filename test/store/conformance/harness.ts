/**
 * The store's conformance suite, shared by its files (one per port): the bus's rules through the
 * core API, each case run once per engine (a SQLite file, a PostgreSQL database).
 */
import { test } from 'node:test';
import { nowMicros, nowStamp } from '../../../src/model/clock.js';
import type { SessionLiveness } from '../../../src/core/liveness.js';
import { readAudit, type Engine } from '../../helpers/bus-env.js';
import { coreBus, type CoreBus } from '../../helpers/core-bus.js';
import { availableSqliteDrivers, sqliteDriverName } from '../../../src/store/sqlite/driver.js';

export type { CoreBus } from '../../helpers/core-bus.js';

export const ENGINES: Engine[] = ['sqlite', 'postgres'];

/**
 * The stores a case runs on: SQLite on this Node.js's own driver, SQLite on the other driver
 * where both work here (Node.js 22 and 24 with the addon built), and PostgreSQL.
 */
const drivers = availableSqliteDrivers();
const defaultDriver = sqliteDriverName('auto');
const VARIANTS: Array<{ label: string; engine: Engine; env: NodeJS.ProcessEnv }> = [
  { label: 'sqlite', engine: 'sqlite', env: {} },
  ...drivers.filter((driver) => driver !== defaultDriver).map((driver) => ({ label: `sqlite-${driver}`, engine: 'sqlite' as const, env: { AGENT_BUS_SQLITE_DRIVER: driver } })),
  { label: 'postgres', engine: 'postgres', env: {} },
];

/** One case, run once per engine (and on SQLite, once per driver that works here). */
export function conformance(name: string, work: (ctx: CoreBus) => Promise<void>, env: NodeJS.ProcessEnv = {}, liveness?: SessionLiveness): void {
  for (const variant of VARIANTS) {
    test(`${variant.label}: ${name}`, async () => {
      const ctx = await coreBus({ ...env, ...variant.env }, variant.engine, liveness);
      try {
        await work(ctx);
      } finally {
        await ctx.close();
      }
    });
  }
}

/** The operations the bus audited, in order (the log's own rows left out). */
export function ops(ctx: CoreBus): string[] {
  return readAudit(ctx.paths.audit).filter((row) => row.op !== 'audit').map((row) => String(row.op));
}

/** A day in milliseconds, as the cases move the bus's clock. */
export const DAY_MS = 86_400_000;

/** Send direct mail and return its id. */
export async function sendMail(ctx: CoreBus, from: string, to: string, body: string): Promise<string> {
  return (await ctx.bus.mail.send({ from, to, body })).message_ids[0] as string;
}

/** The ids a search finds, newest first. */
export async function found(ctx: CoreBus, query: string, reader: string | null, limit?: number): Promise<string[]> {
  return (await ctx.bus.mail.search({ query, reader, ...(limit === undefined ? {} : { limit }) })).map((hit) => hit.message_id);
}

/** Session servers a case has stopped: `fakeLiveness` judges their sessions gone. */
export const endedServers = new Set<number>();
export const fakeLiveness: SessionLiveness = (row) => row.endedAt === null && !endedServers.has(row.serverPid);
let nextPid = 80_000;

/** A session of `clientAddress` started as its MCP server would start it, with a made-up process: its address and server pid. */
export async function startSession(ctx: CoreBus, clientAddress: string, repoPath = '/repos/shop'): Promise<{ name: string; pid: number }> {
  const pid = nextPid++;
  const stamp = nowStamp();
  const lineage = JSON.stringify([[pid + 100_000, `client-${pid}`, clientAddress.split('/')[1] ?? 'claude']]);
  const row = { serverPid: pid, serverStarted: `start-${pid}`, clientAddress, repoPath, lineage, sessionKey: `s-${pid}`, bootId: null, pidNs: null, startedAt: stamp, lastSeen: stamp };
  const started = await ctx.bus.sessions.start({ clientAddress, clientProcess: JSON.parse(lineage)[0], sessionKey: row.sessionKey, pinned: null }, row, { nowMicros: nowMicros(), resumeHours: 1 });
  return { name: started.name, pid };
}
