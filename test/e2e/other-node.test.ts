/**
 * A Node.js other than the one agent-bus was installed with (an upgrade, nvm switching versions):
 * where that Node.js has SQLite built in, nothing needs the addon and every command works; where
 * the addon is the driver, it cannot load, and the CLI says what to run instead of the loader's paragraph.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import { addonMismatch } from '../../src/store/sqlite/driver.js';
import { CLI, ROOT, withTempBus, messageLines } from '../helpers/bus-env.js';

const OTHER_NODE = process.env.AGENT_BUS_TEST_OTHER_NODE ?? '';
const otherAbi = OTHER_NODE !== '' && existsSync(OTHER_NODE)
  ? spawnSync(OTHER_NODE, ['-p', 'process.versions.modules'], { encoding: 'utf8' }).stdout.trim()
  : '';
const skip = otherAbi !== '' && otherAbi !== process.versions.modules
  ? false
  : 'needs AGENT_BUS_TEST_OTHER_NODE: a Node.js of another major version (.ci/run sets it)';
/** Whether the other Node.js has SQLite built in (22.13 and later): then the addon is not its driver. */
const otherHasBuiltin = skip === false && spawnSync(OTHER_NODE, ['-p', "process.getBuiltinModule('node:sqlite') ? 'yes' : 'no'"], { encoding: 'utf8' }).stdout.trim() === 'yes';
/** Whether this tree has the addon compiled at all (it is an optional dependency). */
const addonBuilt = existsSync(`${ROOT}/node_modules/better-sqlite3/build/Release/better_sqlite3.node`);

test('the loader\'s message for an addon of another Node.js becomes what to run and where', () => {
  const loader = new Error(
    "The module '/opt/ab/node_modules/better-sqlite3/build/Release/better_sqlite3.node'\nwas compiled against a different Node.js version using\nNODE_MODULE_VERSION 115. This version of Node.js requires\nNODE_MODULE_VERSION 137. Please try re-compiling or re-installing\nthe module (for instance, using `npm rebuild` or `npm install`).",
  );
  assert.equal(
    addonMismatch(loader, '/opt/ab/node_modules/better-sqlite3/build/Release/better_sqlite3.node', '24.22.3'),
    "the SQLite addon (better-sqlite3) was built for another Node.js (module version 115; Node.js 24.22.3 needs 137): run 'npm rebuild better-sqlite3' in /opt/ab with this Node.js, or reinstall agent-bus with it",
  );
  assert.equal(addonMismatch(new Error('SQLITE_CANTOPEN: unable to open database file'), undefined, '20.0.0'), null);
});

test('under a Node.js of another ABI that has SQLite built in, commands work without the addon', { skip: skip || (otherHasBuiltin ? false : 'the other Node.js has no built-in SQLite') }, withTempBus((bus) => {
  const sent = spawnSync(OTHER_NODE, [CLI, 'send', 'from another Node.js', '--to', 'ops', '--name', 'ops'], { env: bus.env, encoding: 'utf8', timeout: 30_000 });
  assert.equal(sent.status, 0, sent.stderr);
  assert.equal(sent.stderr, '', 'no warning of any kind');
  const read = spawnSync(OTHER_NODE, [CLI, 'inbox', '--name', 'ops', '--json'], { env: bus.env, encoding: 'utf8', timeout: 30_000 });
  assert.equal(read.status, 0, read.stderr);
  assert.deepEqual((JSON.parse(read.stdout) as Array<{ body: string }>).map((message) => message.body), ['from another Node.js']);
}));

test('under a Node.js of another ABI with the addon as its driver, the CLI exits 1 with one line saying what to rebuild, and where', { skip: skip || (addonBuilt ? false : 'the addon is not built here') }, withTempBus((bus) => {
  // A Node.js with SQLite built in uses the addon only when told to.
  const env = otherHasBuiltin ? { ...bus.env, AGENT_BUS_SQLITE_DRIVER: 'better-sqlite3' } : bus.env;
  const result = spawnSync(OTHER_NODE, [CLI, 'agents'], { env, encoding: 'utf8', timeout: 30_000 });
  assert.equal(result.status, 1, result.stderr);
  assert.equal(result.stdout, '');
  assert.equal(messageLines(result.stderr).length, 1, result.stderr);
  assert.match(result.stderr, new RegExp(`^agent-bus: the SQLite addon \\(better-sqlite3\\) was built for another Node\\.js \\(module version ${process.versions.modules}; Node\\.js [\\d.]+ needs ${otherAbi}\\): run 'npm rebuild better-sqlite3' in ${ROOT.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} with this Node\\.js`));
}));
