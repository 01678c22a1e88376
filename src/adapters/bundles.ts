/**
 * Loads one of the program's CommonJS bundles with the V8 code cache kept next to it. Compiling a
 * bundle that carries SQLite bindings and the bus's core is a large part of a short command's
 * start-up, and the cache turns it into a read. V8 accepts only a cache its own version recorded, so
 * each cache is named for the V8 that made it (codeCachePath): the build records one for the Node.js
 * it runs on, and a Node.js of another version (an upgrade, nvm, a package built elsewhere) records
 * its own the first time a command of that bundle succeeds. A missing, stale or rejected cache only
 * costs that compile.
 */
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { Script } from 'node:vm';
import { setting } from '../model/settings.js';
import { codeCachePath } from './code-cache.js';

export { CODE_CACHE_SUFFIX, codeCachePath } from './code-cache.js';

export interface LoadedBundle<T = unknown> {
  bundle: T;
  path: string;
  script: Script;
  /** No cache for this V8 was there: the bundle was compiled from its source (keepCodeCache records one). */
  cacheMissing: boolean;
}

function readCache(path: string): Buffer | undefined {
  try {
    return readFileSync(path);
  } catch {
    return undefined;
  }
}

/** Compile and run a CommonJS file the way require() would, with its code cache if there is one. */
export function loadBundle<T = unknown>(path: string): LoadedBundle<T> {
  const cachedData = readCache(codeCachePath(path));
  // Read as bytes and decoded apart: Node.js 20 reads a file straight into a string at a third of the speed.
  const script = new Script(Module.wrap(readFileSync(path).toString('utf8')), { filename: path, cachedData });
  const module = { exports: {} as unknown };
  const wrapper = script.runInThisContext() as (...args: unknown[]) => void;
  wrapper.call(module.exports, module.exports, createRequire(path), module, path, dirname(path));
  return { bundle: module.exports as T, path, script, cacheMissing: cachedData === undefined };
}

/**
 * Keep what V8 compiled while the bundle ran (the build runs each command
 * once for this), so the cache covers the functions a real run needs.
 */
export function writeCodeCache(loaded: LoadedBundle): void {
  const target = codeCachePath(loaded.path);
  // Two processes may record the same cache at once: each writes a file of its own and renames it.
  const partial = `${target}.${process.pid}.partial`;
  try {
    writeFileSync(partial, loaded.script.createCachedData());
    renameSync(partial, target);
  } catch (error) {
    rmSync(partial, { force: true });
    throw error;
  }
}

/**
 * Record the cache of a bundle that had none for this V8, after a run that went well: once per
 * bundle and Node.js version, where the program's folder may be written (elsewhere the bundle is
 * compiled at each start, as it would be with no cache). A cache V8 refused is left as it is: it is
 * this version's, so the refusal is a flag's, and a new one would be refused too.
 */
export function keepCodeCache(loaded: LoadedBundle): void {
  if (!loaded.cacheMissing) return;
  loaded.cacheMissing = false;
  try {
    writeCodeCache(loaded);
  } catch {
    // A read-only install: nothing is kept.
  }
}

/**
 * `require` for a bundle the commands load on demand (the PostgreSQL engine, the SQLite addon's driver):
 * through the same code cache as the command bundles. A build run with AGENT_BUS_BUILD_CODE_CACHE=engine
 * records it; a run on a Node.js with no cache for it records one as the process exits.
 */
export function requireBundle(path: string): unknown {
  const loaded = loadBundle(path);
  if (setting(process.env, 'AGENT_BUS_BUILD_CODE_CACHE') === 'engine') process.once('exit', () => writeCodeCache(loaded));
  else if (loaded.cacheMissing) process.once('exit', (code) => (code === 0 ? keepCodeCache(loaded) : undefined));
  return loaded.bundle;
}
