/**
 * A command's way to the bus: the hub this machine is set to use, else its own store. The one place a
 * command's way is chosen; only the entry points (the commands) import it, as they import runtime.ts,
 * so a hook's bundle carries none of the client.
 */
import type { BusClient } from './client/bus-client.js';
import { HubClient } from './client/hub-client.js';
import { LocalClient } from './client/local-client.js';
import { speakerName } from './client/speaker.js';
import { busPaths } from './adapters/paths.js';
import type { Env } from './model/settings.js';
import { hubAccess } from './adapters/hub-access.js';
import { openBusHere } from './runtime.js';

/**
 * The bus for a command, wherever it is: the hub this machine is set to use (AGENT_BUS_URL, or
 * agent-bus login), reached with its token, else this machine's own store, opened on first use.
 * The one place a command's way to the bus is chosen. `as`: the name --name asks to act as (over a
 * hub, the token's agent or one of its sessions; here, any name); null: the token's agent, or here
 * $AGENT_BUS_NAME, else the human.
 */
export function openClient(env: Env, options: { cwd: string; as: string | null }): BusClient {
  const access = hubAccess(env);
  if (access !== null) return new HubClient(access, options.as);
  const paths = busPaths(env);
  return new LocalClient(() => openBusHere(env), { env, cwd: options.cwd, database: paths.db, auditPath: paths.audit }, options.as, () => speakerName(undefined, env));
}

