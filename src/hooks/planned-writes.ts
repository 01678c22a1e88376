/**
 * Which files of the repo a pre-tool call is about to write, read on the agent's own machine (where
 * the payload's paths mean something) and checked here or, for a remote agent, on the hub.
 */
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { canonicalPath } from '../adapters/identity.js';
import type { ClientProfile } from '../clients/profile.js';
import { setting, type Env } from '../model/settings.js';
import type { PlannedWrites } from '../protocol/hub.js';

export type { PlannedWrites } from '../protocol/hub.js';

/**
 * The files a tool call is about to write, relative to the repo, read from its payload on the
 * agent's own machine (where the paths mean something); null when it writes none, or the check is off.
 * `repoPath` is asked only when the call writes something (most tool calls write nothing). A shell
 * command's files take its parser, loaded only then: hence a promise.
 */
export async function plannedWrites(profile: ClientProfile, payload: Record<string, unknown>, repoPath: () => string, cwd: string, env: Env): Promise<PlannedWrites | null> {
  const mode = setting(env, 'AGENT_BUS_RESERVATIONS');
  if (mode === 'off' || profile.writtenFiles === null) return null;
  const written = await profile.writtenFiles(payload);
  if (written.length === 0) return null;
  const root = repoPath();
  const files = [...new Set(written.map((file) => repoRelative(file, root, cwd)).filter((file): file is string => file !== null))];
  return files.length === 0 ? null : { files, mode: mode === 'warn' ? 'warn' : 'deny' };
}

/** A written file as the repo knows it (relative, POSIX), or null when it lies outside the repo. */
export function repoRelative(file: string, repoPath: string, cwd: string): string | null {
  const absolute = isAbsolute(file) ? file : resolve(cwd, file);
  const within = (path: string): string | null => {
    const inside = relative(repoPath, path);
    return inside === '' || inside.split(sep)[0] === '..' || isAbsolute(inside) ? null : inside.split(sep).join('/');
  };
  // The repo's path is recorded with its links resolved; the client may name the file through one.
  return within(absolute) ?? within(join(canonicalPath(dirname(absolute)), basename(absolute)));
}
