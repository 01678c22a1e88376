/** The fleet as the tests read it: a spawned agent's record through the real `agents --json`, and the stand-in client. */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { json, ROOT, runCli, type TempBus } from './bus-env.js';
import { waitUntil } from './wait.js';

/** The stand-in client (see its own header for the steps it takes). */
export const FAKE_AGENT = join(ROOT, 'test', 'helpers', 'fake-agent.mjs');

/** The latest record of the spawned agent `name`, as `agents --json` has it. */
export function spawnedOf<T extends { state: string }>(bus: TempBus, name: string): T {
  const agents = json<Array<{ name: string; spawned: T | null }>>(runCli(['agents', '--json'], { env: bus.env }));
  const found = agents.find((agent) => agent.name === name)?.spawned;
  assert.ok(found, `${name} is among the agents, marked spawned: ${JSON.stringify(agents)}`);
  return found;
}

/** Its record once its exit is recorded. */
export async function exitedOf<T extends { state: string }>(bus: TempBus, name: string, timeoutMs: number): Promise<T> {
  await waitUntil(() => spawnedOf<T>(bus, name).state === 'exited', `${name}'s exit recorded`, timeoutMs, 100);
  return spawnedOf<T>(bus, name);
}
