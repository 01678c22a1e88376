/** How reservation commands find their repo and print reservations. */
import { repoName, repoRoot } from '../adapters/identity.js';
import type { ReservationPlace } from '../client/bus-client.js';
import type { ReservationView } from '../core/reservation-ops.js';
import { resolve } from 'node:path';

/** The repo a command's paths are in: `--repo PATH`, else the git work tree it runs in. */
export function placeOf(repoOption: unknown, cwd: string): ReservationPlace {
  const root = repoRoot(typeof repoOption === 'string' && repoOption.trim() !== '' ? resolve(cwd, repoOption.trim()) : cwd);
  return { repo: repoName(root), root };
}

/** One line per reservation: holder, path, mode, until and why. */
export function reservationLines(rows: ReservationView[]): string {
  return rows.map((row) => `${row.holder}  ${row.path}  ${row.mode}  since ${row.since}  until ${row.until}${row.reason ? `  (${row.reason})` : ''}  [${row.repo}]\n`).join('');
}
