/**
 * Every client agent-bus has a profile for, by its id: the one place a reader
 * learns a client's facts. An id without a profile reads as UNKNOWN_CLIENT.
 * Hooks load this module: it holds profiles, never wiring code.
 */
import { agyProfile } from '../agy/profile.js';
import { claudeProfile } from '../claude/profile.js';
import { clineProfile } from '../cline/profile.js';
import { codexProfile } from '../codex/profile.js';
import { copilotProfile } from '../copilot/profile.js';
import { geminiProfile } from '../gemini/profile.js';
import { opencodeProfile } from '../opencode/profile.js';
import { piProfile } from '../pi/profile.js';
import { qwenProfile } from '../qwen/profile.js';
import type { Env } from '../../model/settings.js';
import type { HookDialect } from '../dialect.js';
import { sessionFromEnvironment, UNKNOWN_CLIENT, type ClientProfile, type QueueWake } from '../profile.js';

export const PROFILES = {
  agy: agyProfile,
  claude: claudeProfile,
  cline: clineProfile,
  codex: codexProfile,
  copilot: copilotProfile,
  gemini: geminiProfile,
  opencode: opencodeProfile,
  pi: piProfile,
  qwen: qwenProfile,
} satisfies Record<string, ClientProfile>;

export type ClientId = keyof typeof PROFILES;

/** The client init wires when none is named, and whose settings files doctor reads. */
export const DEFAULT_CLIENT: ClientId = 'claude';

const BY_ID = new Map<string, ClientProfile>(Object.entries(PROFILES));
const ALL: readonly ClientProfile[] = [...BY_ID.values()];

export function profileFor(client: string | null | undefined): ClientProfile {
  return (client && BY_ID.get(client)) || UNKNOWN_CLIENT;
}

/** The client whose shell tool runs this process (a git hook an agent's commit started), and its session's id; null for a person's shell. */
export function clientOfShell(env: Env): { client: ClientId; sessionKey: string | null } | null {
  for (const [id, profile] of Object.entries(PROFILES) as Array<[ClientId, ClientProfile]>) {
    const { shell } = profile;
    if (shell === null || !shell.markers.some((marker) => (env[marker] ?? '').trim() !== '')) continue;
    return { client: id, sessionKey: shell.sessionVariable === null ? null : (env[shell.sessionVariable] ?? '').trim() || null };
  }
  return null;
}

export function dialectFor(client: string | null | undefined): HookDialect {
  return profileFor(client).dialect;
}

/** How a client's sessions are queued a turn when mail arrives, or null when the sender cannot wake them. */
export function queueWakeOf(client: string | null | undefined): QueueWake | null {
  const { wake } = profileFor(client);
  return wake.kind === 'queue' ? wake : null;
}

/** The clients whose sessions the sender wakes (see queueWakeOf). */
export const QUEUE_WOKEN: readonly string[] = ALL.filter((profile) => profile.wake.kind === 'queue').map((profile) => profile.id);

/**
 * The conversation id a client put in this process's environment, whichever client started it:
 * for a process that does not know its client (a status line, a watcher, an MCP call without one).
 */
export function environmentSessionKey(env: Env): string | null {
  for (const profile of ALL) {
    const key = sessionFromEnvironment(profile, env);
    if (key !== null) return key;
  }
  return null;
}

/** The client whose settings files apply to this process (it started it: one of its markers is set), or null. */
export function clientInEnvironment(env: Env): ClientProfile | null {
  return ALL.find((profile) => profile.settings !== null && profile.settings.markers.some((variable) => (env[variable] ?? '') !== '')) ?? null;
}

/** The client that started this MCP server, where its environment says so (ClientProfile.serverMarker), or null. */
export function clientStartingServer(env: Env): ClientId | null {
  for (const [id, profile] of Object.entries(PROFILES) as Array<[ClientId, ClientProfile]>) {
    const marker = profile.serverMarker ?? null;
    if (marker !== null && (env[marker] ?? '').trim() !== '') return id;
  }
  return null;
}
