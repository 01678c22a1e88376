/**
 * The commit guard: a git pre-commit hook that runs `agent-bus guard check`, which refuses a commit
 * of a file another agent holds. Installing it keeps a pre-commit hook already there (it is moved
 * beside ours and run first) and follows core.hooksPath; uninstalling removes exactly what install
 * added and puts the earlier hook back. Git is asked, never guessed: where the hooks are, and what
 * is staged.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { InvalidInputError, BusError } from '../model/errors.js';
import { quoted } from '../model/quote.js';

/** The line that marks a pre-commit hook as the guard's. */
export const GUARD_MARKER = '# agent-bus guard:';
/** Where the pre-commit hook found at install waits, run first by ours. */
export const CHAINED_HOOK = 'pre-commit.agent-bus-chained';

export interface GuardPlace {
  /** The work tree's root. */
  root: string;
  /** The folder git runs hooks from (core.hooksPath, or the repo's hooks folder). */
  hooksDir: string;
  hook: string;
  chained: string;
}

function git(cwd: string, args: string[]): string {
  try {
    return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    const said = String((error as { stderr?: unknown }).stderr ?? '').trim().split('\n')[0] ?? '';
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new BusError('git was not found on PATH: the commit guard needs git');
    throw new BusError(`${quoted(cwd)} is not in a git work tree${said === '' ? '' : ` (git: ${said})`}`);
  }
}

/** The guard's place in the repo that `path` is in. */
export function guardPlace(path: string): GuardPlace {
  if (!existsSync(path)) throw new InvalidInputError(`${quoted(path)} does not exist`);
  const cwd = statSync(path).isDirectory() ? path : dirname(path);
  const root = git(cwd, ['rev-parse', '--show-toplevel']).trim();
  // --git-path follows core.hooksPath (relative to the work tree's root when relative) and worktrees.
  const hooksDir = resolve(root, git(root, ['rev-parse', '--git-path', 'hooks']).trim());
  return { root, hooksDir, hook: join(hooksDir, 'pre-commit'), chained: join(hooksDir, CHAINED_HOOK) };
}

/** A word for sh: single-quoted, with any single quote closed, escaped and reopened. */
function shellWord(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** The pre-commit hook: the chained hook first, then the check; a missing agent-bus lets the commit through. */
export function guardScript(bin: string): string {
  const command = shellWord(bin);
  return [
    '#!/bin/sh',
    `${GUARD_MARKER} refuses a commit of a file another agent has reserved (agent-bus reserve).`,
    '# Installed by `agent-bus guard install`; `agent-bus guard uninstall` removes it and puts back the hook it chains.',
    '# Bypass: AGENT_BUS_GUARD=off, or git commit --no-verify.',
    `chained="$(dirname "$0")/${CHAINED_HOOK}"`,
    'if [ -x "$chained" ]; then "$chained" "$@" || exit $?; fi',
    '[ "${AGENT_BUS_GUARD:-}" = off ] && exit 0',
    `if ! command -v ${command} >/dev/null 2>&1; then echo "agent-bus guard: "${command}" not found: committing without the reservation check" >&2; exit 0; fi`,
    `exec ${command} guard check`,
    '',
  ].join('\n');
}

function isGuard(path: string): boolean {
  try {
    return readFileSync(path, 'utf8').includes(GUARD_MARKER);
  } catch {
    return false;
  }
}

/** Write a file whole or not at all, executable. */
function writeExecutable(path: string, text: string): void {
  const temporary = `${path}.agent-bus-${process.pid}.tmp`;
  writeFileSync(temporary, text, { mode: 0o755 });
  chmodSync(temporary, 0o755);
  renameSync(temporary, path);
}

export type InstallOutcome = 'installed' | 'installed, chaining the pre-commit hook that was there' | 'refreshed' | 'already installed';

export function installGuard(place: GuardPlace, bin: string): InstallOutcome {
  const script = guardScript(bin);
  mkdirSync(place.hooksDir, { recursive: true });
  if (existsSync(place.hook) && isGuard(place.hook)) {
    if (readFileSync(place.hook, 'utf8') === script) return 'already installed';
    writeExecutable(place.hook, script);
    return 'refreshed';
  }
  if (!existsSync(place.hook)) {
    writeExecutable(place.hook, script);
    return 'installed';
  }
  if (existsSync(place.chained)) {
    throw new InvalidInputError(`${quoted(place.chained)} is already there beside a pre-commit hook that is not the guard's: move one of them away first`);
  }
  renameSync(place.hook, place.chained);
  writeExecutable(place.hook, script);
  return 'installed, chaining the pre-commit hook that was there';
}

export type UninstallOutcome = 'removed' | 'removed, the chained pre-commit hook put back' | 'not installed';

export function uninstallGuard(place: GuardPlace): UninstallOutcome {
  if (!existsSync(place.hook) || !isGuard(place.hook)) return 'not installed';
  rmSync(place.hook);
  if (!existsSync(place.chained)) return 'removed';
  renameSync(place.chained, place.hook);
  return 'removed, the chained pre-commit hook put back';
}

export function guardInstalled(place: GuardPlace): boolean {
  return existsSync(place.hook) && isGuard(place.hook);
}

/** The paths a commit would change, relative to the work tree's root: added, changed, removed, both sides of a rename. */
export function stagedFiles(root: string): string[] {
  return git(root, ['diff', '--cached', '--name-only', '--no-renames', '-z'])
    .split('\0')
    .filter((file) => file !== '');
}
