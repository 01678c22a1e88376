/**
 * The bus's files are private to their user: the folder 0700, every file in it
 * 0600. Mail bodies, previews, hub credentials and wake commands live there.
 * This finds what is not: looser modes, and files owned by another user.
 */
import { lstatSync, readdirSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import type { BusPaths } from './paths.js';

export interface PrivacyProblem {
  path: string;
  problem: string;
  fix: string;
}

/** The bus's own files in its folder, by name (a prefix for the families: audit.log.1, bus.db-wal). */
const OWN_FILES = ['bus.db', 'audit.log', 'wake.json', 'chat_history', 'hub.json', '.env'];
const OWN_FOLDERS = ['brain-outbox'];

function statOf(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}

/** What is wrong with one path's ownership and mode, if anything. */
export function privacyProblem(path: string, stats: Stats, uid: number | null): PrivacyProblem | null {
  const folder = stats.isDirectory();
  if (uid !== null && stats.uid !== uid) {
    return { path, problem: `owned by another user (uid ${stats.uid})`, fix: `chown ${uid} ${path}` };
  }
  const loose = stats.mode & 0o077;
  if (loose === 0) return null;
  const writable = (stats.mode & 0o022) !== 0;
  const verb = writable ? 'writable' : 'readable';
  const who = (writable ? stats.mode & 0o002 : stats.mode & 0o005) ? 'anyone' : 'its group';
  return { path, problem: `${verb} by ${who} (mode ${(stats.mode & 0o777).toString(8).padStart(3, '0')})`, fix: `chmod ${folder ? '700' : '600'} ${path}` };
}

/** Every problem with the bus folder, its database file, its audit log and the files beside them. */
export function privacyProblems(paths: BusPaths, uid: number | null = process.getuid?.() ?? null): PrivacyProblem[] {
  const problems: PrivacyProblem[] = [];
  const check = (path: string): void => {
    const stats = statOf(path);
    if (stats === null || stats.isSymbolicLink()) return;
    const problem = privacyProblem(path, stats, uid);
    if (problem !== null) problems.push(problem);
  };
  const folders = new Set([paths.folder]);
  if (paths.database.engine === 'sqlite') folders.add(join(paths.database.path, '..'));
  folders.add(join(paths.audit, '..'));
  for (const folder of folders) check(folder);
  const seen = new Set<string>();
  for (const folder of folders) {
    let names: string[] = [];
    try {
      names = readdirSync(folder);
    } catch {
      continue;
    }
    for (const name of names) {
      const path = join(folder, name);
      const ours =
        OWN_FILES.some((own) => name === own || name.startsWith(`${own}.`) || name.startsWith(`${own}-`)) ||
        OWN_FOLDERS.includes(name) ||
        path === paths.db ||
        path.startsWith(`${paths.db}-`) ||
        path === paths.audit ||
        path.startsWith(`${paths.audit}.`);
      if (!ours || seen.has(path)) continue;
      seen.add(path);
      check(path);
      if (OWN_FOLDERS.includes(name)) {
        try {
          for (const inner of readdirSync(path)) check(join(path, inner));
        } catch {
          // Unreadable: the folder's own check above says why.
        }
      }
    }
  }
  return problems;
}

/**
 * The warning a command gives when the bus folder or its database can be written by others or
 * belongs to another user: one stat each, cheap enough for every start.
 */
export function exposureWarning(paths: BusPaths, uid: number | null = process.getuid?.() ?? null): string | null {
  const targets = [paths.folder, ...(paths.database.engine === 'sqlite' ? [paths.database.path] : [])];
  for (const path of targets) {
    const stats = statOf(path);
    // Readable by others is doctor's to list; written by others, or someone else's, is warned of here.
    if (stats === null || ((stats.mode & 0o022) === 0 && (uid === null || stats.uid === uid))) continue;
    const problem = privacyProblem(path, stats, uid) as PrivacyProblem;
    return `warning: ${path} is ${problem.problem}: another user could read or change the bus (${problem.fix})`;
  }
  return null;
}
