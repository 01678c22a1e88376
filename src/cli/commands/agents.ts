/** `agent-bus agents`: the roster, one block per repo, sessions under their client. */
import { homedir } from 'node:os';
import { openBus } from '../../runtime.js';
import { makeStyle } from '../../render/style.js';
import { renderRoster } from '../../render/roster.js';
import type { CommandIo, CommandRunner } from '../spec.js';
import type { AgentView } from '../../core/views.js';
import { hubAccess } from '../../remote/settings.js';
import { callHubTool } from '../../remote/tools.js';

export const run: CommandRunner = async (args, io) => {
  const access = hubAccess(io.env);
  if (access !== null) return show((await callHubTool<AgentView[]>(access, 'list_agents', {})).value, Boolean(args.values.json), io);
  const bus = openBus(io.env);
  try {
    return await show(await bus.agents(), Boolean(args.values.json), io);
  } finally {
    await bus.close();
  }
};

async function show(agents: AgentView[], json: boolean, io: CommandIo): Promise<number> {
  {
    if (json) {
      io.stdout.write(`${JSON.stringify(agents)}\n`);
      return 0;
    }
    const style = await makeStyle(io.stdout, io.env);
    io.stdout.write(renderRoster(agents, style, io.env.HOME ?? homedir()));
    return 0;
  }
}
