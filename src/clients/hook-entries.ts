/**
 * Which kind of hook init writes for a client, and the `mcp_tool` entry: a hook the client answers
 * by calling `client_hook` on the session's own agent-bus server, with no process. A client that can
 * (ClientProfile.hookTools) gets them from the version on; an older one, or one asked for
 * (`init --hooks command`), command hooks.
 */
import { HOOK_COMMAND_KINDS } from '../model/hooks.js';
import { setting } from '../model/settings.js';
import { HOOK_TOOL } from '../protocol/tool-names.js';
import { atLeast, clientVersion } from './client-version.js';
import { SERVER_KEY, type JsonObject } from './config-files.js';
import type { ClientProfile, HookCommand } from './profile.js';

/** What `init --hooks` asks for: the kind the installed client supports (auto), or one kind. */
export type HooksChoice = 'auto' | 'command' | 'mcp';
export const HOOKS_CHOICES: readonly HooksChoice[] = ['auto', 'command', 'mcp'];

/** The kind of hook a client's files hold. */
export type HookWay = 'command' | 'mcp';

/**
 * The payload fields each hook passes on: only those its event's payload holds, since Codex skips a
 * hook whose input names a field its payload lacks (Claude Code gives "" for one).
 */
const FIELDS: Record<HookCommand, readonly string[]> = {
  'hook-session-start': ['session_id', 'cwd', 'hook_event_name', 'transcript_path'],
  'hook-user-prompt': ['session_id', 'cwd', 'hook_event_name'],
  'hook-pre-tool': ['session_id', 'cwd', 'hook_event_name', 'tool_name', 'tool_input'],
  'hook-stop': ['session_id', 'cwd', 'hook_event_name', 'stop_hook_active', 'last_assistant_message'],
  'hook-notification': ['session_id', 'cwd', 'hook_event_name', 'notification_type'],
  'hook-session-end': ['session_id', 'cwd', 'hook_event_name'],
};

/** The most a hook waits for the server's answer, in seconds; past it, the client goes on without one. */
const TIMEOUT_SECONDS = 10;

/**
 * The `mcp_tool` entry for one hook command. `channels`: the repo's default subscriptions, carried
 * by the hooks that show notices where the client gives its server no settings of the repo (Codex).
 * On failure the client goes on ("continue"): a server that is not connected never blocks a turn.
 */
export function mcpHookEntry(command: HookCommand, channels: string | null): JsonObject {
  const input: JsonObject = { kind: HOOK_COMMAND_KINDS[command] };
  if (channels !== null) input.default_channels = channels;
  for (const field of FIELDS[command]) input[field] = `\${${field}}`;
  return { type: 'mcp_tool', server: SERVER_KEY, tool: HOOK_TOOL, input, timeout: TIMEOUT_SECONDS, onFailure: 'continue' };
}

/** The executable asked for the client's version. */
function executableOf(profile: ClientProfile, env: NodeJS.ProcessEnv): string | null {
  const tools = profile.hookTools ?? null;
  if (tools === null) return null;
  return setting(env, tools.executable.variable) || tools.executable.fallback;
}

/** Whether the installed client runs `mcp_tool` hooks: yes, no (its version), or unknown (it cannot be asked). */
export function supportsHookTools(profile: ClientProfile, env: NodeJS.ProcessEnv): { supported: boolean | null; version: string | null; problem: string | null } {
  const tools = profile.hookTools ?? null;
  const bin = executableOf(profile, env);
  if (tools === null || bin === null) return { supported: false, version: null, problem: null };
  const { version, problem } = clientVersion(bin, profile.name, env);
  return { supported: version === null ? null : atLeast(version, tools.minVersion), version, problem };
}

/** The lowest version of the client that runs them, for what is said. */
export function hookToolsSince(profile: ClientProfile): string | null {
  return profile.hookTools ? profile.hookTools.minVersion.join('.') : null;
}

/**
 * The kind of hook init writes for a client, and what to say of the choice: `mcp` where the client
 * runs them (auto: its version says so), else command hooks. Wired to a hub or not: its server is
 * agent-bus's own either way (over a hub, the relay, which asks the hub).
 */
export function hookWayFor(profile: ClientProfile, choice: HooksChoice, env: NodeJS.ProcessEnv): { way: HookWay; note: string | null } {
  const since = hookToolsSince(profile);
  if (since === null) return { way: 'command', note: choice === 'mcp' ? `${profile.name} cannot call a server's tool as a hook: command hooks` : null };
  if (choice === 'command') return { way: 'command', note: null };
  const { supported, version, problem } = supportsHookTools(profile, env);
  if (choice === 'mcp') {
    if (supported === true) return { way: 'mcp', note: null };
    const why = version === null ? (problem ?? `cannot tell the ${profile.name} version`) : `${profile.name} ${version} is older than ${since}`;
    return { way: 'mcp', note: `hooks through the server, as asked, though ${why}: they will not run before ${since}` };
  }
  // An older (or unknown) client gets command hooks without a word: doctor says which kind each client runs.
  return { way: supported === true ? 'mcp' : 'command', note: null };
}
