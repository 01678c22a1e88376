/**
 * The fleet's own costs, with a stand-in client (test/helpers/fake-agent.mjs, a Node.js script that
 * prints the time it starts and the time it goes on to exit):
 * - `spawn-overhead`: from asking (`agent-bus spawn`) to the client's first line, against the same
 *   client started bare, rounds in turn; the difference of the medians is what the bus adds (the spawn
 *   command, the request kept, the supervisor started, the slot taken).
 * - `spawn-exit-record`: from the client's last moment to its exit in the store, p50.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { stampToMillis } from '../src/model/clock.js';
import { CLI, median, quantile, ROOT, round, type Workspace } from './util.js';

const FAKE_AGENT = join(ROOT, 'test', 'helpers', 'fake-agent.mjs');
const ROUNDS = 15;

interface Spawned {
  name: string;
  state: string;
  log: string;
  ended_at: string | null;
}

function cli(args: string[], env: NodeJS.ProcessEnv, cwd: string): string {
  const result = spawnSync(process.execPath, [CLI, ...args], { env, cwd, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`agent-bus ${args.join(' ')} exited ${result.status}: ${result.stderr}`);
  return result.stdout;
}

function spawnedNamed(env: NodeJS.ProcessEnv, cwd: string, name: string): Spawned {
  const agents = JSON.parse(cli(['agents', '--json'], env, cwd)) as Array<{ name: string; spawned: Spawned | null }>;
  const found = agents.find((agent) => agent.name === name)?.spawned;
  if (!found) throw new Error(`${name} is not among the agents`);
  return found;
}

/** The epoch milliseconds on the log's line `fake-agent <what> <ms>`, once it is there. */
async function stampIn(log: string, what: string, timeoutMs = 10_000): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    let text = '';
    try {
      text = readFileSync(log, 'utf8');
    } catch {
      // Not created yet.
    }
    const match = new RegExp(`fake-agent ${what} (\\d+)`).exec(text);
    if (match) return Number(match[1]);
    if (performance.now() > deadline) throw new Error(`no '${what}' line in ${log}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** The stand-in started bare: from the ask to its first line. */
function bareStart(env: NodeJS.ProcessEnv, cwd: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const asked = Date.now();
    const child = spawn(FAKE_AGENT, ['-p', 'bare'], { env: { ...env, FAKE_AGENT: 'exit:0' }, cwd, stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', reject);
    child.on('close', () => {
      const match = /fake-agent started (\d+)/.exec(out);
      if (match) resolve(Number(match[1]) - asked);
      else reject(new Error(`the bare stand-in said nothing: ${out}`));
    });
  });
}

async function setUp(ws: Workspace, name: string): Promise<{ env: NodeJS.ProcessEnv; repo: string }> {
  const location = await ws.bus(name);
  const repo = join(ws.dir, name, 'shop');
  mkdirSync(join(repo, '.git'), { recursive: true });
  return { env: { ...location.env, AGENT_BUS_CLAUDE_BIN: FAKE_AGENT }, repo };
}

export async function spawnOverhead(ws: Workspace): Promise<{ value: number; shown: string; details: Record<string, unknown> }> {
  const { env, repo } = await setUp(ws, 'fleet-spawn');
  const viaBus: number[] = [];
  const bare: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    bare.push(await bareStart(env, repo));
    const asked = Date.now();
    const name = cli(['spawn', 'claude', '--prompt', 'bench', '--label', `r${round}`], { ...env, FAKE_AGENT: 'exit:0' }, repo).trim();
    const started = await stampIn(spawnedNamed(env, repo, name).log, 'started');
    viaBus.push(started - asked);
  }
  const over = median(viaBus) - median(bare);
  return {
    value: round(over, 1),
    shown: `${over.toFixed(1)} ms above a bare start (spawn ${median(viaBus).toFixed(1)} ms, bare ${median(bare).toFixed(1)} ms, p95 ${quantile(viaBus, 0.95).toFixed(1)} ms)`,
    details: { rounds: ROUNDS, spawnMedianMs: round(median(viaBus), 1), bareMedianMs: round(median(bare), 1), spawnP95Ms: round(quantile(viaBus, 0.95), 1) },
  };
}

export async function spawnExitRecord(ws: Workspace): Promise<{ value: number; shown: string; details: Record<string, unknown> }> {
  const { env, repo } = await setUp(ws, 'fleet-exit');
  const delays: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const name = cli(['spawn', 'claude', '--prompt', 'bench', '--label', `r${round}`], { ...env, FAKE_AGENT: 'sleep:100,stamp,exit:0' }, repo).trim();
    const log = spawnedNamed(env, repo, name).log;
    const last = await stampIn(log, 'stamp');
    const deadline = performance.now() + 10_000;
    let spawned = spawnedNamed(env, repo, name);
    while (spawned.state !== 'exited' && performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      spawned = spawnedNamed(env, repo, name);
    }
    if (spawned.ended_at === null) throw new Error(`${name}'s exit was not recorded within 10 s`);
    delays.push(stampToMillis(spawned.ended_at) - last);
  }
  const p50 = median(delays);
  return {
    value: round(p50, 1),
    shown: `p50 ${p50.toFixed(1)} ms, p95 ${quantile(delays, 0.95).toFixed(1)} ms from the client's last moment to its recorded exit`,
    details: { rounds: ROUNDS, p50Ms: round(p50, 1), p95Ms: round(quantile(delays, 0.95), 1) },
  };
}
