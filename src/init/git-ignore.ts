/**
 * Keeping a personal file out of the repo's commits: init writes this machine's agent-bus into a
 * client's personal file, and git must ignore it. Git is asked first (a .gitignore, the user's
 * global excludes); where it does not ignore the file, the repo's own `info/exclude` (never
 * committed, never shared) gets a line for it. The team's .gitignore is never edited.
 */
import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

/** What git says, or null when it cannot answer (no git, or not a work tree git knows). */
function git(repo: string, args: string[]): { status: number; out: string } | null {
  try {
    return { status: 0, out: execFileSync('git', args, { cwd: repo, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }) };
  } catch (error) {
    const status = (error as { status?: unknown }).status;
    return typeof status === 'number' && status === 1 ? { status: 1, out: '' } : null;
  }
}

/** The repo's exclude file: where git says it is, else under a `.git` folder. */
function excludeFile(repo: string): string | null {
  const asked = git(repo, ['rev-parse', '--git-path', 'info/exclude']);
  if (asked !== null && asked.status === 0 && asked.out.trim() !== '') return resolve(repo, asked.out.trim());
  try {
    return statSync(join(repo, '.git')).isDirectory() ? join(repo, '.git', 'info', 'exclude') : null;
  } catch {
    return null;
  }
}

/** Make git ignore `path` (a file under `repo`), and say how it is ignored. */
export function ensureIgnored(repo: string, path: string): string {
  const rel = relative(repo, path).split(sep).join('/');
  const checked = git(repo, ['check-ignore', '-q', '--', rel]);
  if (checked?.status === 0) return 'git ignores it';
  const exclude = excludeFile(repo);
  if (exclude === null) return 'git could not be told to ignore it: keep it out of commits';
  const line = `/${rel}`;
  let text = '';
  try {
    text = readFileSync(exclude, 'utf8');
  } catch {
    // No exclude file yet.
  }
  if (text.split(/\r?\n/).includes(line)) return `git ignores it (${relative(repo, exclude)})`;
  mkdirSync(dirname(exclude), { recursive: true });
  appendFileSync(exclude, `${text === '' || text.endsWith('\n') ? '' : '\n'}# this machine's agent-bus, set by agent-bus init\n${line}\n`);
  return `git ignores it now (${relative(repo, exclude)})`;
}
