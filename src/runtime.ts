/** Wires the bus together from the environment: where the store and the audit log live. */
import { AuditLog } from './audit/log.js';
import { Bus } from './core/bus.js';
import { busPaths } from './core/paths.js';
import { busSettings, floatSetting, type Env } from './core/settings.js';
import { livenessFrom } from './core/liveness.js';
import { systemProcessTable } from './sessions/procs.js';
import { openStore } from './store/open.js';
import { requireBundle } from './cli/command-loader.js';
import type { Store } from './store/ports.js';
import { mayWake, wakeRecipients } from './wake/dispatch.js';
import type { PublishRequest, PublishResult } from './core/notice-ops.js';

/** Seconds a connect to PostgreSQL may take: a hook that cannot reach the server gives up within its budget. */
export const DEFAULT_PG_CONNECT_TIMEOUT_SECONDS = 2;

/** A store at a database setting (a file path or a postgres:// URL), opened as the bus opens its own. */
export function openStoreAt(database: string, env: Env = process.env, poolMax?: number): Store {
  return openStore(database, {
    connectTimeoutMs: floatSetting(env, 'AGENT_BUS_PG_CONNECT_TIMEOUT', DEFAULT_PG_CONNECT_TIMEOUT_SECONDS, 0.05) * 1000,
    requireBundle,
    ...(poolMax === undefined ? {} : { poolMax }),
  });
}

/** `poolMax`: PostgreSQL connections the process may hold at once (a hub serving many agents holds more). */
export function openBus(env: Env = process.env, poolMax?: number): Bus {
  const paths = busPaths(env);
  const store = openStoreAt(paths.db, env, poolMax);
  const bus = new Bus(store, new AuditLog(paths.audit), busSettings(env), () => livenessFrom(systemProcessTable(env)));
  bus.afterSend = (actor, records) => (mayWake(env, records) ? wakeRecipients(bus.wakes, bus.audit, env, actor, records) : undefined);
  return bus;
}

/**
 * Publish one notice from a script or daemon: validated exactly as the CLI
 * validates it (an empty message, an unknown severity or a bad TTL throws,
 * and nothing is stored). Opens the bus from `env` and closes it again.
 */
export async function publishNotice(request: PublishRequest, env: Env = process.env): Promise<PublishResult> {
  const bus = openBus(env);
  try {
    return await bus.notices.publish(request);
  } finally {
    await bus.close();
  }
}
