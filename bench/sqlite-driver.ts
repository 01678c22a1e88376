/**
 * The SQLite drivers (src/store/sqlite/driver.ts): Node.js's built-in `node:sqlite` against the
 * better-sqlite3 addon, where the running Node.js has both (24 with the addon built:
 * `npm run bench:node -- 24.22.3`), and what the built-in driver does for the hooks' start-up.
 *
 *   builtin-hook-prompt-empty, builtin-hook-stop-empty, builtin-hook-pre-tool-10k: the hooks'
 *     start-up on the built-in driver (only where this Node.js has it): with an empty inbox against the
 *     floor (bench/hooks.ts), with 10,000 notices against `node -e 0`
 *   driver-send-throughput: sends/s on the built-in driver against the addon, rounds interleaved
 *   driver-large-inbox-read: an inbox read among 1,000,000 messages, the built-in driver's time
 *     against the addon's, each reader read by both back to back
 *   install-no-compiler: `npm install -g` of a packed tarball on a Node.js with SQLite built in,
 *     with no compiler on PATH, then a send and a read through the installed command
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Bus } from '../src/core/bus.js';
import { livenessFrom } from '../src/core/liveness.js';
import { registrationsFor } from '../src/core/roster.js';
import { busSettings } from '../src/core/settings.js';
import { systemProcessTable } from '../src/adapters/procs.js';
import { openAuditLog } from '../src/runtime.js';
import { openStore } from '../src/store/open.js';
import { availableSqliteDrivers, type SqliteDriverName } from '../src/store/sqlite/driver.js';
import { nodeFolder } from '../scripts/test-on-node.js';
import { machineNpmSettings, pathWithoutCompilers } from '../test/helpers/no-compiler.js';
import { hookOverFloor, type HookFigure } from './hooks.js';
import { preToolStartup } from './notices.js';
import { largeBus } from './seed.js';
import { median, NotMeasurableHere, quantile, ROOT, round, type BusLocation, type Workspace } from './util.js';

/** Stop a section whose drivers this Node.js does not have: it is skipped, saying where it can run. */
function needDrivers(needed: SqliteDriverName[]): void {
  const here = availableSqliteDrivers();
  const missing = needed.filter((driver) => !here.includes(driver));
  if (missing.length > 0) throw new NotMeasurableHere(`Node.js ${process.versions.node} has no ${missing.join(' and no ')} driver here: npm run bench:node -- 24.22.3`);
}

/** A hook figure on the built-in driver: the same measurement as the addon's, with its own goal. */
export async function builtinHook(ws: Workspace, hook: 'hook-user-prompt' | 'hook-stop' | 'hook-pre-tool'): Promise<HookFigure> {
  needDrivers(['builtin']);
  // With an empty inbox, against the floor on the same driver (on a Node.js with both, the built-in is the one used).
  return hook === 'hook-pre-tool' ? preToolStartup(ws) : hookOverFloor(ws, hook);
}

function busOn(location: BusLocation, driver: SqliteDriverName): Bus {
  const env = { ...location.env, AGENT_BUS_SQLITE_DRIVER: driver };
  const store = openStore(location.db, { connectTimeoutMs: 5000, sqliteDriver: driver });
  return new Bus(store, openAuditLog(location.audit, env), busSettings(env), { liveness: () => livenessFrom(systemProcessTable()) });
}

