/** The contract each client's wiring fulfils for `agent-bus init`, and what the wirings share. */
import { join } from 'node:path';
import { DEFAULT_VARIABLE } from '../core/subscriptions.js';
import { TOOL_NAMES } from '../protocol/tool-names.js';
import { SERVER_KEY, shellQuote } from './config-files.js';
import type { ClientProfile, HookCommand } from './profile.js';
import type { HooksChoice } from './hook-entries.js';

export { SERVER_KEY };

export type WiringStatus = 'absent' | 'managed' | 'handwritten' | 'unreadable';

export interface WiringInspection {
  status: WiringStatus;
  /** The name the existing wiring gives this client, if any. */
  previousName: string | null;
  problem?: string;
}

export interface FileChange {
  path: string;
  /** The file's text now, or null when it does not exist. */
  before: string | null;
  after: string;
  /** A personal file of this machine's (git must ignore it), not one the team commits. */
  personal?: boolean;
}

/**
 * How the files init writes start agent-bus. The files a team commits run `command` (the bare
 * `agent-bus`, found on PATH wherever a session runs) and say nothing of this machine: who the
 * session is comes from its folder at run time (`--client` plus the repo's git top level).
 */
export interface Launcher {
  /** The command the committed files run. */
  command: string;
  /**
   * This machine's own agent-bus, where the committed command is not it (--bin-path, or
   * $AGENT_BUS_BIN as a path): written only to a client's personal, git-ignored file. `keep`: what
   * that file says already (a run that names none); null: none (the file's entry is removed).
   */
  local: string | null | 'keep';
}

/** The variable a client's personal file sets to this machine's agent-bus, which the committed commands run when it is set. */
export const LOCAL_BIN_VARIABLE = 'AGENT_BUS_BIN';

export interface WiringPlan {
  files: FileChange[];
  /** What the plan left out and why, for init's output. */
  notes?: string[];
}

export interface ClientWiring {
  profile: ClientProfile;
  /** Whether --force may replace a hand-written agent-bus entry. */
  forceable: boolean;
  /** The client's personal file in the repo (git-ignored), where this machine's agent-bus goes; absent where it reads none. */
  personalFile?: string;
  /**
   * Where the client starts a repo's server only once the user approved it on this machine: what is
   * wrong with that approval for the server init wrote (not given, refused, or given to an earlier
   * entry), or null when it is given. Absent where the client asks nothing.
   */
  approvalProblem?(repo: string, home: string): string | null;
  files(repo: string): string[];
  inspect(repo: string): WiringInspection;
  /**
   * The complete new text of every file, computed before anything is written (never half-wired).
   * `remote`: the hub's URL (`init --remote`): the client connects to the hub over HTTP with the
   * token from $AGENT_BUS_TOKEN, and its hooks reach the hub; no file written holds a token.
   * `hooks`: the kind of hook to write (init --hooks), where the client has a choice.
   */
  plan(repo: string, launcher: Launcher, remote?: string | null, hooks?: HooksChoice): WiringPlan;
  /**
   * Why the repo's wiring does not fit the version of the client installed here (a shape it no
   * longer reads, or not yet), or null: for doctor, whatever URL or agent-bus the files name.
   */
  drift?(repo: string, env: NodeJS.ProcessEnv): string | null;
}

/** The client's config files in `repo` (its profile's, in order). */
export function configPaths(profile: ClientProfile, repo: string): string[] {
  return profile.configFiles.map((file) => join(repo, file));
}

/** The MCP server's tools as the client names them for pre-approval (none when it has no such names). */
export function approvedToolNames(profile: ClientProfile): string[] {
  const name = profile.approvedToolName;
  return name === null ? [] : TOOL_NAMES.map((tool) => name(SERVER_KEY, tool));
}

/** What a hook command line carries for a client wired to a hub: where the hub is (never the token). */
export function hubPrefix(remote: string | null | undefined, quote: (word: string) => string): string {
  return remote ? `AGENT_BUS_URL=${quote(remote)} ` : '';
}

/** The hub's MCP endpoint. */
export function hubMcpUrl(remote: string): string {
  return `${remote.replace(/\/+$/, '')}/mcp`;
}

/** The hooks that show notices, so carry the repo's default subscriptions in their command (a launch AGENT_BUS_CHANNELS wins over them). */
export const NOTICE_HOOKS: ReadonlySet<HookCommand> = new Set<HookCommand>(['hook-session-start', 'hook-user-prompt', 'hook-pre-tool']);

/** A client's events whose hook commands carry the subscriptions: where an earlier run's (perhaps edited) value is read. */
export function noticeEvents(profile: ClientProfile): string[] {
  return profile.hookEvents.filter(([, command]) => NOTICE_HOOKS.has(command)).map(([event]) => event);
}

/**
 * A hook command as the committed files hold it: `[AGENT_BUS_URL=… ][AGENT_BUS_DEFAULT_CHANNELS=… ]agent-bus hook-… --client ID || true`.
 * It names no agent: the hook finds its agent from `--client` and the folder its payload names.
 * Where the hook shows notices it carries the repo's subscriptions.
 */
export function hookCommand(profile: ClientProfile, command: string, subcommand: HookCommand, channels: string | null, remote: string | null): string {
  const subscribe = channels !== null && NOTICE_HOOKS.has(subcommand) ? `${DEFAULT_VARIABLE}=${shellQuote(channels)} ` : '';
  return `${hubPrefix(remote, shellQuote)}${subscribe}${shellQuote(command)} ${subcommand} --client ${profile.id} || true`;
}

/** The MCP server's arguments: `serve` for the client, who it is found from the folder the client starts it in. */
export function serveArgs(profile: ClientProfile): string[] {
  return ['serve', '--client', profile.id];
}

/** Whether an MCP entry's arguments are init's `serve` for this client (or an older init's bare `serve`, which named its agent in env). */
export function isServeFor(profile: ClientProfile, args: unknown, env: unknown): boolean {
  if (!Array.isArray(args) || args[0] !== 'serve') return false;
  if (args[1] === '--client' && args[2] === profile.id) return true;
  return args.length === 1 && env !== null && typeof env === 'object' && typeof (env as Record<string, unknown>).AGENT_BUS_NAME === 'string';
}

/** The agent an older init named in an MCP entry's env (AGENT_BUS_NAME), which a re-run retires; null for a portable entry. */
export function legacyName(env: unknown): string | null {
  const value = env !== null && typeof env === 'object' ? (env as Record<string, unknown>).AGENT_BUS_NAME : undefined;
  return typeof value === 'string' ? value : null;
}

/**
 * What a client without a personal file in the repo says about this machine's agent-bus: its
 * committed files run the bare command, so the path given is not written anywhere.
 */
export function noPersonalFileNote(profile: ClientProfile, launcher: Launcher): string[] {
  if (typeof launcher.local !== 'string' || launcher.local === 'keep') return [];
  return [
    `${profile.name} reads no personal file in the repo, so its committed files run \`${launcher.command}\` from PATH and ${launcher.local} is written nowhere: ` +
      `put it on PATH (ln -s ${shellQuote(launcher.local)} ~/.local/bin/${launcher.command})`,
  ];
}
