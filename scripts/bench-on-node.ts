/**
 * `npm run bench:node -- VERSION [SECTION ...]`: the benchmark on another Node.js, as a user of it
 * would run it. A copy of the working tree is installed with that Node.js (from the npm registry's
 * node-<platform>-<arch> package, the better-sqlite3 addon compiled for it, so both SQLite drivers
 * can be compared in one run), built with it (the code caches are that Node.js's), and benchmarked
 * there. The results land in bench/results-node-<major>.json beside this Node.js's bench/results.json.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { environmentFor, nodeFolder, prepare } from './test-on-node.js';

const ROOT = resolve(new URL('..', import.meta.url).pathname);
const [version, ...sections] = process.argv.slice(2);
if (version === undefined || !/^\d+\.\d+\.\d+$/.test(version)) {
  console.error('usage: npm run bench:node -- VERSION [SECTION ...]   (a Node.js version, such as 24.22.3)');
  process.exit(2);
}
const copy = mkdtempSync(join(tmpdir(), 'agent-bus-bench-node-'));
try {
  await prepare(version, copy, true);
  const env = environmentFor(nodeFolder(version));
  const result = spawnSync('npm', ['run', 'bench', '--', ...sections], { cwd: copy, env, stdio: 'inherit' });
  const target = join(ROOT, 'bench', `results-node-${version.split('.')[0]}.json`);
  try {
    copyFileSync(join(copy, 'bench', 'results.json'), target);
    console.log(`results for Node.js ${version} in ${target}`);
  } catch {
    console.error('agent-bus: the benchmark wrote no results');
  }
  process.exitCode = result.status ?? 1;
} finally {
  rmSync(copy, { recursive: true, force: true });
}
