/** `agent-bus agents`: the roster, one block per repo, sessions under their client. */
import { homedir } from 'node:os';
import { openBus } from '../../runtime.js';
import { makeStyle } from '../../render/style.js';
import { renderRoster } from '../../render/roster.js';
import type { CommandRunner } from '../spec.js';

export const run: CommandRunner = async (args, io) => {
  const bus = openBus(io.env);
  try {
    const agents = await bus.agents();
    if (args.values.json) {
      io.stdout.write(`${JSON.stringify(agents)}\n`);
      return 0;
    }
    const style = await makeStyle(io.stdout, io.env);
    io.stdout.write(renderRoster(agents, style, io.env.HOME ?? homedir()));
    return 0;
  } finally {
    await bus.close();
  }
};
