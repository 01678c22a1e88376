/** A copy of the working tree as a clone of it would hold it: tracked files and untracked ones git does not ignore. */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';

export function copyWorkingTree(root: string, to: string): void {
  const listed = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: root, encoding: 'utf8' });
  if (listed.status !== 0) throw new Error(`git ls-files in ${root} failed: ${listed.stderr}`);
  for (const file of listed.stdout.split('\0').filter((entry) => entry !== '')) {
    if (!existsSync(join(root, file))) continue; // deleted in the working tree
    mkdirSync(dirname(join(to, file)), { recursive: true });
    copyFileSync(join(root, file), join(to, file));
  }
}
