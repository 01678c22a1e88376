#!/usr/bin/env node
// `npm run test:clients`: installs the pinned real clients into clients/ (their own
// lockfile, kept out of the main dependencies), builds agent-bus, and runs the
// suite that drives them against a fake model server on 127.0.0.1. A client that
// cannot be installed or run makes its tests skip, each saying why.
import { spawnSync } from 'node:child_process';

const run = (command, args, options = {}) => spawnSync(command, args, { stdio: 'inherit', ...options }).status;

// `npm install`, not `npm ci`: npm writes only this platform's optional binaries into the
// lockfile, and `npm ci` then refuses the lock as incomplete on any platform.
if (run('npm', ['install', '--prefix', 'clients', '--no-audit', '--no-fund']) !== 0) {
  console.error('test:clients: installing the clients failed; their tests will skip and say so');
}
if (run('npm', ['run', 'build']) !== 0) process.exit(1);
process.exit(run(process.execPath, ['scripts/run-tests.mjs', '--clients']) ?? 1);
