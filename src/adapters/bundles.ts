/**
 * Loads one of the program's CommonJS bundles with the V8 code cache the build wrote next to it.
 * Compiling a bundle that carries SQLite bindings and the bus's core is a large part of a short
 * command's start-up, and the cache turns it into a read. A missing, stale or rejected cache only
 * costs that compile.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { Script } from 'node:vm';
import { setting } from '../model/settings.js';

export const CODE_CACHE_SUFFIX = '.v8cache';

export interface LoadedBundle<T = unknown> {
  bundle: T;
  path: string;
  script: Script;
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
  // Read as bytes and decoded apart: Node.js 20 reads a file straight into a string at a third of the speed.
  const script = new Script(Module.wrap(readFileSync(path).toString('utf8')), {
    filename: path,
    cachedData: readCache(`${path}${CODE_CACHE_SUFFIX}`),
  });
  const module = { exports: {} as unknown };
  const wrapper = script.runInThisContext() as (...args: unknown[]) => void;
  wrapper.call(module.exports, module.exports, createRequire(path), module, path, dirname(path));
  return { bundle: module.exports as T, path, script };
}

/**
 * Keep what V8 compiled while the bundle ran (the build runs each command
 * once for this), so the cache covers the functions a real run needs.
 */
export function writeCodeCache(loaded: LoadedBundle): void {
  const target = `${loaded.path}${CODE_CACHE_SUFFIX}`;
  writeFileSync(`${target}.partial`, loaded.script.createCachedData());
  renameSync(`${target}.partial`, target);
}

/**
 * `require` for a bundle the commands load on demand (the PostgreSQL engine): through the same
 * code cache as the command bundles. A build run with AGENT_BUS_BUILD_CODE_CACHE=engine records it.
 */
export function requireBundle(path: string): unknown {
  const loaded = loadBundle(path);
  if (setting(process.env, 'AGENT_BUS_BUILD_CODE_CACHE') === 'engine') process.once('exit', () => writeCodeCache(loaded));
  return loaded.bundle;
}
