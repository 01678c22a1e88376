/**
 * `npm run soak [-- --minutes N] [-- --json]`: mixed load on a scratch bus (sends of every kind,
 * reads that claim, notices, hooks) from worker processes that are killed with SIGKILL and
 * started again at random, for N minutes (default 5). Then it counts: operations, kills survived,
 * acknowledged sends the store does not have (lost: must be 0), the store's integrity, and the
 * audit log's verify after repairing the gaps kills leave between a commit and its log row.
 * Exit 0 only when nothing was lost and the store and the log check out. The bus is SQLite in a
 * temp folder, or the PostgreSQL database AGENT_BUS_SOAK_DB names (it should be empty).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectSqlite } from '../src/store/sqlite/driver.js';
import { randomFrom } from './seeded-random.mjs';

const root = new URL('..', import.meta.url).pathname;
const cli = join(root, 'dist', 'bin', 'cli.cjs');
const WORKERS = 4;

function option(name: string): string | undefined {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 ? process.argv[index + 1] : undefined;
}

const minutes = Number(option('minutes') ?? 5);
if (!Number.isFinite(minutes) || minutes <= 0) {
  process.stderr.write(`soak: --minutes takes a number of minutes above 0, not ${JSON.stringify(option('minutes'))}\n`);
  process.exit(2);
}
const json = process.argv.includes('--json');
const seed = Number(option('seed') ?? Date.now() % 2 ** 31) >>> 0 || 1;
const random = randomFrom(seed);

const dir = mkdtempSync(join(tmpdir(), 'agent-bus-soak-'));
const postgres = (process.env.AGENT_BUS_SOAK_DB ?? '').trim();
const env: NodeJS.ProcessEnv = {
  PATH: process.env.PATH,
  HOME: dir,
  NO_COLOR: '1',
  AGENT_BUS_HOME: join(dir, 'bus'),
  AGENT_BUS_DB: postgres || join(dir, 'bus', 'bus.db'),
  AGENT_BUS_AUDIT_LOG: join(dir, 'bus', 'audit.log'),
  AGENT_BUS_AUDIT_MAX_BYTES: '2M',
};
const agents = ['shop/claude', 'shop/codex', 'web/claude', 'web/codex', 'web/opencode', 'ana'];

function run(args: string[], input = ''): { code: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [cli, ...args], { env, cwd: dir, input, encoding: 'utf8', timeout: 120_000, maxBuffer: 64 * 1024 * 1024 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

for (const name of agents) {
  const joined = run(['send', 'joining', '--to', name, '--name', name]);
  if (joined.code !== 0) {
    process.stderr.write(`soak: cannot set up the scratch bus: ${joined.stderr}`);
    process.exit(1);
  }
}

const workers = new Map<number, ChildProcess>();
let started = 0;
let kills = 0;
/** Workers that exited on their own: each is a failure (they run until killed). */
let crashes = 0;
let hooks = 0;
let hookFailures = 0;
const ackFiles: string[] = [];

function startWorker(slot: number): void {
  const ackFile = join(dir, `acks-${started}.log`);
  ackFiles.push(ackFile);
  writeFileSync(ackFile, '');
  const child = spawn(process.execPath, [join(root, 'scripts', 'soak-worker.mjs'), `worker-${slot}`, ackFile, String(seed + started), JSON.stringify(agents)], { env, cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] });
  started += 1;
  workers.set(slot, child);
  child.once('exit', (_code, signal) => {
    if (signal !== 'SIGKILL') crashes += 1;
  });
}