/** Sends/s through the core API on each driver (each its own database), rounds interleaved; built-in ÷ addon. */
export async function driverSendThroughput(ws: Workspace, body: string): Promise<HookFigure> {
  needDrivers(['builtin', 'better-sqlite3']);
  const SENDS = 20_000;
  const SENDERS = 32;
  const SEQUENTIAL = 3_000;
  const ROUNDS = 5;
  const drivers = ['builtin', 'better-sqlite3'] as const;
  const buses = { builtin: busOn(await ws.bus('driver-sends-builtin'), 'builtin'), 'better-sqlite3': busOn(await ws.bus('driver-sends-addon'), 'better-sqlite3') };
  const concurrent: Record<SqliteDriverName, number[]> = { builtin: [], 'better-sqlite3': [] };
  const sequential: Record<SqliteDriverName, number[]> = { builtin: [], 'better-sqlite3': [] };
  try {
    const request = { from: 'bench/alpha', to: 'bench/beta', body };
    for (const bus of Object.values(buses)) {
      await bus.roster.register(registrationsFor('bench/alpha', '/home/dev/src/bench', true).concat(registrationsFor('bench/beta', '/home/dev/src/bench', true)));
      for (let index = 0; index < 2_000; index++) await bus.mail.send(request);
    }
    for (let round = 0; round < ROUNDS; round++) {
      for (const driver of round % 2 === 0 ? drivers : [...drivers].reverse()) {
        const bus = buses[driver];
        const start = performance.now();
        await Promise.all(
          Array.from({ length: SENDERS }, async () => {
            for (let index = 0; index < SENDS / SENDERS; index++) await bus.mail.send(request);
          }),
        );
        concurrent[driver].push(SENDS / ((performance.now() - start) / 1000));
        const one = performance.now();
        for (let index = 0; index < SEQUENTIAL; index++) await bus.mail.send(request);
        sequential[driver].push(SEQUENTIAL / ((performance.now() - one) / 1000));
      }
    }
    for (const [driver, bus] of Object.entries(buses)) {
      const stored = await bus.inbox.pending('bench/beta');
      const expected = 2_000 + ROUNDS * (SENDS + SEQUENTIAL);
      if (stored !== expected) throw new Error(`${driver}: ${stored} messages stored of the ${expected} sent`);
    }
  } finally {
    for (const bus of Object.values(buses)) await bus.close();
  }
  // Paired: each round measures both, back to back, so a noisy moment falls on both.
  const ratio = median(concurrent.builtin.map((value, index) => value / (concurrent['better-sqlite3'][index] as number)));
  const sequentialRatio = median(sequential.builtin.map((value, index) => value / (sequential['better-sqlite3'][index] as number)));
  return {
    value: round(ratio, 3),
    shown: `${ratio.toFixed(2)}× (${Math.round(median(concurrent.builtin)).toLocaleString('en-US')} vs ${Math.round(median(concurrent['better-sqlite3'])).toLocaleString('en-US')} sends/s)`,
    details: {
      node: process.versions.node,
      rounds: ROUNDS,
      sendsPerRound: SENDS,
      concurrentSenders: SENDERS,
      builtinSendsPerSecond: Math.round(median(concurrent.builtin)),
      addonSendsPerSecond: Math.round(median(concurrent['better-sqlite3'])),
      // One caller awaiting each send: every send is a commit of its own.
      sequentialRatio: round(sequentialRatio, 3),
      builtinSequentialPerSecond: Math.round(median(sequential.builtin)),
      addonSequentialPerSecond: Math.round(median(sequential['better-sqlite3'])),
    },
  };
}

/** An inbox read among 1,000,000 messages on each driver (a copy of the database each), each reader read by both; built-in time ÷ addon time. */
export async function driverLargeInboxRead(ws: Workspace): Promise<HookFigure> {
  needDrivers(['builtin', 'better-sqlite3']);
  const READERS = 300;
  const WARMUP = 20;
  const { location, seed } = await largeBus(ws, 'sqlite', 'driver-large', { messages: 1_000_000, repos: 1_000, readers: READERS });
  // Each driver reads a copy of its own: two SQLite libraries in one process must never share a file
  // (each keeps its own record of the process's locks). The seed left no WAL beside it.
  const twin = await ws.bus('driver-large-addon');
  mkdirSync(dirname(twin.db), { recursive: true, mode: 0o700 });
  copyFileSync(location.db, twin.db);
  const buses = { builtin: busOn(location, 'builtin'), 'better-sqlite3': busOn(twin, 'better-sqlite3') };
  const times: Record<SqliteDriverName, number[]> = { builtin: [], 'better-sqlite3': [] };
  let messages = 0;
  try {
    for (const [index, reader] of seed.readers.entries()) {
      const order = index % 2 === 0 ? (['builtin', 'better-sqlite3'] as const) : (['better-sqlite3', 'builtin'] as const);
      const counts: number[] = [];
      for (const driver of order) {
        const start = performance.now();
        // A look that takes nothing (no receipt either), so both drivers read the same rows.
        const read = await buses[driver].inbox.read({ reader: reader.name, markRead: false, via: null });
        const elapsed = performance.now() - start;
        counts.push(read.length);
        if (index >= WARMUP) times[driver].push(elapsed);
      }
      if (counts[0] !== counts[1] || counts[0] === 0) throw new Error(`${reader.name}: the drivers read ${counts.join(' and ')} messages`);
      if (index >= WARMUP) messages += counts[0] as number;
    }
  } finally {
    for (const bus of Object.values(buses)) await bus.close();
  }
  const ratio = median(times.builtin) / median(times['better-sqlite3']);
  return {
    value: round(ratio, 3),
    shown: `${ratio.toFixed(2)}× the time (p50 ${median(times.builtin).toFixed(2)} vs ${median(times['better-sqlite3']).toFixed(2)} ms)`,
    details: {
      node: process.versions.node,
      messages: seed.messages,
      agents: seed.agents,
      reads: times.builtin.length,
      meanMessagesPerRead: round(messages / times.builtin.length, 2),
      builtinP50Ms: round(median(times.builtin), 3),
      builtinP95Ms: round(quantile(times.builtin, 0.95), 3),
      addonP50Ms: round(median(times['better-sqlite3']), 3),
      addonP95Ms: round(quantile(times['better-sqlite3'], 0.95), 3),
    },
  };
}

