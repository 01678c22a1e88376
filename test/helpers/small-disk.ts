/** A small tmpfs of its own for a bus, where this machine lets the tests mount one (root, or a capable container). */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ENGINE } from './bus-env.js';

/** A small tmpfs of its own, where this machine lets the tests mount one (root, or a capable container). */
export function smallDisk(): { dir: string; readOnly(): void; unmount(): void } | string {
  const dir = mkdtempSync(join(tmpdir(), 'agent-bus-small-disk-'));
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=2m,mode=0700', 'tmpfs', dir], { encoding: 'utf8' });
  if (mounted.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    return `cannot mount a small tmpfs here (${(mounted.stderr || mounted.error?.message || 'mount failed').trim()})`;
  }
  return {
    dir,
    readOnly: () => assert.equal(spawnSync('mount', ['-o', 'remount,ro', dir]).status, 0, 'remounted read-only'),
    unmount: () => {
      spawnSync('umount', [dir]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const diskProbe = ENGINE === 'sqlite' ? smallDisk() : 'the database is on the PostgreSQL server, not on a disk of this machine';
/** Why the small-disk tests are skipped here, or false when they run. */
export const noSmallDisk = typeof diskProbe === 'string' ? diskProbe : false;
if (typeof diskProbe !== 'string') diskProbe.unmount();

/** A test body with a bus whose folder, database and audit log are on a small disk of its own, unmounted afterwards. */
export function onSmallDisk(work: (env: NodeJS.ProcessEnv, disk: { dir: string; readOnly(): void }) => void | Promise<void>): () => Promise<void> {
  return async () => {
    const disk = smallDisk();
    if (typeof disk === 'string') throw new Error(disk);
    try {
      mkdirSync(join(disk.dir, 'home'));
      const bus = join(disk.dir, 'bus');
      await work({ PATH: process.env.PATH, HOME: join(disk.dir, 'home'), NO_COLOR: '1', AGENT_BUS_HOME: bus, AGENT_BUS_DB: join(bus, 'bus.db'), AGENT_BUS_AUDIT_LOG: join(bus, 'audit.log') }, disk);
    } finally {
      disk.unmount();
    }
  };
}

