/**
 * A Node.js other than the one agent-bus was installed with (an upgrade, nvm switching versions):
 * the SQLite addon cannot load, and the CLI says what to run instead of the loader's paragraph.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import { addonMismatch } from '../../src/store/sqlite/open.js';
import { CLI, ROOT, withTempBus } from '../helpers/bus-env.js';

const OTHER_NODE = process.env.AGENT_BUS_TEST_OTHER_NODE ?? '';
const otherAbi = OTHER_NODE !== '' && existsSync(OTHER_NODE)
  ? spawnSync(OTHER_NODE, ['-p', 'process.versions.modules'], { encoding: 'utf8' }).stdout.trim()
  : '';
const skip = otherAbi !== '' && otherAbi !== process.versions.modules
  ? false
  : 'needs AGENT_BUS_TEST_OTHER_NODE: a Node.js of another major version (.ci/run sets it)';

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

test('under a Node.js of another ABI the CLI exits 1 with one line saying what to rebuild, and where', { skip }, withTempBus((bus) => {
  const result = spawnSync(OTHER_NODE, [CLI, 'agents'], { env: bus.env, encoding: 'utf8', timeout: 30_000 });
  assert.equal(result.status, 1, result.stderr);
  assert.equal(result.stdout, '');
  assert.equal(result.stderr.trimEnd().split('\n').length, 1, result.stderr);
  assert.match(result.stderr, new RegExp(`^agent-bus: the SQLite addon \\(better-sqlite3\\) was built for another Node\\.js \\(module version ${process.versions.modules}; Node\\.js [\\d.]+ needs ${otherAbi}\\): run 'npm rebuild better-sqlite3' in ${ROOT.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} with this Node\\.js`));
}));
