/**
 * A spawned agent's output: one private file per spawn in the bus folder's `fleet/logs/`, written by
 * its client and by its supervisor's own lines (started, exited), read back by `logs`.
 */
import { chmodSync, closeSync, mkdirSync, openSync, readdirSync, readSync, rmSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { shortId } from '../model/short-id.js';

/** The folder of the fleet's logs, private to the user. */
export function logFolder(busFolder: string): string {
  return join(busFolder, 'fleet', 'logs');
}

/** The log of one spawn: its name made a file name, and its id's short form (a name may be spawned again after a prune). */
export function logPathFor(busFolder: string, name: string, spawnId: string): string {
  return join(logFolder(busFolder), `${name.replace(/[^a-z0-9-]+/g, '_')}.${shortId(spawnId)}.log`);
}

/** Create the log (0600, in a 0700 folder) and open it for appending: the descriptor the client writes to. */
export function openLog(path: string, busFolder: string): number {
  for (const folder of [join(busFolder, 'fleet'), logFolder(busFolder)]) {
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    chmodSync(folder, 0o700);
  }
  const fd = openSync(path, 'a', 0o600);
  chmodSync(path, 0o600);
  return fd;
}

/** One line of the supervisor's own in the log, marked as the bus's. */
export function logNote(path: string, busFolder: string, text: string): void {
  const fd = openLog(path, busFolder);
  try {
    writeSync(fd, `[agent-bus] ${text}\n`);
  } finally {
    closeSync(fd);
  }
}

/** The first match of `pattern`'s group in a log's first megabyte (a client names its conversation early), or null. */
export function firstMatch(path: string, pattern: RegExp, maxBytes = 1 << 20): string | null {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return null;
  }
  try {
    const buffer = Buffer.alloc(maxBytes);
    const read = readSync(fd, buffer, 0, maxBytes, 0);
    return pattern.exec(buffer.subarray(0, read).toString('utf8'))?.[1] ?? null;
  } finally {
    closeSync(fd);
  }
}

/** The last `count` lines of a log (fewer when it has fewer); none when it does not exist. */
export function lastLines(path: string, count: number, maxBytes = 1 << 20): string[] {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return [];
  }
  try {
    const size = statSync(path).size;
    const length = Math.min(size, maxBytes);
    const buffer = Buffer.alloc(length);
    const read = readSync(fd, buffer, 0, length, size - length);
    const lines = buffer.subarray(0, read).toString('utf8').split('\n');
    if (lines.at(-1) === '') lines.pop();
    // A tail cut from the middle of a file drops its first, partial line.
    if (length < size) lines.shift();
    return count <= 0 ? [] : lines.slice(-count);
  } finally {
    closeSync(fd);
  }
}

/**
 * Remove the logs (and exit files) in this bus folder of spawns no longer on record (pruned): the
 * number of agents whose files went. `kept`: the log paths of every spawn the store still has.
 */
export function removeLogsNotIn(busFolder: string, kept: Iterable<string>): number {
  const folder = logFolder(busFolder);
  const keep = new Set([...kept].map((path) => path.replace(/\.log$/, '')));
  let names: string[];
  try {
    names = readdirSync(folder);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    const match = /^(.*)\.(log|exit)$/.exec(name);
    if (match === null || keep.has(join(folder, match[1] as string))) continue;
    rmSync(join(folder, name), { force: true });
    if (match[2] === 'log') removed++;
  }
  return removed;
}
