#!/usr/bin/env node
// Builds the CLI into dist/bin/: a small launcher (cli.cjs) and one
// self-contained bundle per command (commands/<name>.cjs: the dispatcher plus
// that command), plus commands/_dispatch.cjs for help and mistakes. Each bundle
// gets a V8 code cache recorded from a real run.
//
// Why: hooks and `inbox` start a fresh process at every turn of every agent.
// Resolving and compiling dozens of ES modules was most of their start-up;
// CommonJS bundles skip the ES module loader, and the code cache skips
// compiling. SQLite is Node.js's own where it has one (22.13 and later); the better-sqlite3 driver
// (its JavaScript and our adapter) is a bundle of its own, loaded only where it is the driver, and
// its compiled addon loads from node_modules.
import { build } from 'esbuild';
import { spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import { copyFileSync, existsSync, chmodSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const outdir = 'dist/bin';
rmSync(outdir, { recursive: true, force: true });

const common = {
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  // Code written for ES modules asks import.meta where it lives: the file and folder are CommonJS's own.
  // (Making a file URL at every start costs a hook half a millisecond; the source asks for paths.)
  define: { 'import.meta.filename': '__filename', 'import.meta.dirname': '__dirname' },
  banner: { js: "'use strict';" },
  logLevel: 'warning',
  // Prefer a package's ES module build: jsonc-parser's UMD main requires its parts dynamically.
  mainFields: ['module', 'main'],
  // Smaller source to read, parse and keep in memory; names stay for stack traces.
  minifyWhitespace: true,
  minifySyntax: true,
};

// string-width builds a grapheme segmenter and Unicode-property expressions (RGI_Emoji among them)
// when its module loads: forty milliseconds at every start of `send`, `agents`, `tail` and the rest
// that print a listing, though most text is plain ASCII, whose width the formatter counts itself.
// The bundles reach it through a stand-in that loads it on first use.
const lazyStringWidth = {
  name: 'lazy-string-width',
  setup(builder) {
    builder.onResolve({ filter: /^string-width$/ }, async (args) => {
      if (args.namespace === 'lazy-string-width') return undefined;
      const real = await builder.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, namespace: 'lazy-string-width' });
      return real.errors.length > 0 ? { errors: real.errors } : { path: real.path, namespace: 'lazy-string-width' };
    });
    builder.onLoad({ filter: /.*/, namespace: 'lazy-string-width' }, (args) => ({
      contents: `let loaded;\nexport default function stringWidth(...args) {\n  return (loaded ??= require(${JSON.stringify(args.path)}).default)(...args);\n}\n`,
      resolveDir: dirname(args.path),
      loader: 'js',
    }));
  },
};
common.plugins = [lazyStringWidth];

