#!/usr/bin/env node
/**
 * The file `node` runs for `agent-bus` (dist/bin/cli.cjs): it loads the launcher (cli.ts, bundled as
 * dist/bin/launcher.cjs) with the launcher's V8 code cache, as the launcher loads a command's bundle.
 * Node.js compiles the file it is asked to run from its source at every start, with no cache: this one
 * is kept to the few lines that cost, and the launcher's compiling (a tenth of a hook's work above a bare
 * SQLite open) becomes a read. The build records the cache (AGENT_BUS_BUILD_CODE_CACHE=launcher); a
 * Node.js with none for its V8 records one after its first run that goes well, where the folder may be
 * written. A cache V8 refuses only costs the compile.
 */
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Script } from 'node:vm';
import { codeCachePath } from './adapters/code-cache.js';

const file = `${import.meta.dirname}/launcher.cjs`;
const cache = codeCachePath(file);
let cachedData: Buffer | undefined;
try {
  cachedData = readFileSync(cache);
} catch {
  // No cache for this V8 yet: compiled from the source, and recorded below.
}
// Wrapped as require() wraps a CommonJS file, and read as bytes (see adapters/bundles.ts).
const script = new Script(`(function (exports, require, module, __filename, __dirname) { ${readFileSync(file).toString('utf8')}\n});`, { filename: file, cachedData });
const launcherModule = { exports: {} };
(script.runInThisContext() as (...args: unknown[]) => void).call(launcherModule.exports, launcherModule.exports, createRequire(file), launcherModule, file, import.meta.dirname);

// (The launcher's settings are not read here: the registry is what this file leaves out. The build's own switch is read as it is written.)
const recording = process.env.AGENT_BUS_BUILD_CODE_CACHE === 'launcher';
if (recording || cachedData === undefined) {
  process.once('exit', (code) => {
    if (!recording && code !== 0) return;
    const partial = `${cache}.${process.pid}.partial`;
    try {
      writeFileSync(partial, script.createCachedData());
      renameSync(partial, cache);
    } catch (error) {
      rmSync(partial, { force: true });
      // A read-only install keeps none; the build must.
      if (recording) throw error;
    }
  });
}
