/**
 * The main suite (the README's test command) on other Node.js versions, as a
 * user running them would: each Node.js comes from the npm registry's
 * `node-<platform>-<arch>` package (the binary and its headers), and a copy
 * of the working tree is installed with it, so better-sqlite3 is compiled for
 * that Node.js against those headers. Nothing is downloaded from anywhere else.
 *
 *   node --import tsx scripts/test-on-node.ts 22.23.5 24.22.3
 *
 * `--fetch-only` puts the binaries in place and prints their paths, one a line.
 */
import { spawnSync, type SpawnSyncOptions } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { copyWorkingTree } from '../test/helpers/working-tree.js';

const ROOT = resolve(new URL('..', import.meta.url).pathname);
/** Kept between runs of this script on one checkout; `npm ci` clears it with the rest of node_modules. */
const CACHE = join(ROOT, 'node_modules', '.cache', 'agent-bus-node');

function run(command: string, args: string[], options: SpawnSyncOptions): number {
  const result = spawnSync(command, args, { stdio: 'inherit', ...options });
  if (result.error) throw result.error;
  return result.status ?? 1;
}

/** The folder holding bin/node and include/node for `version`, fetched from the npm registry once. */
export function nodeFolder(version: string): string {
  const folder = join(CACHE, `node-${version}`);
  if (existsSync(join(folder, 'bin', 'node'))) return folder;
  const scratch = mkdtempSync(join(tmpdir(), 'agent-bus-node-'));
  try {
    const spec = `node-${process.platform}-${process.arch}@${version}`;
    if (run('npm', ['pack', spec, '--pack-destination', scratch, '--silent'], { cwd: scratch, stdio: ['ignore', 'ignore', 'inherit'] }) !== 0) {
      throw new Error(`npm pack ${spec} failed`);
    }
    const tarball = readdirSync(scratch).find((name) => name.endsWith('.tgz'));
    if (!tarball || run('tar', ['-xzf', tarball], { cwd: scratch }) !== 0) throw new Error(`cannot unpack ${spec}`);
    mkdirSync(CACHE, { recursive: true });
    rmSync(folder, { recursive: true, force: true });
    renameSync(join(scratch, 'package'), folder);
    return folder;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * The environment a user of that Node.js would have: it first on PATH, npm building addons against its
 * headers, and nothing left of the npm that may have started this script (its NODE, its execpath).
 */
function environmentFor(folder: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (key === 'NODE' || key === 'npm_node_execpath' || key === 'npm_execpath' || key.startsWith('npm_lifecycle_') || key.startsWith('npm_package_')) continue;
    env[key] = value;
  }
  env.PATH = `${join(folder, 'bin')}:${process.env.PATH ?? ''}`;
  env.npm_config_nodedir = folder;
  // The suite's check that a Node.js of another ABI gets a clear error: this machine's own Node.js.
  env.AGENT_BUS_TEST_OTHER_NODE = process.execPath;
  // The end-to-end suites' PostgreSQL pass runs once, on this machine's Node.js (the README's test command).
  env.AGENT_BUS_TEST_ENGINES = 'sqlite';
  // The soak is load, not a matter of the Node.js version: it runs once too.
  env.AGENT_BUS_TEST_SOAK = '0';
  // The README's first command installs from a clone with `npm ci`, as this script has just done with
  // this Node.js, and then does what the main suite checks: it runs once, on this machine's Node.js.
  env.AGENT_BUS_TEST_FIRST_COMMAND = '0';
  return env;
}

function suiteOn(version: string): boolean {
  const folder = nodeFolder(version);
  const copy = mkdtempSync(join(tmpdir(), `agent-bus-on-node-${version}-`));
  try {
    copyWorkingTree(ROOT, copy);
    // A repository as a clone is one: the suite copies its own working tree in turn (the README's first command).
    if (run('git', ['init', '-q'], { cwd: copy }) !== 0 || run('git', ['add', '-A'], { cwd: copy }) !== 0) throw new Error(`cannot make ${copy} a git repository`);
    const env = environmentFor(folder);
    const options = { cwd: copy, env };
    const reported = spawnSync('node', ['-p', 'process.versions.node'], { ...options, encoding: 'utf8' }).stdout.trim();
    if (reported !== version) throw new Error(`node on PATH is ${reported}, not ${version}`);
    console.log(`\n== the main suite on Node.js ${version} (${copy}) ==`);
    if (run('npm', ['ci', '--no-audit', '--no-fund'], options) !== 0) return false;
    // The addon is the one compiled for this Node.js, or the suite would not be testing it.
    if (run('node', ['-e', "new (require('better-sqlite3'))(':memory:').close()"], options) !== 0) return false;
    return run('npm', ['test'], options) === 0;
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
}

const args = process.argv.slice(2);
const versions = args.filter((arg) => !arg.startsWith('--'));
if (versions.length === 0) {
  console.error('usage: node --import tsx scripts/test-on-node.ts [--fetch-only] VERSION...');
  process.exit(2);
}
if (args.includes('--fetch-only')) {
  for (const version of versions) console.log(join(nodeFolder(version), 'bin', 'node'));
  process.exit(0);
}
const failed = versions.filter((version) => !suiteOn(version));
console.log(failed.length === 0 ? `\nthe main suite passed on Node.js ${versions.join(', ')}` : `\nthe main suite failed on Node.js ${failed.join(', ')}`);
process.exit(failed.length === 0 ? 0 : 1);