/** The Node.js with SQLite built in that the install figure uses: this one, or 24.22.3 from the npm registry. */
function builtinNode(): string {
  if (availableSqliteDrivers().includes('builtin')) return process.execPath;
  return join(nodeFolder('24.22.3'), 'bin', 'node');
}

/**
 * `npm install -g` from a packed tarball on a Node.js with SQLite built in, with no compiler on
 * PATH: 1 when the installed command sends and reads (and no addon was built), 0 when not.
 */
export async function installWithoutCompiler(ws: Workspace): Promise<HookFigure> {
  const node = builtinNode();
  const dir = join(ws.dir, 'install-no-compiler');
  const [prefix, home, packed] = ['global', 'home', 'packed'].map((name) => join(dir, name)) as [string, string, string];
  for (const folder of [prefix, home, packed]) mkdirSync(folder, { recursive: true });
  const packing = spawnSync('npm', ['pack', '--pack-destination', packed, '--silent'], { cwd: ROOT, encoding: 'utf8' });
  if (packing.status !== 0) throw new Error(`npm pack failed: ${packing.stderr}`);
  const tarball = readdirSync(packed).find((name) => name.endsWith('.tgz'));
  if (tarball === undefined) throw new Error('npm pack made no tarball');
  const path = [join(prefix, 'bin'), join(node, '..'), pathWithoutCompilers(join(dir, 'bin'))].join(delimiter);
  const env: NodeJS.ProcessEnv = {
    PATH: path,
    HOME: home,
    npm_config_prefix: prefix,
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
    // The machine's npm settings (its cache, its certificates), but not its Node.js headers.
    ...Object.fromEntries(Object.entries(machineNpmSettings()).filter(([key]) => key !== 'npm_config_nodedir')),
  };
  const started = performance.now();
  const installed = spawnSync('npm', ['install', '-g', join(packed, tarball)], { cwd: home, env, encoding: 'utf8', timeout: 600_000 });
  const seconds = (performance.now() - started) / 1000;
  const bin = join(prefix, 'bin', 'agent-bus');
  const busEnv = { ...env, AGENT_BUS_DB: join(dir, 'bus', 'bus.db'), AGENT_BUS_AUDIT_LOG: join(dir, 'bus', 'audit.log'), NO_COLOR: '1' };
  const sent = installed.status === 0 && existsSync(bin) ? spawnSync(bin, ['send', 'installed without a compiler', '--to', 'ops', '--name', 'ops'], { env: busEnv, encoding: 'utf8' }) : null;
  const read = sent?.status === 0 ? spawnSync(bin, ['inbox', '--name', 'ops', '--json'], { env: busEnv, encoding: 'utf8' }) : null;
  const works = read?.status === 0 && read.stdout.includes('installed without a compiler') && read.stderr === '';
  const addonBuilt = existsSync(join(prefix, 'lib', 'node_modules', 'agent-bus', 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node'));
  const why = installed.status !== 0 ? `npm install -g failed: ${installed.stderr.slice(-500)}` : sent?.status !== 0 ? `send failed: ${sent?.stderr ?? 'not installed'}` : read?.stderr ?? '';
  return {
    value: works && !addonBuilt ? 1 : 0,
    shown: works && !addonBuilt ? `works (Node.js ${spawnSync(node, ['-p', 'process.versions.node'], { encoding: 'utf8' }).stdout.trim()}, installed in ${seconds.toFixed(1)} s, no addon built)` : `does not work: ${addonBuilt ? 'an addon was built' : why}`,
    details: { node, installSeconds: round(seconds, 1), addonBuilt },
  };
}