// The launcher (src/cli.ts) and the file node runs (src/launch.ts), which loads the launcher with its code cache.
await build({ ...common, entryPoints: ['src/cli.ts'], outfile: `${outdir}/launcher.cjs` });
await build({ ...common, entryPoints: ['src/launch.ts'], outfile: `${outdir}/cli.cjs` });
// The better-sqlite3 driver: loaded only where it is the SQLite driver in use (Node.js 20, or
// AGENT_BUS_SQLITE_DRIVER=better-sqlite3). better-sqlite3 is an optional dependency: where npm could
// not build it (no compiler, on a Node.js with SQLite built in) it is not installed, and there is no
// such bundle; the driver then says what is missing if it is ever asked for.
const addonInstalled = existsSync(resolve('node_modules', 'better-sqlite3', 'package.json'));
if (addonInstalled) await build({ ...common, entryPoints: ['src/store/sqlite/addon-driver.ts'], outfile: `${outdir}/sqlite-addon.cjs` });
else console.log('better-sqlite3 is not installed (an optional dependency): SQLite is Node.js\'s own, node:sqlite');
// The brain's refresh (a YAML parser, an HTTP client): hooks load it only when a refresh is due.
await build({ ...common, entryPoints: ['src/brain/refresh.ts'], outfile: `${outdir}/brain-refresh.cjs` });
// What reads a shell command's written files (and tree-sitter's bash grammar, whose WebAssembly stays in
// node_modules): a pre-tool hook loads it only for a shell command that may write one.
await build({ ...common, entryPoints: ['src/clients/shell-writes.ts'], outfile: `${outdir}/shell-writes.cjs` });
// The PostgreSQL engine and its driver: loaded only when AGENT_BUS_DB is a postgres:// URL.
// The driver asks whether it runs in a Cloudflare Worker by touching the global Response, which
// loads Node's fetch (undici) at every start: ten milliseconds of a hook's budget. It never does.
// It also loads node:crypto and its Web Crypto at start-up (two milliseconds more), though it
// needs them only to answer a password challenge: its crypto module is bundled behind a stand-in
// that loads it on first use.
const lazyDriverCrypto = {
  name: 'lazy-driver-crypto',
  setup(builder) {
    builder.onResolve({ filter: /^\.\/(crypto\/)?utils$/ }, (args) => {
      const target = resolve(args.resolveDir, `${args.path}.js`);
      return /[\\/]node_modules[\\/]pg[\\/]lib[\\/]crypto[\\/]utils\.js$/.test(target) ? { path: target, namespace: 'lazy-driver-crypto' } : undefined;
    });
    builder.onLoad({ filter: /.*/, namespace: 'lazy-driver-crypto' }, (args) => ({
      contents: `let loaded;\nmodule.exports = new Proxy({}, { get: (_, name) => (loaded ??= require(${JSON.stringify(args.path)}))[name] });\n`,
      resolveDir: dirname(args.path),
      loader: 'js',
    }));
  },
};
await build({
  ...common,
  entryPoints: ['src/store/postgres/store.ts'],
  outfile: `${outdir}/store-postgres.cjs`,
  // Optional dependencies of the driver it never loads here (npm ci --omit=optional leaves them out).
  external: ['pg-native', 'pg-cloudflare'],
  define: { ...common.define, Response: 'undefined', navigator: 'undefined' },
  plugins: [...common.plugins, lazyDriverCrypto],
});
// The dashboard's page: one script and one style sheet for the browser, nothing fetched from elsewhere.
const webdir = 'dist/web';
rmSync(webdir, { recursive: true, force: true });
await build({ entryPoints: ['src/web/app.ts'], outfile: `${webdir}/app.js`, bundle: true, format: 'iife', platform: 'browser', target: 'es2022', minify: true, logLevel: 'warning' });
await build({ entryPoints: ['src/web/app.css'], outfile: `${webdir}/app.css`, bundle: true, minify: true, logLevel: 'warning' });
for (const file of ['index.html', 'icon.svg']) copyFileSync(`src/web/${file}`, `${webdir}/${file}`);
chmodSync(`${outdir}/cli.cjs`, 0o755);

// Every command's spec (src/cli/commands.ts), as data: each command's bundle carries its own alone,
// and the build names each bundle's warm-up run from it.
const specs = mkdtempSync(join(tmpdir(), 'agent-bus-specs-'));
await build({ ...common, entryPoints: ['src/cli/commands.ts'], outfile: join(specs, 'commands.mjs'), format: 'esm', banner: {}, define: {}, plugins: [] });
const { COMMANDS } = await import(pathToFileURL(join(specs, 'commands.mjs')).href);
rmSync(specs, { recursive: true, force: true });

/**
 * A command's bundle runs only that command (the launcher picks it by name; help, the version and
 * mistakes go to _dispatch): it gets that command's spec alone in place of the list of all of them,
 * whose text and building are a large part of a hook's start-up.
 */
const ownSpecOnly = (name) => ({
  name: 'own-spec-only',
  setup(builder) {
    builder.onResolve({ filter: /^\.\/commands\.js$/ }, (args) => (['main.ts', 'help.ts'].some((file) => args.importer.endsWith(join('src', 'cli', file))) ? { path: name, namespace: 'own-spec-only' } : undefined));
    builder.onLoad({ filter: /.*/, namespace: 'own-spec-only' }, () => {
      const spec = COMMANDS.find((command) => command.name === name);
      if (!spec) throw new Error(`no spec for the '${name}' bundle in src/cli/commands.ts`);
      return {
        contents: `export const COMMANDS = [${JSON.stringify(spec)}];\nexport function findCommand(name) {\n  return COMMANDS.find((command) => command.name === name);\n}\n`,
        loader: 'js',
      };
    });
  },
});

