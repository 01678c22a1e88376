/**
 * The main suite (the README's test command) on other Node.js versions, as a
 * user running them would: each Node.js comes from the npm registry's
 * `node-<platform>-<arch>` package (the binary and its headers), and a copy
 * of the working tree is installed with it, so better-sqlite3 is compiled for
 * that Node.js against those headers. Nothing is downloaded from anywhere else.
 *
 *   node --import tsx scripts/test-on-node.ts 22.23.5 24.22.3
 *
 * The copies are installed side by side (compiling better-sqlite3 takes one
 * core a minute or two each), then the suites run one after the other.
 *
 * `--omit-addon VERSION` (a version to run on, too) installs that version's copy without the optional better-sqlite3 addon
 * (`npm ci --omit=optional`), as a user with no compiler has it: its suite runs on `node:sqlite` alone.
 *
 * `--fetch-only` puts the binaries in place and prints their paths, one a line.
 * `--prepare-into DIR` only installs the copies, into DIR/<version>, so CI can
 * do it while other work runs; `--prepared DIR` then runs the suites in them.
 * `--side-by-side` runs the versions' suites at once, each one's output printed whole as it ends.
 * However they ran, the last lines of each suite that failed are said again at the very end.
 */
import { spawn, spawnSync, type SpawnSyncOptions } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
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

/**
 * The folder holding bin/node and include/node for `version`, fetched from the npm registry once.
 * Safe when several processes ask at once (CI prepares these copies while the client suite fetches
 * Node.js 22 for Qwen Code): each unpacks in a scratch folder of its own, on the cache's file system,
 * and renames it into place in one step; the first rename wins, and the others use its folder.
 */
