/** A runner (`agent-bus runner`) on a "machine" of its own: its own home and bus folder, reaching the bus only through a hub. */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, type TempBus } from './bus-env.js';
import type { RunningHub } from './hub.js';
import { waitUntil } from './wait.js';

/** A machine that reaches the bus only through the hub, as `name`'s token. */
export function machineEnv(bus: TempBus, hub: RunningHub, name: string, token: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const dir = join(bus.dir, `machine-${name.replace(/\W+/g, '-')}`);
  mkdirSync(join(dir, 'home'), { recursive: true });
  return { PATH: bus.env.PATH, HOME: join(dir, 'home'), AGENT_BUS_HOME: join(dir, 'bus'), AGENT_BUS_URL: hub.url, AGENT_BUS_TOKEN: token, NO_COLOR: '1', ...extra };
}

export interface Runner {
  child: ChildProcess;
  said(): string;
}

export function startRunner(env: NodeJS.ProcessEnv, repo: string, machine: string): Promise<Runner> {
  return startRunnerWith(env, [repo], machine);
}

/** `agent-bus runner --clients CLIENTS --repos REPOS --max 3 --name MACHINE`, once it says what it offers. */
export async function startRunnerWith(env: NodeJS.ProcessEnv, repos: string[], machine: string, clients: string[] = ['claude']): Promise<Runner> {
  const child = spawn(process.execPath, [CLI, 'runner', '--clients', clients.join(','), '--repos', repos.join(','), '--max', '3', '--name', machine], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let said = '';
  child.stderr?.on('data', (chunk: Buffer) => (said += chunk.toString()));
  await waitUntil(() => said.includes(`offering ${machine}`), 'the runner says what it offers', 10_000);
  return { child, said: () => said };
}

export function killRunner(runner: Runner): Promise<void> {
  return new Promise((resolve) => {
    if (runner.child.exitCode !== null || runner.child.signalCode !== null) return resolve();
    runner.child.once('close', () => resolve());
    runner.child.kill('SIGKILL');
  });
}

