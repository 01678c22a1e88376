#!/usr/bin/env node
// Bundles the CLI into dist/bin/: a small dispatcher (cli.cjs) and one
// self-contained file per command (commands/<name>.cjs), loaded only when
// that command runs, each with a V8 code cache beside it.
// Hooks and `inbox` start a fresh process at every turn of every agent;
// resolving and compiling dozens of ES modules was most of their start-up.
// CommonJS skips the ES module loader altogether, and the code cache skips
// compiling the bundle. better-sqlite3's JavaScript is bundled; its compiled
// addon loads from node_modules.
import { build } from 'esbuild';
import { chmodSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { Script } from 'node:vm';

const outdir = 'dist/bin';
rmSync(outdir, { recursive: true, force: true });

const common = {
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  // Code written for ES modules asks import.meta.url where it lives.
  define: { 'import.meta.url': '__agentBusModuleUrl' },
  banner: { js: "'use strict';\nconst __agentBusModuleUrl = require('node:url').pathToFileURL(__filename).href;" },
  logLevel: 'warning',
};

await build({ ...common, entryPoints: ['src/cli.ts'], outfile: `${outdir}/cli.cjs` });
chmodSync(`${outdir}/cli.cjs`, 0o755);

const commands = readdirSync('src/cli/commands').filter((file) => file.endsWith('.ts'));
await build({
  ...common,
  entryPoints: commands.map((file) => `src/cli/commands/${file}`),
  outdir: `${outdir}/commands`,
  outExtension: { '.js': '.cjs' },
});

// The code cache: compile and initialise each bundle exactly as src/cli/command-loader.ts
// does (same wrapper text, or V8 rejects the cache), then keep what V8 compiled.
for (const file of commands) {
  const path = `${outdir}/commands/${file.replace(/\.ts$/, '.cjs')}`;
  const script = new Script(Module.wrap(readFileSync(path, 'utf8')), { filename: path });
  const module = { exports: {} };
  script.runInThisContext().call(module.exports, module.exports, createRequire(resolve(path)), module, resolve(path), dirname(resolve(path)));
  writeFileSync(`${path}.v8cache`, script.createCachedData());
}
