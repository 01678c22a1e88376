// One racer of the benchmark's reservation race, on the built library: with the bus open, it says
// `ready`, waits for `go` on stdin, then asks for each path alone, exclusively, in its own shuffled
// order, and prints one JSON line: what it was granted (path and reservation id), how many were
// refused, and any other failure.
import { createInterface } from 'node:readline';
import { performance } from 'node:perf_hooks';
import { openBus } from '../dist/index.js';
import { ReservationConflictError } from '../dist/core/reservation-ops.js';
import { shuffledBy } from '../scripts/seeded-random.mjs';

const [holder, repo, pathsText, seedText] = process.argv.slice(2);
const paths = shuffledBy(Number(seedText), JSON.parse(pathsText));
const bus = openBus(process.env);
// The connection open (and, on PostgreSQL, the pool's first connection made) before the start.
await bus.reservations.list(repo);
const lines = createInterface({ input: process.stdin });
const go = new Promise((resolveGo) => lines.once('line', resolveGo));
process.stdout.write('ready\n');
await go;
lines.close();

const granted = [];
const errors = [];
let refused = 0;
const started = performance.now();
for (const path of paths) {
  try {
    const [reservation] = await bus.reservations.reserve({ holder, repo, repoRoot: `/${repo}`, paths: [path], ttlMs: 3_600_000, reason: 'race', sessionBound: false });
    granted.push({ path: reservation.path, id: reservation.id });
  } catch (error) {
    if (error instanceof ReservationConflictError) refused += 1;
    else errors.push(error instanceof Error ? error.message : String(error));
  }
}
const ms = performance.now() - started;
await bus.close();
process.stdout.write(`${JSON.stringify({ holder, granted, refused, errors, ms })}\n`);
