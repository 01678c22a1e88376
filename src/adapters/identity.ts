/**
 * Who a server or hook speaks for, worked out from its configuration (never
 * from tool arguments): AGENT_BUS_NAME wins; otherwise a client id plus the
 * repo it runs in gives `<repo>/<client>`. The MCP server and the hooks share
 * this one rule.
 */
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { BusError } from '../model/errors.js';
import { clientAddressOf, clientIdProblem, composeName, normaliseLabel, parseNameLenient, slugify, speakerProblem } from '../core/names.js';
import { setting, type Env } from '../model/settings.js';
import type { AgentRecord } from '../model/records.js';
import { quoted } from '../model/quote.js';

export const NAME_FILE = '.agent-bus-name';
export const IGNORE_FILE = '.agent-bus-ignore';

/** Nothing identifies this process, or a setting is malformed. Exit code 2, as a usage error. */
export class IdentityError extends BusError {
  constructor(message: string) {
    super(message, 2);
  }
}

export interface IdentityInput {
  env: Env;
  /** `--client` from the command line. */
  client?: string | undefined;
  /** The directory a hook payload reports. */
  payloadDir?: string | undefined;
  cwd: string;
}

/** What finding an identity reads of the roster (the core's Roster is one). */
export interface IdentityLookups {
  /** Roster rows registered for this repo path. */
  at(repoPath: string): Promise<AgentRecord[]>;
  get(name: string): Promise<AgentRecord | null>;
}

export type Identity =
  | {
      kind: 'agent';
      /** The name to speak as; for a client, its shared client address. */
      name: string;
      repoPath: string;
      client: string | null;
      /** A session handle asked for (AGENT_BUS_SESSION, AGENT_BUS_INSTANCE, or a handle in AGENT_BUS_NAME). */
      pinnedHandle: string | null;
      /** False when the name came from AGENT_BUS_NAME and is trusted as given. */
      derived: boolean;
      warnings: string[];
    }
  | { kind: 'opted-out'; marker: string }
  /** Hooks only: this client has no agent registered in this repo. */
  | { kind: 'nobody' };

/** A path with symlinks resolved, as the roster records repo paths (so every surface agrees). */
export function canonicalPath(path: string): string {
  try {
    return realpathSync.native(path);
  } catch {
    return resolve(path);
  }
}

/** The nearest folder at or above `start` holding `.git` (a folder or, in worktrees, a file); null when none does. */
export function gitRoot(start: string): string | null {
  for (let folder = canonicalPath(start); ; folder = dirname(folder)) {
    if (existsSync(join(folder, '.git'))) return folder;
    if (dirname(folder) === folder) return null;
  }
}

/** The nearest folder at or above `start` holding `.git`; else `start`. */
export function repoRoot(start: string): string {
  return gitRoot(start) ?? canonicalPath(start);
}

/** An opt-out marker at or above `start`, up to the repo root. */
export function optOutMarker(start: string, root: string): string | null {
  for (let folder = canonicalPath(start); ; folder = dirname(folder)) {
    const marker = join(folder, IGNORE_FILE);
    if (existsSync(marker)) return marker;
    if (folder === root || dirname(folder) === folder) return null;
  }
}

/** The repo's name: the first line of its .agent-bus-name, else its folder's name, as a slug. */
export function repoName(root: string): string {
  try {
    const pinned = readFileSync(join(root, NAME_FILE), 'utf8').split(/\r?\n/)[0]?.trim() ?? '';
    if (pinned !== '') return slugify(pinned);
  } catch {
    // No pin: the folder name it is.
  }
  return slugify(basename(root));
}

export function sessionsEnabled(env: Env): boolean {
  return setting(env, 'AGENT_BUS_SESSIONS');
}

/** The session handle the environment asks for, if any. */
export function requestedHandle(env: Env): string | null {
  const label = setting(env, 'AGENT_BUS_SESSION');
  if (label !== '') {
    try {
      return normaliseLabel(label);
    } catch (error) {
      throw new IdentityError(`AGENT_BUS_SESSION: ${(error as Error).message}`);
    }
  }
  const instance = setting(env, 'AGENT_BUS_INSTANCE');
  if (instance !== '') {
    const number = /^\d+$/.test(instance) ? Number.parseInt(instance, 10) : Number.NaN;
    if (!(number >= 1 && number <= 99)) throw new IdentityError(`AGENT_BUS_INSTANCE must be a number 1..99, got ${quoted(instance)}`);
    return String(number);
  }
  return null;
}

export async function resolveIdentity(input: IdentityInput, lookups: IdentityLookups, mode: 'server' | 'hook'): Promise<Identity> {
  const { env } = input;
  const explicitName = setting(env, 'AGENT_BUS_NAME');
  const explicitRepo = setting(env, 'AGENT_BUS_REPO');
  const start = explicitRepo !== '' ? resolve(input.cwd, explicitRepo) : input.payloadDir ? resolve(input.cwd, input.payloadDir) : input.cwd;
  const root = repoRoot(start);
  const marker = optOutMarker(start, root);
  if (marker !== null) return { kind: 'opted-out', marker };
  const handle = requestedHandle(env);

  if (explicitName !== '') {
    const problem = speakerProblem(explicitName);
    if (problem !== null) throw new IdentityError(`AGENT_BUS_NAME: ${problem}`);
    const parsed = parseNameLenient(explicitName);
    const base = parsed?.handle ? (clientAddressOf(explicitName) as string) : explicitName;
    const pinned = handle ?? parsed?.handle ?? null;
    if (pinned !== null && !parsed?.client) {
      throw new IdentityError(`${quoted(explicitName)} has no client part to add a session to. Name the agent <repo>/<client> first.`);
    }
    const repoPath = explicitRepo !== '' ? canonicalPath(resolve(input.cwd, explicitRepo)) : root;
    // Hooks show no warnings, and run at every turn: they skip the lookup.
    const warnings = mode === 'server' ? await pathWarnings(base, repoPath, lookups) : [];
    return { kind: 'agent', name: base, repoPath, client: parsed?.client ?? null, pinnedHandle: pinned, derived: false, warnings };
  }

  const client = (input.client ?? setting(env, 'AGENT_BUS_CLIENT')).trim();
  if (client === '') {
    throw new IdentityError(
      'cannot tell which agent this is: set AGENT_BUS_NAME (for example AGENT_BUS_NAME=my-repo/claude), or pass --client (or set AGENT_BUS_CLIENT) to derive it from the repo',
    );
  }
  const clientIssue = clientIdProblem(client);
  if (clientIssue) throw new IdentityError(`invalid client id: ${clientIssue}`);
  // Prefer what the roster already says about this repo and client (a name pinned earlier).
  const registered = (await lookups.at(root))
    .map((agent) => clientAddressOf(agent.name))
    .filter((address): address is string => address !== null && address.endsWith(`/${client}`))
    .sort();
  if (mode === 'hook' && registered.length === 0) return { kind: 'nobody' };
  const name = registered[0] ?? composeName(repoName(root), client);
  const warnings = mode === 'server' ? await pathWarnings(name, root, lookups) : [];
  return { kind: 'agent', name, repoPath: root, client, pinnedHandle: handle, derived: true, warnings };
}

async function pathWarnings(name: string, repoPath: string, lookups: IdentityLookups): Promise<string[]> {
  const known = await lookups.get(name);
  if (!known || known.repoPath === repoPath) return [];
  return [
    `${quoted(name)} was last registered for ${known.repoPath}, not ${repoPath}: both repos share one inbox. ` +
      `Give one of them its own name with a ${NAME_FILE} file and run agent-bus init there again.`,
  ];
}
