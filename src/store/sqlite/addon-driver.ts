/**
 * SQLite through better-sqlite3's compiled addon: the driver on Node.js 20, which has no SQLite of
 * its own (and wherever AGENT_BUS_SQLITE_DRIVER=better-sqlite3 asks for it). The build makes this
 * module a bundle of its own (dist/bin/sqlite-addon.cjs), loaded only when it is the driver in use,
 * so a hook on the built-in driver reads none of it.
 */
import Database from 'better-sqlite3';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { DriverDatabase, DriverStatement, OpenOptions, Params, SqliteDriver } from './driver.js';

const ADDON = join('better-sqlite3', 'build', 'Release', 'better_sqlite3.node');

let addonPath: string | null | undefined;

/**
 * The compiled SQLite addon, located directly: better-sqlite3's own lookup searches a dozen paths,
 * and module resolution walks folders, on every start, and every hook pays for start-up. This file
 * sits three folders below the package root (src/store/sqlite, dist/store/sqlite) or two
 * (dist/bin/sqlite-addon.cjs), so the addon is in the package's node_modules or, when npm hoisted
 * it, beside the package.
 */
export function nativeBinding(): string | undefined {
  if (addonPath === undefined) {
    const here = import.meta.dirname;
    const candidates = [
      join(here, '..', '..', '..', 'node_modules', ADDON),
      join(here, '..', '..', 'node_modules', ADDON),
      join(here, '..', '..', '..', '..', ADDON),
      join(here, '..', '..', '..', ADDON),
    ];
    addonPath = candidates.find((candidate) => existsSync(candidate)) ?? null;
    if (addonPath === null) {
      try {
        addonPath = createRequire(import.meta.filename).resolve(ADDON);
      } catch {
        addonPath = null;
      }
    }
  }
  return addonPath ?? undefined;
}

let addon: object | undefined;

/**
 * The addon found above, loaded once and handed to better-sqlite3 as the loaded module (which it
 * takes in place of a path): given a path, it goes through require(), whose resolving of an
 * absolute path costs a hook more than loading the addon does.
 */
function loadedAddon(path: string): object {
  if (addon === undefined) {
    const module = { exports: {} };
    process.dlopen(module, path);
    addon = module.exports;
  }
  return addon;
}

class Statement implements DriverStatement {
  constructor(private readonly statement: Database.Statement) {}

  // better-sqlite3 binds an array's items as positional parameters and an object's keys as named ones.
  run(params?: Params): { changes: number } {
    return params === undefined ? this.statement.run() : this.statement.run(params);
  }

  get(params?: Params): unknown {
    return params === undefined ? this.statement.get() : this.statement.get(params);
  }

  all(params?: Params): unknown[] {
    return params === undefined ? this.statement.all() : this.statement.all(params);
  }

  iterate(params?: Params): IterableIterator<unknown> {
    return params === undefined ? this.statement.iterate() : this.statement.iterate(params);
  }
}

class AddonDatabase implements DriverDatabase {
  constructor(private readonly db: Database.Database) {}

  get isOpen(): boolean {
    return this.db.open;
  }

  get inTransaction(): boolean {
    return this.db.inTransaction;
  }

  prepare(sql: string): DriverStatement {
    return new Statement(this.db.prepare(sql));
  }

  exec(sql: string): void {
    this.db.exec(sql);
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}

export const addonDriver: SqliteDriver = {
  name: 'better-sqlite3',
  open(path: string, options: OpenOptions): DriverDatabase {
    const binding = nativeBinding();
    // Its types name only a path; the loaded module is the documented other form.
    const nativeOption = binding ? { nativeBinding: loadedAddon(binding) as unknown as string } : {};
    return new AddonDatabase(new Database(path, { timeout: options.timeoutMs, ...(options.readonly ? { readonly: true } : {}), ...nativeOption }));
  },
};
