/** `agent-bus notice`: a global notice, shown to every session whatever it subscribes to. */
import { openBus } from '../../runtime.js';
import { publishFromArgs } from '../publish-notice.js';
import type { CommandRunner } from '../spec.js';

export const run: CommandRunner = async (args, io) => {
  const bus = openBus(io.env);
  try {
    return await publishFromArgs(bus, null, args.positionals.join(' '), args, io, 'notice');
  } finally {
    await bus.close();
  }
};
