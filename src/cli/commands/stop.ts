/** `agent-bus stop NAME`: end a spawned agent, a polite signal first and a kill after the grace period; its exit is recorded either way. */
import { speakerName } from '../../client/speaker.js';
import { exitText, spawnView } from '../../core/fleet-ops.js';
import { stopAgent } from '../../fleet/stop.js';
import { stampToMillis } from '../../model/clock.js';
import { openBusHere, refuseOverHub } from '../../runtime.js';
import type { CommandRunner } from '../spec.js';

export const run: CommandRunner = async (args, io) => {
  refuseOverHub(io.env);
  const bus = openBusHere(io.env);
  try {
    const stopped = await stopAgent(bus, io.env, args.positionals[0] as string, speakerName(undefined, io.env));
    if (args.values.json) io.stdout.write(`${JSON.stringify(spawnView(stopped))}\n`);
    else {
      const took = stopped.stopRequestedAt !== null && stopped.endedAt !== null ? (stampToMillis(stopped.endedAt) - stampToMillis(stopped.stopRequestedAt)) / 1000 : 0;
      io.stdout.write(`stopped ${stopped.name}: ${exitText(stopped)} after ${Math.max(0, took).toFixed(1)}s\n`);
    }
    return 0;
  } finally {
    await bus.close();
  }
};
