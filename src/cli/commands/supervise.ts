/** `agent-bus supervise ID`: started by `spawn`, detached; watches one spawned agent until it exits (fleet/supervisor.ts). */
import { busPaths } from '../../adapters/paths.js';
import { localDesk } from '../../fleet/desk.js';
import { supervise } from '../../fleet/supervisor.js';
import { openBusHere } from '../../runtime.js';
import type { CommandRunner } from '../spec.js';

export const run: CommandRunner = async (args, io) => {
  const bus = openBusHere(io.env);
  try {
    const busFolder = busPaths(io.env).folder;
    return await supervise({ desk: localDesk(bus, busFolder), env: io.env, busFolder, spawnId: args.positionals[0] as string });
  } finally {
    await bus.close();
  }
};