const cli = resolve('src/cli');
const bundle = (name, contents, plugins = common.plugins) =>
  build({ ...common, plugins, stdin: { contents, resolveDir: cli, loader: 'ts', sourcefile: `${name}-bundle.ts` }, outfile: `${outdir}/commands/${name}.cjs` });

const commands = readdirSync('src/cli/commands').filter((file) => file.endsWith('.ts')).map((file) => file.replace(/\.ts$/, ''));
// A hook on a machine set to use a hub makes one request: its bundle holds that, none of the bus (the list is
// src/cli/remote-hooks.ts's, which the launcher reads).
const remoteHooks = ['hook-user-prompt', 'hook-stop', 'hook-session-start', 'hook-pre-tool', 'hook-notification', 'hook-session-end'];
await Promise.all([
  ...remoteHooks.map((name) =>
    bundle(
      `${name}.remote`,
      `import { startRemoteHook } from './remote-hook-command.js';\n` +
        `export const start = (io) => startRemoteHook('${name}', io, __dirname);\n`,
    ),
  ),
  bundle('_dispatch', `import { main } from './main.js';\nexport const start = (io) => main(io, () => undefined);\n`),
  ...commands.map((name) =>
    bundle(
      name,
      `import { main } from './main.js';\nimport { run } from './commands/${name}.js';\n` +
        `export const start = (io) => main(io, (wanted) => (wanted === '${name}' ? run : undefined));\n`,
      [...common.plugins, ownSpecOnly(name)],
    ),
  ),
]);

