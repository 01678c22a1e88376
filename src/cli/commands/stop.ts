/** `agent-bus stop NAME`: end a spawned agent, a polite signal first and a kill after the grace period; its exit is recorded either way. */
import { hostname } from 'node:os';
import { speakerName } from '../../client/speaker.js';
import { exitText, spawnView } from '../../core/fleet-ops.js';
import { BusError } from '../../model/errors.js';
import { setting } from '../../model/settings.js';
import { openBusHere, refuseOverHub } from '../../runtime.js';
import type { CommandRunner } from '../spec.js';

/** The pid in a supervisor's `<host>/<pid>/<random>`, when it runs on this machine. */
function localPid(supervisor: string | null): number | null {
  const [host, pid] = (supervisor ?? '').split('/');
  return host === hostname() && /^\d+$/.test(pid ?? '') ? Number(pid) : null;
}

export const run: CommandRunner = async (args, io) => {
  refuseOverHub(io.env);
  const bus = openBusHere(io.env);
  try {
    const spawn = await bus.fleet.find(args.positionals[0] as string);
    if (spawn.state === 'exited') throw new BusError(`stop: ${spawn.name} has ended already: ${exitText(spawn)}`);
    const asked = Date.now();
    await bus.fleet.requestStop(spawn, speakerName(undefined, io.env));
    // Its supervisor hears the store's request within a second; a signal, where it runs here, at once.
    const pid = localPid(spawn.supervisor);
    if (pid !== null) {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // Gone: its exit is judged by the listing.
      }
    }
    const deadline = asked + setting(io.env, 'AGENT_BUS_STOP_GRACE') + 5_000;
    for (;;) {
      const now = await bus.fleet.byId(spawn.spawnId);
      if (now?.state === 'exited') {
        if (args.values.json) io.stdout.write(`${JSON.stringify(spawnView(now))}\n`);
        else io.stdout.write(`stopped ${now.name}: ${exitText(now)} after ${((Date.now() - asked) / 1000).toFixed(1)}s\n`);
        return 0;
      }
      if (Date.now() >= deadline) throw new BusError(`stop: asked ${spawn.name} to stop, and its exit is not recorded yet: its supervisor on ${spawn.machine} may be gone ('agent-bus agents' shows it)`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    await bus.close();
  }
};
