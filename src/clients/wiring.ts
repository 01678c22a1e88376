/** The contract each client's wiring fulfils for `agent-bus init`, and what the wirings share. */
import { join } from 'node:path';
import { DEFAULT_VARIABLE } from '../core/subscriptions.js';
import { TOOL_NAMES } from '../protocol/tool-names.js';
import { shellQuote } from './config-files.js';
import type { ClientProfile, HookCommand } from './profile.js';

/** The name of agent-bus's MCP server in every client's config. */
export const SERVER_KEY = 'agent-bus';

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
}

export interface WiringPlan {
  files: FileChange[];
  /** What the plan left out and why, for init's output. */
  notes?: string[];
}

export interface ClientWiring {
  profile: ClientProfile;
  /** Whether --force may replace a hand-written agent-bus entry. */
  forceable: boolean;
  files(repo: string): string[];
  inspect(repo: string): WiringInspection;
  /**
   * The complete new text of every file, computed before anything is written (never half-wired).
   * `remote`: the hub's URL (`init --remote`): the client connects to the hub over HTTP with the
   * token from $AGENT_BUS_TOKEN, and its hooks reach the hub; no file written holds a token.
   */
  plan(repo: string, name: string, bin: string, remote?: string | null): WiringPlan;
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
 * A hook command that names its agent, and where the hook shows notices the repo's subscriptions:
 * `[AGENT_BUS_URL=… ]AGENT_BUS_NAME=… [AGENT_BUS_DEFAULT_CHANNELS=… ]BIN hook-… --client ID || true`.
 */
export function namedHookCommand(profile: ClientProfile, bin: string, name: string, subcommand: HookCommand, channels: string, remote: string | null): string {
  const subscribe = NOTICE_HOOKS.has(subcommand) ? ` ${DEFAULT_VARIABLE}=${shellQuote(channels)}` : '';
  return `${hubPrefix(remote, shellQuote)}AGENT_BUS_NAME=${shellQuote(name)}${subscribe} ${shellQuote(bin)} ${subcommand} --client ${profile.id} || true`;
}