export function nodeFolder(version: string): string {
  const folder = join(CACHE, `node-${version}`);
  if (existsSync(join(folder, 'bin', 'node'))) return folder;
  mkdirSync(CACHE, { recursive: true });
  const scratch = mkdtempSync(join(CACHE, `.fetch-${version}-`));
  try {
    const spec = `node-${process.platform}-${process.arch}@${version}`;
    if (run('npm', ['pack', spec, '--pack-destination', scratch, '--silent'], { cwd: scratch, stdio: ['ignore', 'ignore', 'inherit'] }) !== 0) {
      throw new Error(`npm pack ${spec} failed`);
    }
    const tarball = readdirSync(scratch).find((name) => name.endsWith('.tgz'));
    if (!tarball || run('tar', ['-xzf', tarball], { cwd: scratch }) !== 0) throw new Error(`cannot unpack ${spec}`);
    // A folder there without bin/node is no rename's (a rename is whole): what an interrupted older fetch left.
    if (existsSync(folder) && !existsSync(join(folder, 'bin', 'node'))) rmSync(folder, { recursive: true, force: true });
    try {
      renameSync(join(scratch, 'package'), folder);
    } catch (error) {
      // Another fetch put its folder there first: the same version, whole.
      const code = (error as NodeJS.ErrnoException).code;
      if (!((code === 'ENOTEMPTY' || code === 'EEXIST') && existsSync(join(folder, 'bin', 'node')))) throw error;
    }
    return folder;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * The environment a user of that Node.js would have: it first on PATH, npm building addons against its
 * headers, and nothing left of the npm that may have started this script (its NODE, its execpath).
 */
export function environmentFor(folder: string): NodeJS.ProcessEnv {
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

/** A command run without waiting on it, so copies install side by side; its exit code. */
function runAsync(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<number> {
  return new Promise((resolveExit, reject) => {
    const child = spawn(command, args, { ...options, stdio: 'inherit' });
    child.on('error', reject);
    child.on('close', (code) => resolveExit(code ?? 1));
  });
}

/** Marks a copy whose install finished and whose addon loads: the suite may run in it. */
const READY = '.agent-bus-node-ready';

/** A copy of the working tree in `copy`, installed with Node.js `version` (npm ci, the addon compiled for it unless omitted). */
export async function prepare(version: string, copy: string, withAddon = true): Promise<void> {
  const folder = nodeFolder(version);
  mkdirSync(copy, { recursive: true });
  copyWorkingTree(ROOT, copy);
  // A repository as a clone is one: the suite copies its own working tree in turn (the README's first command).
  if (run('git', ['init', '-q'], { cwd: copy }) !== 0 || run('git', ['add', '-A'], { cwd: copy }) !== 0) throw new Error(`cannot make ${copy} a git repository`);
  const options = { cwd: copy, env: environmentFor(folder) };
  const reported = spawnSync('node', ['-p', 'process.versions.node'], { ...options, encoding: 'utf8' }).stdout.trim();
  if (reported !== version) throw new Error(`node on PATH is ${reported}, not ${version}`);
  console.log(`== installing a copy for Node.js ${version} (${copy}) ==`);
  const started = Date.now();
  if ((await runAsync('npm', ['ci', '--no-audit', '--no-fund', ...(withAddon ? [] : ['--omit=optional'])], options)) !== 0) throw new Error(`npm ci with Node.js ${version} failed`);
  console.log(`== installed the copy for Node.js ${version} ${withAddon ? 'with' : 'without'} the addon in ${Math.round((Date.now() - started) / 1000)} s ==`);
  if (withAddon) {
    // The addon is the one compiled for this Node.js, or the suite would not be testing it.
    if (run('node', ['-e', "new (require('better-sqlite3'))(':memory:').close()"], options) !== 0) throw new Error(`better-sqlite3 does not load on Node.js ${version}`);
  } else if (existsSync(join(copy, 'node_modules', 'better-sqlite3'))) {
    throw new Error(`the copy for Node.js ${version} was to have no addon, but better-sqlite3 is installed`);
  }
  writeFileSync(join(copy, READY), `${version}\n`);
}

/** Install every version's copy under `into`, all at once; the versions that failed, each said why. */
async function prepareAll(versions: string[], into: string, omitAddon: string[]): Promise<string[]> {
  // One at a time: the binaries come from npm's cache or the registry in a second or two.
  for (const version of versions) nodeFolder(version);
  const outcomes = await Promise.allSettled(versions.map((version) => prepare(version, join(into, version), !omitAddon.includes(version))));
  return versions.filter((version, index) => {
    const outcome = outcomes[index];
    if (outcome?.status !== 'rejected') return false;
    console.error(`agent-bus: ${(outcome.reason as Error).message}`);
    return true;
  });
}

/** What a suite printed last: enough to hold run-tests' list of failed tests and its count. */
const TAIL_LINES = 40;

interface SuiteOutcome {
  version: string;
  passed: boolean;
  /** Its last lines, said again at the end: a later version's log would push them out of sight. */
  tail: string[];
}

/**
 * The README's test command in a version's copy. Its output goes to ours as it comes, or, when
 * `buffered` (suites running side by side), whole once it ends, so no two suites' lines interleave.
 */
function suiteIn(version: string, copy: string, buffered: boolean): Promise<SuiteOutcome> {
  return new Promise((resolveOutcome, reject) => {
    const heading = `\n== the main suite on Node.js ${version} (${copy}) ==\n`;
    if (!buffered) process.stdout.write(heading);
    const child = spawn('npm', ['test'], { cwd: copy, env: environmentFor(nodeFolder(version)), stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    const take = (sink: NodeJS.WriteStream) => (chunk: Buffer) => {
      chunks.push(chunk);
      if (!buffered) sink.write(chunk);
    };
    child.stdout.on('data', take(process.stdout));
    child.stderr.on('data', take(process.stderr));
    child.on('error', reject);
    child.on('close', (code) => {
      const output = Buffer.concat(chunks).toString('utf8');
      if (buffered) process.stdout.write(heading + output);
      resolveOutcome({ version, passed: code === 0, tail: output.trimEnd().split('\n').slice(-TAIL_LINES) });
    });
  });
}

/** The command line (this module is imported too: by the benchmark, for the Node.js binaries and copies). */
async function main(): Promise<void> {
  function option(name: string): string | undefined {
    const at = args.indexOf(name);
    if (at < 0) return undefined;
    const value = args[at + 1];
    if (value === undefined || value.startsWith('--')) {
      console.error(`agent-bus: ${name} needs a folder`);
      process.exit(2);
    }
    return resolve(value);
  }

  const args = process.argv.slice(2);
  const prepareInto = option('--prepare-into');
  const prepared = option('--prepared');
  const omitAddon = args.filter((_arg, index) => args[index - 1] === '--omit-addon');
  const sideBySide = args.includes('--side-by-side');
  // A version named by --omit-addon is one to run on as well.
  const versions = [...new Set(args.filter((arg, index) => !arg.startsWith('--') && !['--prepare-into', '--prepared'].includes(args[index - 1] ?? '')))];
  if (versions.length === 0) {
    console.error('usage: node --import tsx scripts/test-on-node.ts [--fetch-only | --prepare-into DIR | --prepared DIR] [--side-by-side] [--omit-addon VERSION]... VERSION...');
    process.exit(2);
  }
  if (args.includes('--fetch-only')) {
    for (const version of versions) console.log(join(nodeFolder(version), 'bin', 'node'));
    return;
  }
  if (prepareInto !== undefined) {
    const failed = await prepareAll(versions, prepareInto, omitAddon);
    process.exit(failed.length === 0 ? 0 : 1);
  }
  const scratch = prepared ?? mkdtempSync(join(tmpdir(), 'agent-bus-on-node-'));
  try {
    // Copies installed earlier are used as they are; a version without one is installed now.
    const missing = versions.filter((version) => !existsSync(join(scratch, version, READY)));
    const unprepared = missing.length > 0 ? await prepareAll(missing, scratch, omitAddon) : [];
    const runnable = versions.filter((version) => !unprepared.includes(version) && existsSync(join(scratch, version, READY)));
    const outcomes: SuiteOutcome[] = [];
    if (sideBySide) {
      outcomes.push(...(await Promise.all(runnable.map((version) => suiteIn(version, join(scratch, version), true)))));
    } else {
      for (const version of runnable) outcomes.push(await suiteIn(version, join(scratch, version), false));
    }
    const failed = versions.filter((version) => !outcomes.some((outcome) => outcome.version === version && outcome.passed));
    for (const outcome of outcomes.filter((each) => !each.passed)) {
      console.log(`\n== how the main suite ended on Node.js ${outcome.version} ==\n${outcome.tail.join('\n')}`);
    }
    console.log(failed.length === 0 ? `\nthe main suite passed on Node.js ${versions.join(', ')}` : `\nthe main suite failed on Node.js ${failed.join(', ')}`);
    process.exitCode = failed.length === 0 ? 0 : 1;
  } finally {
    if (prepared === undefined) rmSync(scratch, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(new URL(import.meta.url).pathname)) await main();
