/** What the hub's own endpoints take from a request's JSON body, checked: bad values are a 400. */
import { InvalidInputError } from '../../model/errors.js';
import type { PlannedWrites } from '../../protocol/hub.js';

/** Text of at most `max` characters, or nothing (absent, null or empty). */
export function optionalText(value: unknown, field: string, max: number): string | null {
  if (value === undefined || value === null || value === '') return null;
  if (typeof value !== 'string' || value.length > max) throw new InvalidInputError(`${field} must be text of at most ${max} characters`);
  return value;
}

/** The client's session id a request names (which session of a client address's token asks). */
export function sessionKeyArg(value: unknown): string | null {
  return optionalText(value, 'session_key', 200);
}

/** The most files one tool call is checked for. */
const MOST_WRITES = 200;

/** Repo-relative POSIX paths, nothing above or outside the repo: at most MOST_WRITES of them. */
export function repoFilesArg(value: unknown, field: string): string[] {
  if (!Array.isArray(value) || value.length === 0 || value.length > MOST_WRITES) throw new InvalidInputError(`${field} must be a list of 1 to ${MOST_WRITES} repo-relative paths`);
  for (const file of value) {
    if (typeof file !== 'string' || file === '' || file.length > 4096 || file.startsWith('/') || file.includes('\0') || file.split('/').some((part) => part === '..' || part === '')) {
      throw new InvalidInputError(`${field}: each must be a path relative to the repo's root, got ${JSON.stringify(String(file).slice(0, 80))}`);
    }
  }
  return value as string[];
}

/** A pre-tool call's writes: its repo's files, and the agent's mode. */
export function plannedWritesArg(value: unknown): PlannedWrites | null {
  if (value === undefined || value === null) return null;
  const { files, mode } = value as { files?: unknown; mode?: unknown };
  if (typeof value !== 'object' || (mode !== 'deny' && mode !== 'warn')) throw new InvalidInputError('writes must be {files: [repo-relative paths], mode: deny or warn}');
  return { files: repoFilesArg(files, 'writes.files'), mode };
}
