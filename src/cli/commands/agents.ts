/** `agent-bus agents`: the roster, one block per repo, sessions under their client. */
import { homedir } from 'node:os';
import { openClient } from '../../connect.js';
import { makeStyle } from '../../render/style.js';
import { renderRoster } from '../../render/roster.js';
import { withWakeWays } from '../../wake/ways.js';
import type { CommandRunner } from '../spec.js';

export const run: CommandRunner = async (args, io) => {
  const client = openClient(io.env, { cwd: io.cwd, as: null });
  let agents;
  try {
    agents = withWakeWays(await client.agents(), io.env);
  } finally {
    await client.close();
  }
  if (args.values.json) {
    io.stdout.write(`${JSON.stringify(agents)}\n`);
    return 0;
  }
  const style = await makeStyle(io.stdout, io.env);
  io.stdout.write(renderRoster(agents, style, io.env.HOME ?? homedir()));
  return 0;
};
