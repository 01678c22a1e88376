/**
 * Which way each session on the roster is woken, as `agents` and `doctor` say it: what its watcher row
 * says (its MCP server through the inbox socket, or a watcher process), then the facts the store cannot
 * know: a wake.json command wins over native wake, a Codex session gets a turn its sender queues, and
 * opencode's watcher is its plugin's.
 */
import type { AgentView, WakeFact } from '../core/views.js';
import { profileFor } from '../clients/registry/profiles.js';
import type { Env } from '../model/settings.js';
import { loadWakeConfig, lookupWake, type WakeConfig } from './config.js';

function wayOf(agent: AgentView, config: WakeConfig): WakeFact | null {
  if (agent.kind !== 'session' && agent.kind !== 'client') return agent.wake;
  if (config.problem === null && lookupWake(config, agent.name).status === 'command') return { way: 'command', note: null };
  const { wake } = profileFor(agent.client ?? undefined);
  if (agent.wake !== null) return agent.wake.way === 'watcher' && wake.kind === 'watch' && wake.startedBy === 'plugin' ? { way: 'plugin', note: null } : agent.wake;
  // A sender queues a turn for a session whose hooks noted its thread: a session, never a bare client address.
  if (wake.kind === 'queue' && agent.kind === 'session') return { way: 'queue', note: null };
  return null;
}

/** The roster with each session's wake way filled in from this machine's wake.json and the clients' profiles. */
export function withWakeWays(agents: AgentView[], env: Env): AgentView[] {
  const config = loadWakeConfig(env);
  return agents.map((agent) => ({ ...agent, wake: wayOf(agent, config) }));
}
