/**
 * Finds the CLI's bundle for a command line (`commands/<name>.cjs` beside the launcher, each with
 * the dispatcher and that one command) and loads it with its code cache (adapters/bundles.ts).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { loadBundle, type LoadedBundle } from '../adapters/bundles.js';
import type { CommandIo } from './spec.js';
import { REMOTE_HOOK_KINDS } from './remote-hooks.js';

export { CODE_CACHE_SUFFIX, codeCachePath, keepCodeCache, writeCodeCache } from '../adapters/bundles.js';

/** The bundle for everything that is not a command: help, --version, mistakes. */
export const DISPATCH_BUNDLE = '_dispatch';

export interface CliBundle {
  start(io: CommandIo): Promise<number>;
}

function bundleDirectory(): string {
  return join(import.meta.dirname, 'commands');
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

/** A command's bundle, loaded with its code cache. */
export function loadCommandBundle(path: string): LoadedBundle<CliBundle> {
  return loadBundle<CliBundle>(path);
}
