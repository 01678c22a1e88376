/** How reservation commands find their repo and print reservations. */
import { gitRoot, repoName, repoRoot } from '../adapters/identity.js';
import { quoted } from '../model/quote.js';
import { BusError } from '../model/errors.js';
import { untilText, when } from '../model/when.js';
import type { ReservationPlace } from '../client/bus-client.js';
import type { ReservationView } from '../core/reservation-ops.js';
import { resolve } from 'node:path';

/**
 * The repo a command's paths are in: `--repo PATH`, else the git work tree it runs in. Outside any
 * work tree, with no --repo, there is no repo to hold paths of: a failure (as init's and git's),
 * never a hold on a folder that no agent works in.
 */
export function placeOf(command: string, repoOption: unknown, cwd: string): ReservationPlace {
  const given = typeof repoOption === 'string' && repoOption.trim() !== '' ? resolve(cwd, repoOption.trim()) : null;
  const root = given === null ? gitRoot(cwd) : repoRoot(given);
  if (root === null) throw new BusError(`${command}: ${quoted(cwd)} is in no git repo: run it inside the repo, or give --repo PATH`);
  return { repo: repoName(root), root };
}

/** One line per reservation: holder, path, mode, since, until and why. */
export function reservationLines(rows: ReservationView[], now = Date.now()): string {
  return rows
    .map((row) => `${row.holder}  ${row.path}  ${row.mode}  since ${when(row.since, now)}, ${untilText(row.until, now)}${row.reason ? `  (${row.reason})` : ''}  [${row.repo}]\n`)
    .join('');
}
