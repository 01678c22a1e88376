/** An in-process bus on a private temp database, for tests of the core rules. */
import { livenessFrom } from '../../src/core/liveness.js';
import { systemProcessTable } from '../../src/sessions/procs.js';
import { AuditLog } from '../../src/audit/log.js';
import { Bus } from '../../src/core/bus.js';
import { registrationsFor } from '../../src/core/roster.js';
import { busSettings } from '../../src/core/settings.js';
import { SqliteStore } from '../../src/store/sqlite/store.js';
import { tempBus, type TempBus } from './bus-env.js';

export interface CoreBus {
  bus: Bus;
  store: SqliteStore;
  paths: TempBus;
  /** Put names on the roster as their own identities, all in `repoPath`. */
  register(names: string[], repoPath?: string): Promise<void>;
  close(): Promise<void>;
}

export async function coreBus(env: NodeJS.ProcessEnv = {}): Promise<CoreBus> {
  const paths = tempBus(env);
  const store = new SqliteStore(paths.db);
  const bus = new Bus(store, new AuditLog(paths.audit), busSettings(paths.env), () => livenessFrom(systemProcessTable()));
  return {
    bus,
    store,
    paths,
    async register(names, repoPath = '/repos/shared') {
      for (const name of names) await bus.register(registrationsFor(name, repoPath, true));
    },
    async close() {
      await bus.close();
      paths.cleanup();
    },
  };
}
