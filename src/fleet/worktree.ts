/**
 * A spawned agent's own checkout: a `git worktree` on a new branch `agent/<label>`, in the bus
 * folder's `fleet/worktrees/<repo>/<label>`, so agents working in parallel never edit one checkout.
 * The client's wiring is copied in where the repo does not commit it, so the agent is on the bus
 * there too. Removed again only when nothing in it is uncommitted.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { BusError } from '../model/errors.js';
import { quoted } from '../model/quote.js';

/** The folder every spawned agent's worktree is made under. */
export function worktreesFolder(busFolder: string): string {
  return join(busFolder, 'fleet', 'worktrees');
}

function git(args: string[], cwd: string): { ok: boolean; out: string } {
  try {
    return { ok: true, out: execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }) };
  } catch (error) {
    const failed = error as { stderr?: string; message: string };
    return { ok: false, out: (failed.stderr ?? failed.message).trim() };
  }
}

/** Make the worktree of `label` from `root`'s HEAD; its folder. `configFiles`: the client's wiring, copied in when the checkout lacks it. */
export function addWorktree(busFolder: string, root: string, repo: string, label: string, configFiles: readonly string[]): string {
  if (!git(['rev-parse', '--verify', '--quiet', 'HEAD'], root).ok) {
    throw new BusError(`spawn: --worktree needs a repo with at least one commit, and ${quoted(root)} has none: commit something first`);
  }
  for (const folder of [join(busFolder, 'fleet'), worktreesFolder(busFolder)]) {
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    chmodSync(folder, 0o700);
  }
  const path = join(worktreesFolder(busFolder), repo, label);
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const added = git(['worktree', 'add', '-b', `agent/${label}`, path, 'HEAD'], root);
  if (!added.ok) throw new BusError(`spawn: git could not make the worktree for ${quoted(label)}: ${added.out.split('\n')[0] ?? ''}`);
  for (const file of configFiles) {
    const from = join(root, file);
    const to = join(path, file);
    if (existsSync(from) && !existsSync(to)) {
      mkdirSync(dirname(to), { recursive: true });
      copyFileSync(from, to);
    }
  }
  return path;
}

/** Whether `folder` is a worktree the fleet made. */
export function isFleetWorktree(busFolder: string, folder: string): boolean {
  const inside = relative(worktreesFolder(busFolder), folder);
  return inside !== '' && !inside.startsWith('..') && !inside.startsWith(sep) && existsSync(join(folder, '.git'));
}

/**
 * Remove a fleet worktree with nothing uncommitted in it (its branch, and what was committed there,
 * stay); what is left otherwise, in one line.
 */
export function removeWorktree(folder: string, copied: readonly string[]): { removed: true } | { removed: false; left: string } {
  const status = git(['status', '--porcelain', '--untracked-files=all'], folder);
  if (!status.ok) return { removed: false, left: `git cannot read it: ${status.out.split('\n')[0] ?? ''}` };
  // The wiring spawn copied in is its own, not the agent's work.
  const changed = status.out.split('\n').filter((line) => line.trim() !== '' && !(line.startsWith('?? ') && copied.includes(line.slice(3))));
  if (changed.length > 0) {
    const names = changed.slice(0, 5).map((line) => line.slice(3));
    return { removed: false, left: `${changed.length} uncommitted change${changed.length === 1 ? '' : 's'} (${names.join(', ')}${changed.length > 5 ? ', …' : ''})` };
  }
  const common = git(['rev-parse', '--path-format=absolute', '--git-common-dir'], folder);
  const main = common.ok ? dirname(common.out.trim()) : folder;
  // --force: only for the copied wiring, which git counts as untracked work.
  const removed = git(['worktree', 'remove', '--force', folder], main);
  return removed.ok ? { removed: true } : { removed: false, left: `git could not remove it: ${removed.out.split('\n')[0] ?? ''}` };
}
