/** `agent-bus supervise ID`: started by `spawn`, detached; watches one spawned agent until it exits (fleet/supervisor.ts). */
import { hostname } from 'node:os';
import { busPaths } from '../../adapters/paths.js';
import { localDesk } from '../../fleet/desk.js';
import { supervise } from '../../fleet/supervisor.js';
import { openBusHere } from '../../runtime.js';
import type { CommandRunner } from '../spec.js';

export const run: CommandRunner = async (args, io) => {
  const bus = openBusHere(io.env);
  try {
    const busFolder = busPaths(io.env).folder;
    // Named as `spawn` named it when it took the slot for it: this machine, this process, the word it gave.
    const word = typeof args.values.handover === 'string' && /^[0-9a-f]{1,32}$/.test(args.values.handover) ? args.values.handover : null;
    return await supervise({
      desk: localDesk(bus, busFolder),
      env: io.env,
      busFolder,
      spawnId: args.positionals[0] as string,
      ...(word === null ? {} : { supervisorName: `${hostname()}/${process.pid}/${word}` }),
    });
  } finally {
    await bus.close();
  }
};
