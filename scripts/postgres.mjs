// A throwaway PostgreSQL server for the test suite and the benchmarks: a new cluster
// (initdb) in a temp folder, run by an unprivileged user (the server refuses root),
// on a free loopback port, with trust authentication (members of agent_bus_password
// excepted: they log in with a password, over SCRAM). Debian's
// server is installed first when its binaries are missing and we may install.
//
//   node scripts/postgres.mjs start   prints the admin URL, the folder and the bin dir (JSON)
//   node scripts/postgres.mjs stop DIR
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;

/** The folder holding initdb, pg_ctl and psql: AGENT_BUS_PG_BIN, else Debian's newest, else the PATH's. */
export function postgresBin() {
  const given = (process.env.AGENT_BUS_PG_BIN ?? '').trim();
  if (given !== '') return existsSync(join(given, 'initdb')) ? given : null;
  const debian = '/usr/lib/postgresql';
  if (existsSync(debian)) {
    const versions = readdirSync(debian).filter((name) => existsSync(join(debian, name, 'bin', 'initdb'))).sort((a, b) => Number(b) - Number(a));
    if (versions[0]) return join(debian, versions[0], 'bin');
  }
  const found = spawnSync('sh', ['-c', 'dirname "$(command -v initdb)"'], { encoding: 'utf8' });
  const dir = found.status === 0 ? found.stdout.trim() : '';
  return dir !== '' && dir !== '.' && existsSync(join(dir, 'pg_ctl')) ? dir : null;
}

/** Install Debian's server when there is none and this process may (root with apt-get). */
export function ensurePostgres() {
  if (postgresBin() !== null) return;
  if (!isRoot || spawnSync('sh', ['-c', 'command -v apt-get'], { stdio: 'ignore' }).status !== 0) return;
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  spawnSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
  spawnSync('apt-get', ['install', '-y', '-qq', 'postgresql'], { stdio: 'inherit', env });
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Run a server binary as the unprivileged user (the postgres account when we are root). */
function runAsServerUser(command, args, options = {}) {
  const result = isRoot
    ? spawnSync('runuser', ['-u', 'postgres', '--', command, ...args], { encoding: 'utf8', ...options })
    : spawnSync(command, args, { encoding: 'utf8', ...options });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (${result.status}): ${result.stderr || result.stdout}`);
  return result;
}

/**
 * Start a server. `durable: false` (the tests) trades crash safety for speed: no fsync, no
 * synchronous commit. The benchmarks keep PostgreSQL's defaults.
 */
export async function startPostgres({ durable = false } = {}) {
  ensurePostgres();
  const bin = postgresBin();
  if (bin === null) {
    throw new Error("PostgreSQL's server is not installed: install it (Debian: apt-get install postgresql), or point AGENT_BUS_PG_BIN at its bin folder");
  }
  const dir = mkdtempSync(join(tmpdir(), 'agent-bus-pg-'));
  chmodSync(dir, 0o755);
  const data = join(dir, 'data');
  mkdirSync(data);
  if (isRoot) {
    const id = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
    const gid = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
    if (id.status !== 0) throw new Error('running as root, but there is no postgres user to run the server as');
    chownSync(dir, Number(id.stdout), Number(gid.stdout));
    chownSync(data, Number(id.stdout), Number(gid.stdout));
  }
  runAsServerUser(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync'], { cwd: dir });
  // Trust for everyone but the members of agent_bus_password, who must give a password
  // (SCRAM): the tests of password authentication create their roles in that group.
  const hba = join(data, 'pg_hba.conf');
  writeFileSync(hba, `host all +agent_bus_password 127.0.0.1/32 scram-sha-256\n${readFileSync(hba, 'utf8')}`);
  const port = await freePort();
  const settings = ['-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200'];
  if (!durable) settings.push('-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off');
  // Kept beside the data, so a server stopped mid-test starts again as it was (resumePostgres).
  writeFileSync(join(dir, 'start-options'), settings.join(' '));
  runAsServerUser(join(bin, 'pg_ctl'), ['-D', data, '-o', settings.join(' '), '-l', join(dir, 'server.log'), '-w', '-t', '60', 'start'], { cwd: dir });
  return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, dir, bin, port };
}

/** Stop a server and keep its data (a fault test: the database goes away mid-run). */
export function pausePostgres(dir, bin = postgresBin()) {
  runAsServerUser(join(bin, 'pg_ctl'), ['-D', join(dir, 'data'), '-m', 'fast', '-w', 'stop'], { cwd: dir });
}

/** Start a paused server again, on the same port with the same settings. */
export function resumePostgres(dir, bin = postgresBin()) {
  const options = readFileSync(join(dir, 'start-options'), 'utf8');
  runAsServerUser(join(bin, 'pg_ctl'), ['-D', join(dir, 'data'), '-o', options, '-l', join(dir, 'server.log'), '-w', '-t', '60', 'start'], { cwd: dir });
}

export function stopPostgres(dir, bin = postgresBin()) {
  if (bin !== null && existsSync(join(dir, 'data'))) {
    try {
      runAsServerUser(join(bin, 'pg_ctl'), ['-D', join(dir, 'data'), '-m', 'immediate', '-w', 'stop'], { cwd: dir });
    } catch {
      // Already stopped: nothing to do but remove its folder.
    }
  }
  rmSync(dir, { recursive: true, force: true });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [command, dir] = process.argv.slice(2);
  if (command === 'start') {
    console.log(JSON.stringify(await startPostgres({ durable: process.argv.includes('--durable') })));
  } else if (command === 'stop' && dir) {
    stopPostgres(dir);
  } else {
    console.error('usage: node scripts/postgres.mjs start [--durable] | stop DIR');
    process.exit(2);
  }
}
