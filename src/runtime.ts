/** Wires the bus together from the environment: where the store and the audit log live. */
import { AuditLog } from './audit/log.js';
import { Bus } from './core/bus.js';
import { HookBus } from './core/hook-bus.js';
import { busPaths } from './adapters/paths.js';
import { hubAccess } from './adapters/hub-access.js';
import { BusError } from './model/errors.js';
import { busSettings, type BusSettings } from './core/settings.js';
import { setting, type Env } from './model/settings.js';
import { livenessFrom } from './core/liveness.js';
import { exposureWarning } from './adapters/privacy.js';
import { retentionDaysOf } from './adapters/dot-env.js';
import { systemProcessTable } from './adapters/procs.js';
import { openStore } from './store/open.js';
import { sqliteFileLock } from './store/sqlite/file-lock.js';
import { sqliteDriverName } from './store/sqlite/driver.js';
import { requireBundle } from './adapters/bundles.js';
import type { Store } from './store/ports.js';
import { mayWake, wakeRecipients } from './wake/dispatch.js';
import type { PublishRequest, PublishResult } from './core/notice-ops.js';
import { postOutbound } from './adapters/webhook-post.js';

/** A store at a database setting (a file path or a postgres:// URL), opened as the bus opens its own. */
export function openStoreAt(database: string, env: Env = process.env, poolMax?: number): Store {
  return openStore(database, {
    connectTimeoutMs: setting(env, 'AGENT_BUS_PG_CONNECT_TIMEOUT') * 1000,
    busyTimeoutMs: setting(env, 'AGENT_BUS_BUSY_TIMEOUT') * 1000,
    sqliteDriver: sqliteDriverName(setting(env, 'AGENT_BUS_SQLITE_DRIVER')),
    requireBundle,
    ...(poolMax === undefined ? {} : { poolMax }),
  });
}

/**
 * The bus of this machine for a command that talks to the store. With a hub set
 * (AGENT_BUS_URL, or agent-bus login), a command that cannot work over the hub yet
 * refuses rather than quietly open a local bus the user did not mean.
 */
export function openBus(env: Env = process.env): Bus {
  refuseOverHub(env);
  return openBusHere(env);
}

/** Throw when this machine is set to use a hub: for what does not work over the hub yet. */
export function refuseOverHub(env: Env): void {
  const access = hubAccess(env);
  if (access !== null) {
    throw new BusError(
      `this command does not work over the hub yet, and this machine is set to use the hub at ${access.url} ` +
        `(${access.from === 'env' ? 'AGENT_BUS_URL' : 'agent-bus login'}); ${access.from === 'env' ? 'unset AGENT_BUS_URL' : 'run agent-bus logout'} to use this machine's own bus`,
    );
  }
}

/** How a process that lives on opens its bus: the hub's pool and the stamp its requests put on audit rows. */
export interface BusHere {
  /** PostgreSQL connections it may hold. */
  poolMax?: number;
  /** Fields every audit row of the current request carries (the hub: its name, the token). */
  auditStamp?: AuditLog['stamp'];
  /** Hears each batch of audit rows as it is appended, with its stamp (the hub's metrics). */
  auditObserve?: AuditLog['observe'];
}

/**
 * The bus whose store this process holds, whatever a hub setting says: for the hub itself, the
 * commands that manage its store (token), and callers that have asked already whether a hub is set
 * (the hooks, the watcher, the status line). `poolMax`: PostgreSQL connections it may hold.
 */
export function openBusHere(env: Env = process.env, options: BusHere = {}): Bus {
  const { store, audit, settings } = busParts(env, options);
  const bus: Bus = new Bus(store, audit, settings, {
    liveness: () => livenessFrom(systemProcessTable(env)),
    // A send wakes its recipients once it has committed (most sends wake nobody, and pay nothing for it).
    afterSend: (actor, records) => (mayWake(env, records) ? wakeRecipients(bus.wakes, env, actor, records) : undefined),
    post: postOutbound,
  });
  return bus;
}

/**
 * What a hook's own process calls of this machine's bus (core/hook-bus.ts), opened as openBusHere
 * opens the whole of it: the hook commands' bundles carry none of the rest.
 */
export function openHookBusHere(env: Env = process.env): HookBus {
  const { store, audit, settings } = busParts(env, {});
  const bus: HookBus = new HookBus(store, audit, settings, {
    liveness: () => livenessFrom(systemProcessTable(env)),
    afterSend: (actor, records) => (mayWake(env, records) ? wakeRecipients(bus.wakes, env, actor, records) : undefined),
  });
  return bus;
}

/** The store, the audit log and the settings of the bus at `env`, as every process of the bus opens them. */
function busParts(env: Env, options: BusHere): { store: Store; audit: AuditLog; settings: BusSettings } {
  const paths = busPaths(env);
  const exposed = exposureWarning(paths);
  if (exposed !== null) process.stderr.write(`agent-bus: ${exposed}\n`);
  const store = openStoreAt(paths.db, env, options.poolMax);
  const audit = openAuditLog(paths.audit, env);
  audit.stamp = options.auditStamp ?? null;
  audit.observe = options.auditObserve ?? null;
  // The retention days may be kept in the bus folder's .env, as the prune command reads them.
  const settings = { ...busSettings(env), retentionDays: retentionDaysOf(env) };
  return { store, audit, settings };
}

/**
 * The audit log at `path` as every process of the bus appends to it: under the machine-wide
 * append lock (a SQLite file's lock beside the log), rotated at AGENT_BUS_AUDIT_MAX_BYTES.
 */
export function openAuditLog(path: string, env: Env = process.env): AuditLog {
  return new AuditLog(path, { lock: () => sqliteFileLock(`${path}.lock`, { driver: sqliteDriverName(setting(env, 'AGENT_BUS_SQLITE_DRIVER')), requireBundle }), maxBytes: setting(env, 'AGENT_BUS_AUDIT_MAX_BYTES') });
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
