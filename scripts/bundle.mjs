#!/usr/bin/env node
// Bundles the CLI into dist/bin/: a small dispatcher (cli.cjs) and one
// self-contained file per command (commands/*.cjs), loaded only when that
// command runs. Hooks and `inbox` start a fresh process at every turn of every
// agent; resolving and compiling dozens of ES modules is most of their
// start-up, and CommonJS skips the ES module loader altogether.
// better-sqlite3's JavaScript is bundled; its compiled addon loads from node_modules.
import { build } from 'esbuild';
import { chmodSync, readdirSync, rmSync } from 'node:fs';

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
  // import() of a command becomes require(), so nothing starts the ES module loader.
  supported: { 'dynamic-import': false },
  logLevel: 'warning',
};

/** Leave each command out of the dispatcher; it loads the command's own bundle. */
const commandsStayOutside = {
  name: 'commands-stay-outside',
  setup(esbuild) {
    esbuild.onResolve({ filter: /^\.\/commands\/[\w-]+\.js$/ }, (args) => ({
      path: args.path.replace(/\.js$/, '.cjs'),
      external: true,
    }));
  },
};

await build({ ...common, entryPoints: ['src/cli.ts'], outfile: `${outdir}/cli.cjs`, plugins: [commandsStayOutside] });

const commands = readdirSync('src/cli/commands').filter((file) => file.endsWith('.ts'));
await build({
  ...common,
  entryPoints: commands.map((file) => `src/cli/commands/${file}`),
  outdir: `${outdir}/commands`,
  outExtension: { '.js': '.cjs' },
});
chmodSync(`${outdir}/cli.cjs`, 0o755);
