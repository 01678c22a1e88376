/**
 * Choose and open the storage engine for a database setting: a postgres:// or
 * postgresql:// URL is PostgreSQL, anything else a SQLite file. The PostgreSQL
 * engine (and the pg driver) is loaded only when a URL asks for it, so the
 * SQLite path, and every hook on it, never reads a line of it.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { isPostgresUrl } from '../model/locations.js';
import type { ChangeFeed, Store } from './ports.js';
import type { SqliteDriverName } from './sqlite/driver.js';
import { SqliteStore } from './sqlite/store.js';

export interface StoreOptions {
  /** How long a connect to a server may take. */
  connectTimeoutMs: number;
  /** Connections one process may hold. */
  poolMax?: number;
  /** How long a SQLite writer waits for another's lock before it gives up. */
  busyTimeoutMs?: number;
  /** The SQLite driver (AGENT_BUS_SQLITE_DRIVER's choice unless told). */
  sqliteDriver?: SqliteDriverName;
  /** How to load the engine's bundle (the CLI's, with its code cache); plain require by default. */
  requireBundle?: (path: string) => unknown;
}

type PostgresModule = typeof import('./postgres/store.js');

export const POSTGRES_BUNDLE = 'store-postgres.cjs';

async function loadPostgres(requireBundle?: (path: string) => unknown): Promise<PostgresModule> {
  const here = import.meta.filename;
  // A command bundle lives in dist/bin/commands; the engine's bundle beside that folder.
  const bundled = join(dirname(here), '..', POSTGRES_BUNDLE);
  if (existsSync(bundled)) return (requireBundle ?? createRequire(here))(bundled) as PostgresModule;
  // Not bundled: a name the bundler cannot follow, so no SQLite bundle takes the engine in.
  const module = ['./postgres/store', existsSync(join(dirname(here), 'postgres', 'store.ts')) ? '.ts' : '.js'].join('');
  return (await import(module)) as PostgresModule;
}

/** The URL as it may be shown before the engine is loaded: host, port, database; never the password. */
function shownUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.password = '';
    parsed.search = '';
    return parsed.toString();
  } catch {
    return 'postgres://?';
  }
}

/** A change feed whose engine is still loading: it waits for it. */
function laterFeed(feed: Promise<ChangeFeed>): ChangeFeed {
  let interrupted = false;
  return {
    version: async () => (await feed).version(),
    wait: async (ms) => (interrupted ? false : (await feed).wait(ms)),
    interrupt: () => {
      interrupted = true;
      void feed.then((ready) => ready.interrupt(), () => undefined);
    },
    close: async () => (await feed.catch(() => null))?.close(),
  };
}

/**
 * A store whose engine loads on first use. Every port method is asynchronous, so a caller
 * cannot tell it from the engine itself; `changes()` hands back a feed that waits for it.
 */
function lazyStore(location: string, load: () => Promise<Store>): Store {
  let loaded: Promise<Store> | null = null;
  const store = (): Promise<Store> => (loaded ??= load());
  return new Proxy({} as Store, {
    get(_target, property) {
      if (property === 'location') return location;
      // Not a promise: `await openStore(...)` must not try to call it.
      if (property === 'then') return undefined;
      if (property === 'changes') return () => laterFeed(store().then((ready) => ready.changes()));
      if (property === 'close') return async () => (loaded === null ? undefined : (await loaded).close());
      // The one operation that streams: a generator that waits for the engine, then reads from it.
      if (property === 'exportRows') {
        return async function* (...args: Parameters<Store['exportRows']>) {
          yield* (await store()).exportRows(...args);
        };
      }
      return async (...args: unknown[]) => {
        const ready = (await store()) as unknown as Record<PropertyKey, (...parameters: unknown[]) => unknown>;
        const method = ready[property];
        if (typeof method !== 'function') throw new TypeError(`the store has no operation ${String(property)}`);
        return method.apply(ready, args);
      };
    },
  });
}

export function openStore(location: string, options: StoreOptions): Store {
  if (!isPostgresUrl(location)) {
    return new SqliteStore(location, {
      ...(options.busyTimeoutMs === undefined ? {} : { timeoutMs: options.busyTimeoutMs }),
      ...(options.sqliteDriver === undefined ? {} : { driver: options.sqliteDriver }),
      ...(options.requireBundle === undefined ? {} : { requireBundle: options.requireBundle }),
    });
  }
  return lazyStore(shownUrl(location), async () => {
    const { PostgresStore } = await loadPostgres(options.requireBundle);
    return new PostgresStore(location, { connectTimeoutMs: options.connectTimeoutMs, poolMax: options.poolMax ?? 4 });
  });
}
