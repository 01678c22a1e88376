/**
 * The files of one audit log: the current file (`audit.log`) and those rotation
 * moved aside (`audit.log.1` the newest of them, `.2` older, and so on).
 */
import { existsSync, readdirSync, renameSync } from 'node:fs';
import { basename, dirname } from 'node:path';

export function rotatedPath(path: string, index: number): string {
  return `${path}.${index}`;
}

/** The numbers of the rotated files beside `path`, ascending. */
function rotatedNumbers(path: string): number[] {
  const prefix = `${basename(path)}.`;
  let names: string[];
  try {
    names = readdirSync(dirname(path));
  } catch {
    return [];
  }
  const numbers: number[] = [];
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const rest = name.slice(prefix.length);
    if (/^[1-9]\d{0,8}$/.test(rest)) numbers.push(Number(rest));
  }
  return numbers.sort((a, b) => a - b);
}

/** Every file of the log that exists, oldest first, the current file last. */
export function logFiles(path: string): string[] {
  const files = rotatedNumbers(path).reverse().map((index) => rotatedPath(path, index));
  if (existsSync(path)) files.push(path);
  return files;
}

/** Every file of the log that exists, newest first. */
export function logFilesNewestFirst(path: string): string[] {
  return logFiles(path).reverse();
}

/**
 * Move the current file aside as `.1`, each older one a number up (the oldest first, so no
 * rename lands on a file still to be moved). The caller holds the append lock.
 */
export function rotateFiles(path: string): void {
  for (const index of rotatedNumbers(path).reverse()) renameSync(rotatedPath(path, index), rotatedPath(path, index + 1));
  renameSync(path, rotatedPath(path, 1));
}

/** A file's name as a person reads it in a report: beside the log, its base name is enough. */
export function shownName(file: string, path: string): string {
  return dirname(file) === dirname(path) ? basename(file) : file;
}
