/** `agent-bus notice`: a global notice, shown to every session whatever it subscribes to. */
import { openClient } from '../../connect.js';
import { publishFromArgs } from '../publish-notice.js';
import type { CommandRunner } from '../spec.js';

export const run: CommandRunner = async (args, io) => {
  const message = args.positionals.join(' ');
  const client = openClient(io.env, { cwd: io.cwd, as: null });
  try {
    return await publishFromArgs(client.notices, null, message, args, io, 'notice');
  } finally {
    await client.close();
  }
};
