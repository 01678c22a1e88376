// One racer of the benchmark's task race, on the built library: with the bus open, it says `ready`,
// waits for `go` on stdin, then tries to take each task in its own shuffled order, and prints one JSON
// line: the tasks it took, how many it was refused, and any other failure.
import { createInterface } from 'node:readline';
import { performance } from 'node:perf_hooks';
import { openBus } from '../dist/index.js';
import { TaskRefusedError } from '../dist/core/task-ops.js';
import { shuffledBy } from '../scripts/seeded-random.mjs';

const [taker, idsText, seedText] = process.argv.slice(2);
const ids = shuffledBy(Number(seedText), JSON.parse(idsText));
const bus = openBus(process.env);
// The connection open (and, on PostgreSQL, the pool's first connection made) before the start.
await bus.tasks.get(ids[0]);
const lines = createInterface({ input: process.stdin });
const go = new Promise((resolveGo) => lines.once('line', resolveGo));
process.stdout.write('ready\n');
await go;
lines.close();

const took = [];
const errors = [];
let refused = 0;
const started = performance.now();
for (const id of ids) {
  try {
    const task = await bus.tasks.take(id, taker, false);
    took.push(task.id);
  } catch (error) {
    if (error instanceof TaskRefusedError) refused += 1;
    else errors.push(error instanceof Error ? error.message : String(error));
  }
}
const ms = performance.now() - started;
await bus.close();
process.stdout.write(`${JSON.stringify({ taker, took, refused, errors, ms })}\n`);
