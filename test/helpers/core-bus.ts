/** An in-process bus on a private temp database of either engine, for the store's conformance suite. */
import { openAuditLog } from '../../src/runtime.js';
import { Bus } from '../../src/core/bus.js';
import { livenessFrom, type SessionLiveness } from '../../src/core/liveness.js';
import { registrationsFor } from '../../src/core/roster.js';
import { busSettings } from '../../src/core/settings.js';
import { systemProcessTable } from '../../src/adapters/procs.js';
import { openStore } from '../../src/store/open.js';
import { sqliteDriverName } from '../../src/store/sqlite/driver.js';
import { setting } from '../../src/model/settings.js';
import { ManualClock } from '../../src/model/clock.js';
import type { Store } from '../../src/store/ports.js';
import { tempBus, type Engine, type TempBus } from './bus-env.js';

export interface CoreBus {
  engine: Engine;
  bus: Bus;
  store: Store;
  paths: TempBus;
  /** The bus's clock: it stands still until a case moves it (time-to-live and ageing are tested by moving it). */
  clock: ManualClock;
  /** Put names on the roster as their own identities, all in `repoPath`. */
  register(names: string[], repoPath?: string): Promise<void>;
  /** The one number a `SELECT COUNT(*) AS n …` query gives. */
  count(query: string): number;
  close(): Promise<void>;
}

export async function coreBus(env: NodeJS.ProcessEnv = {}, engine: Engine = 'sqlite', liveness?: SessionLiveness): Promise<CoreBus> {
  const paths = tempBus(env, { engine });
  const store = openStore(paths.db, { connectTimeoutMs: 5000, sqliteDriver: sqliteDriverName(setting(paths.env, 'AGENT_BUS_SQLITE_DRIVER')) });
  const clock = new ManualClock();
  const bus = new Bus(store, openAuditLog(paths.audit, paths.env), busSettings(paths.env), { liveness: () => liveness ?? livenessFrom(systemProcessTable()), clock });
  return {
    engine,
    bus,
    store,
    paths,
    clock,
    async register(names, repoPath = '/repos/shared') {
      for (const name of names) await bus.roster.register(registrationsFor(name, repoPath, true));
    },
    count: (query) => Number(paths.rows<{ n: number | string }>(query)[0]?.n ?? 0),
    async close() {
      await bus.close();
      paths.cleanup();
    },
  };
}
