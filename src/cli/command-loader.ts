/**
 * Loads one of the CLI's bundles (`commands/<name>.cjs` beside the launcher)
 * with the V8 code cache the build wrote next to it. Compiling a bundle that
 * carries SQLite bindings and the bus's core is a large part of a short
 * command's start-up, and the cache turns it into a read. A missing, stale or
 * rejected cache only costs that compile.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';
import type { CommandIo } from './spec.js';
import { REMOTE_HOOK_KINDS } from './remote-hooks.js';

export const CODE_CACHE_SUFFIX = '.v8cache';
/** The bundle for everything that is not a command: help, --version, mistakes. */
export const DISPATCH_BUNDLE = '_dispatch';

export interface CliBundle {
  start(io: CommandIo): Promise<number>;
}

export interface LoadedBundle {
  bundle: CliBundle;
  path: string;
  script: Script;
}

function bundleDirectory(): string {
  return join(dirname(fileURLToPath(import.meta.url)), 'commands');
}


/**
 * The bundle for a command line: the command's own, when `word` names one; for a hook on a
 * machine set to use a hub (`hubSet`), its remote bundle, which holds none of the bus.
 */
export function bundleFor(word: string | undefined, hubSet: () => boolean = () => false): string {
  const path = word && /^[a-z][a-z-]*$/.test(word) ? join(bundleDirectory(), `${word}.cjs`) : '';
  if (path !== '' && Object.hasOwn(REMOTE_HOOK_KINDS, word as string) && hubSet()) {
    const remote = join(bundleDirectory(), `${word}.remote.cjs`);
    if (existsSync(remote)) return remote;
  }
  return path !== '' && existsSync(path) ? path : join(bundleDirectory(), `${DISPATCH_BUNDLE}.cjs`);
}

function readCache(path: string): Buffer | undefined {
  try {
    return readFileSync(path);
  } catch {
    return undefined;
  }
}

/** Compile and run a CommonJS file the way require() would, with its code cache if there is one. */
export function loadBundle(path: string): LoadedBundle {
  const script = new Script(Module.wrap(readFileSync(path, 'utf8')), {
    filename: path,
    cachedData: readCache(`${path}${CODE_CACHE_SUFFIX}`),
  });
  const module = { exports: {} as unknown };
  const wrapper = script.runInThisContext() as (...args: unknown[]) => void;
  wrapper.call(module.exports, module.exports, createRequire(path), module, path, dirname(path));
  return { bundle: module.exports as CliBundle, path, script };
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
  if (process.env.AGENT_BUS_BUILD_CODE_CACHE === 'engine') process.once('exit', () => writeCodeCache(loaded));
  return loaded.bundle;
}