// Record each bundle's code cache from a representative run on a scratch bus: each command's spec
// (src/cli/commands.ts, read above) names its run. A cache is named for the V8 that recorded it
// (src/adapters/bundles.ts): another Node.js records its own on its first run of a command.
const codeCache = (file) => `${file}.${process.versions.v8}-${process.arch}.v8cache`;
const warmups = { _dispatch: { args: ['--help'] }, ...Object.fromEntries(COMMANDS.map((command) => [command.name, command.warmup])) };
const scratch = mkdtempSync(join(tmpdir(), 'agent-bus-build-'));
try {
  const env = {
    PATH: process.env.PATH,
    HOME: scratch,
    AGENT_BUS_DB: join(scratch, 'bus.db'),
    AGENT_BUS_AUDIT_LOG: join(scratch, 'audit.log'),
    AGENT_BUS_BUILD_CODE_CACHE: '1',
    NO_COLOR: '1',
  };
  for (const name of ['_dispatch', ...commands]) {
    const warmup = warmups[name];
    if (!warmup) throw new Error(`no warm-up run for the '${name}' bundle: give its spec one in src/cli/commands.ts`);
    const { args } = warmup;
    const hookEnv = name.startsWith('hook-') || name === 'statusline' ? { AGENT_BUS_NAME: 'warmup/claude', AGENT_BUS_REPO: scratch, AGENT_BUS_CHANNELS: 'warmup' } : {};
    if (name.startsWith('hook-')) {
      // (Each hook's run takes the mail; the next hook gets a message of its own.)
      spawnSync(process.execPath, [resolve(outdir, 'cli.cjs'), 'send', 'mail for the hook', '--to', 'warmup/claude', '--name', 'warmup/claude'], { env, cwd: scratch });
    }
    const input = name.startsWith('hook-') ? JSON.stringify({ session_id: 'warmup-session', cwd: scratch }) : '{}';
    const result = spawnSync(process.execPath, [resolve(outdir, 'cli.cjs'), ...args], { env: { ...env, ...hookEnv }, cwd: scratch, encoding: 'utf8', input });
    if (result.status !== (warmup.exitsWith ?? 0) && !warmup.refused) throw new Error(`warm-up of '${name}' failed (${result.status}): ${result.stderr}`);
  }
  // The launcher's cache: a hook's run (with mail, as the hooks' warm-ups have) compiles what it runs of the launcher.
  spawnSync(process.execPath, [resolve(outdir, 'cli.cjs'), 'send', 'mail for the hook', '--to', 'warmup/claude', '--name', 'warmup/claude'], { env, cwd: scratch });
  const launcherRun = spawnSync(process.execPath, [resolve(outdir, 'cli.cjs'), 'hook-user-prompt', '--client', 'claude'], {
    env: { ...env, AGENT_BUS_BUILD_CODE_CACHE: 'launcher', AGENT_BUS_NAME: 'warmup/claude', AGENT_BUS_REPO: scratch, AGENT_BUS_CHANNELS: 'warmup' },
    cwd: scratch,
    encoding: 'utf8',
    input: JSON.stringify({ session_id: 'warmup-session', cwd: scratch }),
  });
  if (launcherRun.status !== 0 || !existsSync(codeCache(resolve(outdir, 'launcher.cjs')))) throw new Error(`warm-up of the launcher failed (${launcherRun.status}): ${launcherRun.stderr}`);
  // The PostgreSQL engine's bundle: a hook run against a server that refuses it compiles its start-up and connect paths.
  const engineRun = spawnSync(process.execPath, [resolve(outdir, 'cli.cjs'), 'hook-user-prompt', '--client', 'claude'], {
    env: { ...env, AGENT_BUS_BUILD_CODE_CACHE: 'engine', AGENT_BUS_DB: 'postgres://warmup@127.0.0.1:1/warmup', AGENT_BUS_HOME: scratch, AGENT_BUS_NAME: 'warmup/claude' },
    cwd: scratch,
    encoding: 'utf8',
    input: '{}',
  });
  if (engineRun.status !== 0) throw new Error(`warm-up of the PostgreSQL engine failed (${engineRun.status}): ${engineRun.stderr}`);
  // The addon driver's bundle, where the addon is built: a hook run on it compiles its open and statement paths.
  if (addonInstalled && existsSync(resolve('node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node'))) {
    const addonRun = spawnSync(process.execPath, [resolve(outdir, 'cli.cjs'), 'hook-user-prompt', '--client', 'claude'], {
      env: { ...env, AGENT_BUS_BUILD_CODE_CACHE: 'engine', AGENT_BUS_SQLITE_DRIVER: 'better-sqlite3', AGENT_BUS_NAME: 'warmup/claude', AGENT_BUS_REPO: scratch },
      cwd: scratch,
      encoding: 'utf8',
      input: '{}',
    });
    if (addonRun.status !== 0 || !existsSync(codeCache(resolve(outdir, 'sqlite-addon.cjs')))) throw new Error(`warm-up of the better-sqlite3 driver failed (${addonRun.status}): ${addonRun.stderr}`);
  }
  // The remote hooks: each run against a stand-in hub that answers as a hub does, so the cache covers the whole request.
  const hub = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"output":""}');
    });
  });
  await new Promise((done) => hub.listen(0, '127.0.0.1', done));
  try {
    for (const name of remoteHooks) {
      const status = await new Promise((done) => {
        const child = spawn(process.execPath, [resolve(outdir, 'cli.cjs'), name, '--client', 'claude'], {
          env: { ...env, AGENT_BUS_URL: `http://127.0.0.1:${hub.address().port}`, AGENT_BUS_TOKEN: 'warmup' },
          cwd: scratch,
          stdio: ['pipe', 'ignore', 'inherit'],
        });
        child.stdin.end('{"session_id":"warmup-session"}');
        child.on('close', done);
      });
      if (status !== 0) throw new Error(`warm-up of the remote '${name}' bundle failed (${status})`);
      if (!existsSync(codeCache(resolve(outdir, 'commands', `${name}.remote.cjs`)))) throw new Error(`the remote '${name}' bundle wrote no code cache`);
    }
  } finally {
    hub.close();
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
