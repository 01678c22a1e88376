/** The one-minute soak CI runs: `npm run soak -- --minutes 1`'s program, its figures checked. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../helpers/bus-env.js';
import { figure } from './report.js';

const SKIP = process.env.AGENT_BUS_TEST_SOAK === '0' ? 'AGENT_BUS_TEST_SOAK=0 (the other Node.js versions: it runs once, on this machine\'s)' : false;

test('soak: a minute of mixed load with random kills and restarts loses nothing, and the store and log check out', { timeout: 240_000, skip: SKIP }, () => {
  const result = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'scripts', 'soak.ts'), '--minutes', '1', '--json'], { cwd: ROOT, encoding: 'utf8', timeout: 230_000, env: { PATH: process.env.PATH, HOME: process.env.HOME } });
  assert.equal(result.status, 0, `${result.stdout}${result.stderr}`);
  const figures = JSON.parse(result.stdout.trim().split('\n').at(-1) ?? '{}') as Record<string, number | string>;
  figure('soak', figures);
  assert.equal(figures.lost, 0);
  assert.equal(figures.worker_crashes, 0);
  assert.equal(figures.hook_failures, 0);
  assert.equal(figures.integrity, 'ok');
  assert.equal(figures.verify, 'ok');
  assert.ok(Number(figures.kills) >= 20, `${figures.kills} kills`);
  assert.ok(Number(figures.acknowledged_sends) > 1000, `${figures.acknowledged_sends} sends`);
});
