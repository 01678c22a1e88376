/**
 * The environment a spawned agent starts with: the one its `spawn` ran in (its PATH and its keys),
 * without what marks the session that asked (a client refuses to start inside another's session, and
 * its hooks would speak for the wrong agent), and with its own name and depth in spawns.
 */
import { PROFILES } from '../clients/registry/profiles.js';
import type { ClientProfile } from '../clients/profile.js';
import type { Env } from '../model/settings.js';

/** Every variable a client sets to mark its session, its shell or its servers. */
export function sessionMarkers(): Set<string> {
  const names = new Set<string>(['AGENT_BUS_NAME', 'AGENT_BUS_SESSION', 'AGENT_BUS_CLIENT']);
  for (const profile of Object.values(PROFILES) as ClientProfile[]) {
    if (profile.sessionVariable) names.add(profile.sessionVariable);
    if (profile.serverMarker) names.add(profile.serverMarker);
    for (const marker of profile.shell?.markers ?? []) names.add(marker);
    for (const marker of profile.settings?.markers ?? []) names.add(marker);
    if (profile.settings) names.add(profile.settings.projectVariable);
    if (profile.wake.kind === 'watch' && profile.wake.socket !== null) {
      names.add(profile.wake.socket.path);
      names.add(profile.wake.socket.token);
    }
  }
  return names;
}

/** The variables that are the agent's own, set over whatever it inherits. */
export const AGENT_OWN_VARIABLES = ['AGENT_BUS_NAME', 'AGENT_BUS_SPAWN_DEPTH'] as const;

export function agentEnvironment(from: Env, agent: { name: string; depth: number }, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const markers = sessionMarkers();
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(from)) if (value !== undefined && !markers.has(key)) env[key] = value;
  return { ...env, ...extra, AGENT_BUS_NAME: agent.name, AGENT_BUS_SPAWN_DEPTH: String(agent.depth) };
}
