/** `agent-bus notice`: a global notice, shown to every session whatever it subscribes to. */
import { openBus } from '../../runtime.js';
import { RemoteNotices } from '../../remote/notices.js';
import { hubAccess } from '../../remote/settings.js';
import { publishFromArgs } from '../publish-notice.js';
import type { CommandRunner } from '../spec.js';

export const run: CommandRunner = async (args, io) => {
  const message = args.positionals.join(' ');
  const access = hubAccess(io.env);
  if (access !== null) return publishFromArgs(new RemoteNotices(access), null, message, args, io, 'notice');
  const bus = openBus(io.env);
  try {
    return await publishFromArgs(bus.notices, null, message, args, io, 'notice');
  } finally {
    await bus.close();
  }
};
