/**
 * Loads a command's own bundle, `commands/<name>.cjs` beside the dispatcher,
 * with the V8 code cache the build wrote next to it. Compiling a bundle that
 * carries SQLite bindings and the bus's core is the largest part of a short
 * command's start-up, and the cache turns it into a read. A missing, stale or
 * rejected cache only costs that compile.
 */
import { readFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';
import type { CommandRunner } from './spec.js';

export const CODE_CACHE_SUFFIX = '.v8cache';

export function commandBundlePath(name: string): string {
  return join(dirname(fileURLToPath(import.meta.url)), 'commands', `${name}.cjs`);
}

function readCache(path: string): Buffer | undefined {
  try {
    return readFileSync(path);
  } catch {
    return undefined;
  }
}

/** Compile and run a CommonJS file the way require() would, with an optional code cache. */
export function compileCommonJs(file: string, cachedData?: Buffer): { exports: unknown; script: Script } {
  const script = new Script(Module.wrap(readFileSync(file, 'utf8')), { filename: file, cachedData });
  const module = { exports: {} as unknown };
  const wrapper = script.runInThisContext() as (...args: unknown[]) => void;
  wrapper.call(module.exports, module.exports, createRequire(file), module, file, dirname(file));
  return { exports: module.exports, script };
}

export function loadCommand(name: string): CommandRunner {
  const file = commandBundlePath(name);
  const { exports } = compileCommonJs(file, readCache(`${file}${CODE_CACHE_SUFFIX}`));
  return (exports as { run: CommandRunner }).run;
}
