#!/usr/bin/env node
// Runs every test file under test/ with node's test runner (through tsx) and
// ends with the plain summary line CI reads: "N passed, N failed".
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

const root = new URL('..', import.meta.url).pathname;

function findTests(dir, suffix) {
  const found = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...findTests(path, suffix));
    else if (entry.name.endsWith(suffix)) found.push(path);
  }
  return found;
}

// --clients runs the suite that drives the real clients (test/clients/*.clients.ts) instead.
const clients = process.argv.includes('--clients');
const filter = process.argv.slice(2).filter((arg) => arg !== '--clients');
let files = findTests(join(root, 'test'), clients ? '.clients.ts' : '.test.ts').sort();
if (filter.length > 0) files = files.filter((file) => filter.some((part) => file.includes(part)));
if (files.length === 0) {
  console.error('no test files found');
  process.exit(1);
}

const scratch = mkdtempSync(join(tmpdir(), 'agent-bus-tests-'));
const tap = join(scratch, 'report.tap');
// Tests give every process its own HOME; this one is the net under them, so
// a test that forgot can never touch the real ~/.claude-agent-bus.
const home = join(scratch, 'home');
mkdirSync(home);
const result = spawnSync(
  process.execPath,
  [
    '--import', 'tsx',
    '--test',
    '--test-concurrency=2',
    '--test-reporter=spec', '--test-reporter-destination=stdout',
    '--test-reporter=tap', `--test-reporter-destination=${tap}`,
    ...files.map((file) => relative(root, file)),
  ],
  { cwd: root, stdio: 'inherit', env: { ...process.env, HOME: home, NO_COLOR: '1' } },
);

let passed = 0;
let failed = 0;
let skipped = 0;
try {
  const report = readFileSync(tap, 'utf8');
  passed = Number(/^# pass (\d+)/m.exec(report)?.[1] ?? 0);
  failed = Number(/^# fail (\d+)/m.exec(report)?.[1] ?? 0);
  skipped = Number(/^# skipped (\d+)/m.exec(report)?.[1] ?? 0);
} catch {
  failed = Math.max(failed, 1);
}
if (existsSync(join(home, '.claude-agent-bus'))) {
  console.error('a test wrote to HOME/.claude-agent-bus instead of its own temp folder');
  failed += 1;
}
rmSync(scratch, { recursive: true, force: true });
console.log(`${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}`);
// The client suite may skip everything (no client can run here), saying why; the main suite must run.
process.exit(result.status === 0 && failed === 0 && (passed > 0 || (clients && skipped > 0)) ? 0 : 1);
