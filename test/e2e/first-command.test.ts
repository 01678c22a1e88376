/**
 * The README's first command, verbatim, as a newcomer runs it on a fresh
 * clone: install, build, the global install, and what the bus then shows. It
 * runs in a copy of the working tree, under a temp HOME, with npm's global
 * prefix in the temp folder, so nothing of the machine's is touched.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../helpers/bus-env.js';
import { copyWorkingTree } from '../helpers/working-tree.js';
import { machineNpmSettings, pathWithoutCompilers } from '../helpers/no-compiler.js';

/** The first shell block of the README's first section. */
function firstCommand(): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Set up on a fresh machine'));
  const block = /```sh\n([^\n]+)\n```/.exec(section);
  assert.ok(block, 'the README opens with a shell block');
  return (block as RegExpExecArray)[1] as string;
}

const SKIP =
  process.env.AGENT_BUS_TEST_FIRST_COMMAND === '0'
    ? "AGENT_BUS_TEST_FIRST_COMMAND=0 (the other Node.js versions, installed from a clone already: it runs once, on this machine's)"
    : false;

/** A Node.js with SQLite built in to run the first command on without a compiler: the other Node.js CI names. */
function builtinSqliteNode(): string | null {
  const node = process.env.AGENT_BUS_TEST_OTHER_NODE ?? '';
  if (node === '' || !existsSync(node)) return null;
  return spawnSync(node, ['-p', "process.getBuiltinModule('node:sqlite') ? 'yes' : 'no'"], { encoding: 'utf8' }).stdout.trim() === 'yes' ? node : null;
}

test("the README's first command installs agent-bus and shows mail sent, waiting, read and audited", { timeout: 15 * 60_000, skip: SKIP }, () => {
  const command = firstCommand();
  assert.match(command, /^npm ci && npm run build && npm install -g \. && /, 'it installs from the clone');
  const dir = mkdtempSync(join(tmpdir(), 'agent-bus-first-command-'));
  try {
    firstCommandRuns(command, dir, process.execPath, process.env.PATH ?? '', true);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

const builtinNode = builtinSqliteNode();

test("the README's first command works on a Node.js with SQLite built in and no compiler on PATH: nothing needs the addon", { timeout: 15 * 60_000, skip: SKIP || (builtinNode === null ? 'needs AGENT_BUS_TEST_OTHER_NODE: a Node.js 22.13 or later (.ci/run sets it)' : false) }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'agent-bus-no-compiler-'));
  try {
    const path = pathWithoutCompilers(join(dir, 'bin'));
    assert.equal(spawnSync('bash', ['-c', 'command -v cc || command -v gcc || command -v g++ || command -v make || command -v python3'], { env: { PATH: path }, encoding: 'utf8' }).stdout, '', 'no compiler is on that PATH');
    const clone = firstCommandRuns(firstCommand(), dir, builtinNode as string, path, false);
    assert.ok(!existsSync(join(clone, 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node')), 'the addon was not built (there was nothing to build it with)');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/**
 * Run the first command in a fresh copy of the tree under `dir`, with `node` first on `path`, check
 * what the demo shows, and return the copy's folder.
 */
function firstCommandRuns(command: string, dir: string, node: string, path: string, withMachineCompilerCache: boolean): string {
  const clone = join(dir, 'agent-bus');
  const home = join(dir, 'home');
  const prefix = join(dir, 'global');
  const tmp = join(dir, 'tmp');
  for (const folder of [clone, home, prefix, tmp]) mkdirSync(folder, { recursive: true });
  copyWorkingTree(ROOT, clone);
  // Only the machine's PATH and npm settings: no agent-bus variable, no npm_* of the npm running the tests.
  const env: NodeJS.ProcessEnv = {
    PATH: [join(prefix, 'bin'), dirname(node), path].join(delimiter),
    HOME: home,
    TMPDIR: tmp,
    NO_COLOR: '1',
    npm_config_prefix: prefix,
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
    // Node's headers are this machine's Node.js's: another Node.js finds its own.
    ...Object.fromEntries(Object.entries(machineNpmSettings()).filter(([key]) => node === process.execPath || key !== 'npm_config_nodedir')),
    // The machine's compiler cache, if it keeps one (CI does), so better-sqlite3's SQLite is not compiled again.
    ...(withMachineCompilerCache ? Object.fromEntries(Object.entries(process.env).filter(([key]) => key.startsWith('CCACHE_'))) : {}),
  };
  const run = spawnSync('bash', ['-c', command], { cwd: clone, env, encoding: 'utf8', timeout: 14 * 60_000, maxBuffer: 64 * 1024 * 1024 });
  assert.equal(run.status, 0, `the first command failed (${run.status}): ${run.stderr.slice(-6000)}`);

  const installed = join(prefix, 'bin', 'agent-bus');
  assert.ok(existsSync(installed), 'npm install -g put agent-bus on the PATH');
  assert.equal(realpathSync(installed), join(realpathSync(clone), 'dist', 'bin', 'cli.cjs'), 'the agent-bus that ran is the one just built');

  const out = run.stdout.slice(run.stdout.indexOf('agent-bus demo:'));
  assert.ok(out.startsWith('agent-bus demo:'), run.stdout.slice(-2000));
  assert.match(out, /^sent [0-9a-f]{12} {2}human +→ demo\/claude +hello from \S+ {2}\(thread [0-9a-f]{12}\)$/m, 'mail sent');
  assert.match(out, /^ {2}demo\/claude +seen just now {2}pending=1$/m, 'waiting in an inbox');
  assert.match(out, /^human +repo=~ {2}seen just now {2}pending=0$/m, 'the human has no repo');
  assert.match(out, /^just now {2}human → demo\/claude {2}[0-9a-f]{12} {2}\(thread [0-9a-f]{12}\)\n {4}hello from \S+$/m, 'read');
  assert.match(out, /^just now +send +human +→ demo\/claude /m, 'the send audited');
  assert.match(out, /^just now +read +human +→ demo\/claude /m, 'the read audited');
  assert.doesNotMatch(run.stdout, /dropped/);

  assert.equal(existsSync(join(home, '.claude-agent-bus')), false, 'no bus of the user was created');
  assert.deepEqual(readdirSync(tmp).filter((name) => name.startsWith('agent-bus-demo-')), [], 'the scratch bus is gone');
  assert.doesNotMatch(run.stdout + run.stderr.slice(-4000), /ExperimentalWarning/, 'no warning reached the output');
  return clone;
}
