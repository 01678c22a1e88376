/**
 * Which opencode this machine runs, as `opencode --version` says (or AGENT_BUS_OPENCODE_BIN's): what
 * decides the shape init writes. opencode 2 reads its MCP servers from `mcp.servers` and shows their
 * tools to the model only with `codemode: false` (its Code Mode otherwise hides them behind one
 * `execute` tool); opencode 1.x reads them from `mcp.<name>`, and finds no server in `mcp.servers`.
 */
import { clientVersion } from '../client-version.js';
import { setting } from '../../model/settings.js';

export interface OpencodeGeneration {
  /** 2 for opencode 2 and later, 1 for 1.x (also when the version cannot be told). */
  major: 1 | 2;
  /** The version, or null when it cannot be told. */
  version: string | null;
  /** Why it cannot be told. */
  problem: string | null;
}

/** The opencode executable asked: AGENT_BUS_OPENCODE_BIN, else `opencode` on PATH. */
export function opencodeBin(env: NodeJS.ProcessEnv): string {
  return setting(env, 'AGENT_BUS_OPENCODE_BIN') || 'opencode';
}

export function opencodeGeneration(env: NodeJS.ProcessEnv): OpencodeGeneration {
  const { version, problem } = clientVersion(opencodeBin(env), 'opencode', env);
  const major = version === null ? 1 : Number(version.split('.')[0]) >= 2 ? 2 : 1;
  return { major, version, problem };
}
