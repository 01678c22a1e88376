#!/usr/bin/env node
// Runs every test file under test/ with node's test runner (through tsx) and
// ends with the plain summary line CI reads: "N passed, N failed". The main
// suite runs on SQLite; beside it, the end-to-end suites of the CLI, hooks, MCP
// server, notices, brain and wake run again on PostgreSQL, against a
// throwaway server this script starts (or AGENT_BUS_TEST_PG_URL's).
// AGENT_BUS_TEST_CONCURRENCY sets how many test files each pass runs at once (2 unless set);
// AGENT_BUS_TEST_SIDE_BY_SIDE=0 runs the PostgreSQL pass after the SQLite one.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { checkClaims, loadClaims } from './client-claims.mjs';
import { startPostgres, stopPostgres } from './postgres.mjs';

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

/** The end-to-end and reliability suites that run on both engines. */
const BOTH_ENGINES = /^test\/(?:reliability\/(?:concurrency|crashes|faults)|e2e\/(?:audit|prune|doctor|privacy|dashboard[a-z-]*|search|receipts|cli|hooks|mcp|notices[a-z-]*|brain-[a-z-]+|wake[a-z-]*|watch|concurrency|chat|hub|hub-remote|hub-chat|hub-sessions|reservations|commit-guard|tasks|fleet[a-z-]*|presence|server-gone|hook-tool|urgent|integrations[a-z-]*|ids|times|exits))\.test\.ts$/;

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
// Tests give every process its own HOME; this one is the net under them, so
// a test that forgot can never touch the real ~/.claude-agent-bus.
const home = join(scratch, 'home');
mkdirSync(home);

// Stopped by a signal (Ctrl-C, a CI's timeout), the runner stops the test runner it started, then the
// throwaway PostgreSQL and its folder, before it exits: a run cut short leaves no server behind.
const running = new Set();
let stoppedBy = null;
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    stoppedBy = signal;
    for (const child of running) child.kill(signal);
  });
}

/**
 * One run of node's test runner over `list`; its counts, read from its TAP report. Its spec report goes
 * to our output as it comes, or, when `quiet` (a pass running beside another), is kept in `spec` for
 * the caller to print whole, so no two passes' lines interleave.
 */
