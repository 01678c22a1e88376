/** `agent-bus agents`: the roster, one block per repo, sessions under their client; then the agents the bus started. */
import { homedir } from 'node:os';
import { openClient } from '../../connect.js';
import type { SpawnView } from '../../core/fleet-ops.js';
import type { AgentView } from '../../core/views.js';
import { renderFleet } from '../../render/fleet.js';
import { makeStyle } from '../../render/style.js';
import { renderRoster } from '../../render/roster.js';
import { withWakeWays } from '../../wake/ways.js';
import type { CommandRunner } from '../spec.js';

export const run: CommandRunner = async (args, io) => {
  const client = openClient(io.env, { cwd: io.cwd, as: null });
  let agents: AgentView[];
  let spawns: SpawnView[];
  try {
    agents = withWakeWays(await client.agents(), io.env);
    spawns = await client.spawned();
  } finally {
    await client.close();
  }
  if (args.values.json) {
    const byName = new Map(spawns.map((spawn) => [spawn.name, spawn]));
    const listed = agents.map((agent) => ({ ...agent, spawned: byName.get(agent.name) ?? null }));
    const onRoster = new Set(agents.map((agent) => agent.name));
    // A spawned agent whose session has not joined yet (queued, starting, or one that never started) is listed too.
    const notJoined = spawns.filter((spawn) => !onRoster.has(spawn.name)).map((spawn) => ({ name: spawn.name, kind: 'session', group: spawn.repo, client: spawn.client, state: 'unknown', spawned: spawn }));
    io.stdout.write(`${JSON.stringify([...listed, ...notJoined])}\n`);
    return 0;
  }
  const style = await makeStyle(io.stdout, io.env);
  const presence = new Map(agents.map((agent) => [agent.name, agent.state as string]));
  io.stdout.write(renderRoster(agents, style, io.env.HOME ?? homedir()) + renderFleet(spawns, (name) => presence.get(name) ?? null, style));
  return 0;
};
