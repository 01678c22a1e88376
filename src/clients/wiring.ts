/** The contract each client's wiring fulfils for `agent-bus init`, and what the wirings share. */
import { join } from 'node:path';
import { TOOL_NAMES } from '../protocol/tool-names.js';
import type { ClientProfile } from './profile.js';

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