async function runSuite(list, extraEnv, label, { quiet = false } = {}) {
  const tap = join(scratch, `${label}.tap`);
  const spec = join(scratch, `${label}.spec`);
  const child = spawn(
    process.execPath,
    [
      '--import', 'tsx',
      '--test',
      `--test-concurrency=${process.env.AGENT_BUS_TEST_CONCURRENCY ?? 2}`,
      '--test-reporter=spec', `--test-reporter-destination=${quiet ? spec : 'stdout'}`,
      '--test-reporter=tap', `--test-reporter-destination=${tap}`,
      ...list.map((file) => relative(root, file)),
    ],
    { cwd: root, stdio: 'inherit', env: { ...process.env, HOME: home, NO_COLOR: '1', ...extraEnv } },
  );
  running.add(child);
  const status = await new Promise((resolve) => child.on('close', (code) => resolve(code ?? 1)));
  running.delete(child);
  const counts = { passed: 0, failed: 0, skipped: 0, status, failures: [], report: '', spec: quiet && existsSync(spec) ? readFileSync(spec, 'utf8') : '' };
  try {
    const report = readFileSync(tap, 'utf8');
    counts.report = report;
    counts.failures = failuresIn(report).map((failure) => `${label}: ${failure}`);
    counts.passed = Number(/^# pass (\d+)/m.exec(report)?.[1] ?? 0);
    counts.failed = Number(/^# fail (\d+)/m.exec(report)?.[1] ?? 0);
    counts.skipped = Number(/^# skipped (\d+)/m.exec(report)?.[1] ?? 0);
  } catch {
    counts.failed = Math.max(counts.failed, 1);
  }
  return counts;
}

/**
 * The failed tests in a TAP report, a line each (name, place, first line of the error), so the
 * run's last lines name them however long the log above them is. A parent that failed only
 * because a subtest did is left out: the subtest is named.
 */
function failuresIn(report) {
  const lines = report.split('\n');
  const failures = [];
  for (let index = 0; index < lines.length; index += 1) {
    const head = /^(\s*)not ok \d+ - (.*)$/.exec(lines[index]);
    if (!head) continue;
    const indent = head[1];
    const field = {};
    for (let inner = index + 1; inner < lines.length && lines[inner].startsWith(`${indent}  `); inner += 1) {
      const pair = /^\s*(location|failureType|error): (.*)$/.exec(lines[inner]);
      if (pair && !(pair[1] in field)) {
        // A block scalar (|-) holds the text on the lines below.
        field[pair[1]] = pair[2] === '|-' ? (lines[inner + 1] ?? '').trim() : pair[2].replace(/^'|'$/g, '');
      }
      if (lines[inner].trim() === '...') break;
    }
    if (field.failureType === 'subtestsFailed') continue;
    const where = field.location ? ` (${relative(root, field.location)})` : '';
    failures.push(`${head[2]}${where}: ${(field.error ?? 'failed').slice(0, 300)}`);
  }
  return failures;
}

/** The test server, with a migrated template database that every test database is cloned from. */
async function testServer() {
  const given = (process.env.AGENT_BUS_TEST_PG_URL ?? '').trim();
  const server = given !== '' ? { url: given, dir: null, bin: process.env.AGENT_BUS_TEST_PG_BIN ?? '' } : await startPostgres();
  const psql = server.bin ? join(server.bin, 'psql') : 'psql';
  const run = (sql) => spawnSync(psql, ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', server.url, '-c', sql], { encoding: 'utf8' });
  run('DROP DATABASE IF EXISTS agent_bus_template WITH (FORCE)');
  const created = run('CREATE DATABASE agent_bus_template');
  if (created.status !== 0) throw new Error(`cannot create the template database: ${created.stderr}`);
  const template = new URL(server.url);
  template.pathname = '/agent_bus_template';
  // The CLI migrates the database the first time it opens it.
  const migrated = spawnSync(process.execPath, [join(root, 'dist', 'bin', 'cli.cjs'), 'agents'], {
    env: { PATH: process.env.PATH, HOME: home, AGENT_BUS_DB: template.toString(), AGENT_BUS_HOME: join(scratch, 'template-home'), AGENT_BUS_AUDIT_LOG: join(scratch, 'template.log') },
    encoding: 'utf8',
  });
  if (migrated.status !== 0) throw new Error(`cannot migrate the template database: ${migrated.stderr}`);
  return { ...server, env: { AGENT_BUS_TEST_PG_URL: server.url, AGENT_BUS_TEST_PG_BIN: server.bin ?? '' } };
}

let server = null;
const totals = { passed: 0, failed: 0, skipped: 0 };
const failures = [];
let ok = true;
try {
  // AGENT_BUS_TEST_ENGINES=sqlite leaves out the second pass (the other Node.js versions' runs: the
  // PostgreSQL driver is plain JavaScript, and the conformance suite still runs on both engines there).
  const secondPass = (process.env.AGENT_BUS_TEST_ENGINES ?? '').trim() !== 'sqlite';
  // AGENT_BUS_TEST_SIDE_BY_SIDE=0 runs the PostgreSQL pass after the SQLite one instead of beside it.
  const sideBySide = (process.env.AGENT_BUS_TEST_SIDE_BY_SIDE ?? '').trim() !== '0';
  const postgresFiles = clients || !secondPass ? [] : files.filter((file) => BOTH_ENGINES.test(relative(root, file)));
  // The main suite always has a PostgreSQL: the conformance suite and the PostgreSQL tests use it in the first run too.
  if (!clients) {
    try {
      server = await testServer();
    } catch (error) {
      console.error(`agent-bus tests: no PostgreSQL to test against: ${error.message}`);
      ok = false;
    }
  }
  const sqlitePass = () => runSuite(files, { ...(server?.env ?? {}), AGENT_BUS_TEST_ENGINE: 'sqlite' }, 'sqlite');
  const postgresPass = (quiet) => {
    if (!quiet) console.log('\n== the end-to-end suites again, on PostgreSQL ==');
    return runSuite(postgresFiles, { ...server.env, AGENT_BUS_TEST_ENGINE: 'postgres' }, 'postgres', { quiet });
  };
  const runs = [];
  const withPostgres = server !== null && postgresFiles.length > 0;
  if (stoppedBy === null && withPostgres && sideBySide) {
    // Much of a pass is waiting on the processes its tests start: the two share the cores well.
    console.log('== the end-to-end suites on PostgreSQL run beside the whole suite on SQLite; their report follows it ==');
    const [sqlite, postgres] = await Promise.all([sqlitePass(), postgresPass(true)]);
    console.log(`\n== the end-to-end suites on PostgreSQL ==\n${postgres.spec}`);
    runs.push(sqlite, postgres);
  } else {
    if (stoppedBy === null) runs.push(await sqlitePass());
    if (withPostgres && stoppedBy === null) runs.push(await postgresPass(false));
  }
  for (const counts of runs) {
    totals.passed += counts.passed;
    totals.failed += counts.failed;
    totals.skipped += counts.skipped;
    failures.push(...counts.failures);
    if (counts.status !== 0) ok = false;
  }
  // A whole run of a suite proves the clients table's claims it backs (test/clients/claims.json):
  // a claim its tests did not bear out fails the run.
  if (filter.length === 0 && runs.length > 0) {
    const { failures: unproven, unverified } = checkClaims(loadClaims(), clients ? 'clients' : 'main', runs[0].report);
    for (const line of unverified) console.log(`unverified: ${line}`);
    failures.push(...unproven);
    totals.failed += unproven.length;
  }
} finally {
  if (server?.dir) stopPostgres(server.dir, server.bin);
}
if (stoppedBy !== null) {
  rmSync(scratch, { recursive: true, force: true });
  console.error(`agent-bus tests: stopped by ${stoppedBy}; the test PostgreSQL is stopped and removed`);
  process.exit(128 + (os.constants.signals[stoppedBy] ?? 1));
}
if (existsSync(join(home, '.claude-agent-bus'))) {
  console.error('a test wrote to HOME/.claude-agent-bus instead of its own temp folder');
  totals.failed += 1;
}
rmSync(scratch, { recursive: true, force: true });
if (failures.length > 0) console.log(`\nfailed:\n${failures.map((failure) => `  ${failure}`).join('\n')}`);
console.log(`${totals.passed} passed, ${totals.failed} failed${totals.skipped > 0 ? `, ${totals.skipped} skipped` : ''}`);
// The client suite may skip everything (no client can run here), saying why; the main suite must run.
process.exit(ok && totals.failed === 0 && (totals.passed > 0 || (clients && totals.skipped > 0)) ? 0 : 1);