for (let slot = 0; slot < WORKERS; slot++) startWorker(slot);
const deadline = Date.now() + minutes * 60_000;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
let lastReport = Date.now();
while (Date.now() < deadline) {
  await sleep(200 + Math.floor(random() * 1_300));
  const slot = Math.floor(random() * WORKERS);
  const victim = workers.get(slot);
  if (victim !== undefined && victim.exitCode === null) {
    victim.kill('SIGKILL');
    await new Promise((resolve) => victim.once('close', resolve));
    kills += 1;
  }
  startWorker(slot);
  // A hook now and then, as an agent's client would run one: it must exit 0 whatever happens.
  const hook = spawnSync(process.execPath, [cli, random() < 0.5 ? 'hook-user-prompt' : 'hook-stop', '--client', 'claude'], {
    env: { ...env, AGENT_BUS_NAME: agents[Math.floor(random() * agents.length)] },
    cwd: dir,
    input: JSON.stringify({ session_id: `soak-${hooks}`, cwd: dir }),
    encoding: 'utf8',
    timeout: 30_000,
  });
  hooks += 1;
  if (hook.status !== 0) hookFailures += 1;
  if (!json && Date.now() - lastReport > 15_000) {
    lastReport = Date.now();
    process.stdout.write(`soak: ${Math.ceil((deadline - Date.now()) / 1000)} s to go, ${kills} kills so far\n`);
  }
}
for (const child of workers.values()) {
  if (child.exitCode === null) {
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('close', resolve));
  }
}

// What the workers saw acknowledged, against what the store holds.
let ops = 0;
const acknowledged: string[] = [];
for (const file of ackFiles) {
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line === '') continue;
    const [kind, ...rest] = line.split(' ');
    ops += 1;
    if (kind === 'send') acknowledged.push(...rest.filter((id) => id !== ''));
  }
}
ops += hooks;
let stored: Set<string>;
let integrity = 'ok';
if (postgres) {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: postgres });
  await client.connect();
  stored = new Set((await client.query<{ message_id: string }>('SELECT message_id FROM messages')).rows.map((row) => row.message_id));
  await client.end();
} else {
  const db = connectSqlite(env.AGENT_BUS_DB as string, { readonly: true });
  stored = new Set((db.prepare('SELECT message_id FROM messages').all() as Array<{ message_id: string }>).map((row) => row.message_id));
  integrity = String(db.pragmaRows<{ integrity_check: string }>('integrity_check')[0]?.integrity_check);
  db.close();
}
const lost = acknowledged.filter((id) => !stored.has(id)).length;
await sleep(2_100); // past verify's grace for sends still on their way to the log
const repaired = run(['audit', 'verify', '--repair', '--json']);
const repairedRows = (JSON.parse(repaired.stdout || '{"repaired":0}') as { repaired: number }).repaired;
const verified = run(['audit', 'verify', '--json']);
const verifyReport = JSON.parse(verified.stdout || '{}') as { ok?: boolean; rows?: number; files?: unknown[] };
const figures = {
  seed,
  minutes,
  workers: WORKERS,
  ops,
  acknowledged_sends: acknowledged.length,
  kills,
  hooks,
  hook_failures: hookFailures,
  worker_crashes: crashes,
  lost,
  integrity,
  gaps_repaired: repairedRows,
  audit_rows: verifyReport.rows ?? 0,
  audit_files: verifyReport.files?.length ?? 0,
  verify: verified.code === 0 ? 'ok' : `failed (exit ${String(verified.code)})`,
};
if (json) process.stdout.write(`${JSON.stringify(figures)}\n`);
else {
  process.stdout.write(
    `soak: ${figures.ops.toLocaleString('en-US')} ops in ${minutes} min (seed ${seed}): ${acknowledged.length.toLocaleString('en-US')} sends acknowledged, ` +
      `${kills} kills survived, ${crashes} worker crashes, ${hooks} hooks (${hookFailures} failed), lost ${lost}, integrity ${integrity}, ` +
      `${repairedRows} log gaps repaired, verify ${figures.verify} over ${figures.audit_rows.toLocaleString('en-US')} rows in ${figures.audit_files} file(s)\n`,
  );
}
const ok = lost === 0 && integrity === 'ok' && verified.code === 0 && hookFailures === 0 && crashes === 0;
if (!ok || process.argv.includes('--keep')) process.stderr.write(`soak: the scratch bus is kept for a look: ${dir}\n`);
else rmSync(dir, { recursive: true, force: true });
process.exit(ok ? 0 : 1);
