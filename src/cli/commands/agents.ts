/** `agent-bus agents`: the roster, one block per repo, sessions under their client; then the agents the bus started. */
import { homedir } from 'node:os';
import { hubAccess } from '../../adapters/hub-access.js';
import { openClient } from '../../connect.js';
import { spawnView, type SpawnView } from '../../core/fleet-ops.js';
import type { AgentView } from '../../core/views.js';
import type { SpawnRecord } from '../../model/records.js';
import { renderFleet } from '../../render/fleet.js';
import { makeStyle } from '../../render/style.js';
import { renderRoster } from '../../render/roster.js';
import type { Env } from '../../model/settings.js';
import { openBusHere } from '../../runtime.js';
import { withWakeWays } from '../../wake/ways.js';
import type { CommandRunner } from '../spec.js';

/** Each spawned name's latest spawn, from this machine's bus (over a hub, none yet). */
async function latestSpawns(env: Env): Promise<SpawnView[]> {
  if (hubAccess(env) !== null) return [];
  const bus = openBusHere(env);
  try {
    const latest = new Map<string, SpawnRecord>();
    for (const spawn of await bus.fleet.list()) latest.set(spawn.name, spawn);
    return [...latest.values()].map(spawnView);
  } finally {
    await bus.close();
  }
}

export const run: CommandRunner = async (args, io) => {
  const client = openClient(io.env, { cwd: io.cwd, as: null });
  let agents: AgentView[];
  try {
    agents = withWakeWays(await client.agents(), io.env);
  } finally {
    await client.close();
  }
  const spawns = await latestSpawns(io.env);
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
