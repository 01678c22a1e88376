/**
 * Stopping a spawned agent: the request kept in the store (its supervisor, here or on another
 * machine, hears it within a second), and a signal to its supervisor where it runs on this machine.
 * Then a wait for the exit record: the polite signal's grace, and a little more.
 */
import { hostname } from 'node:os';
import type { Bus } from '../core/bus.js';
import { exitText } from '../core/fleet-ops.js';
import { BusError } from '../model/errors.js';
import type { SpawnRecord } from '../model/records.js';
import { setting, type Env } from '../model/settings.js';

/** How much longer than the grace period a stop waits for the exit record. */
const RECORD_SLACK_MS = 5_000;

/** The pid in a supervisor's `<host>/<pid>/<random>`, when it runs on this machine. */
function localPid(supervisor: string | null): number | null {
  const [host, pid] = (supervisor ?? '').split('/');
  return host === hostname() && /^\d+$/.test(pid ?? '') ? Number(pid) : null;
}

/** Stop the agent `nameOrId` as `actor`: its exit record once it is there. */
export async function stopAgent(bus: Bus, env: Env, nameOrId: string, actor: string): Promise<SpawnRecord> {
  const spawn = await bus.fleet.find(nameOrId);
  if (spawn.state === 'exited') throw new BusError(`stop: ${spawn.name} has ended already: ${exitText(spawn)}`);
  await bus.fleet.requestStop(spawn, actor);
  const pid = localPid(spawn.supervisor);
  if (pid !== null) {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      // Gone: the listing says what became of it.
    }
  }
  const deadline = Date.now() + setting(env, 'AGENT_BUS_STOP_GRACE') + RECORD_SLACK_MS;
  for (;;) {
    const now = await bus.fleet.byId(spawn.spawnId);
    if (now?.state === 'exited') return now;
    if (Date.now() >= deadline) throw new BusError(`stop: asked ${spawn.name} to stop, and its exit is not recorded yet: its supervisor on ${spawn.machine} may be gone ('agent-bus agents' shows it)`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
