/** The Node.js versions agent-bus says it supports are the ones CI tests, and the install page says so. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../helpers/bus-env.js';

test('engines, the Node.js versions .ci/run tests and docs/install.md name the same major versions', () => {
  const engines = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;
  const supported = engines.split('||').map((range) => Number(/^\s*\^(\d+)\.\d+\.\d+\s*$/.exec(range)?.[1]));
  assert.ok(supported.every(Number.isInteger), `engines ranges are ^major.minor.patch: ${engines}`);
  const ci = readFileSync(join(ROOT, '.ci', 'run'), 'utf8');
  const others = (/^OTHER_NODES="([^"]+)"$/m.exec(ci)?.[1] ?? '').split(' ').filter(Boolean);
  assert.ok(others.length > 0, '.ci/run names the other Node.js versions');
  // The oldest supported line is the build machine's own Node.js (the toolchain's Node 20); the others come from the registry.
  const oldest = Math.min(...supported);
  const tested = [...new Set([oldest, ...others.map((version) => Number(version.split('.')[0]))])].sort((a, b) => a - b);
  assert.deepEqual(tested, [...supported].sort((a, b) => a - b), 'every supported major is tested, and only those');
  assert.ok(!others.some((version) => Number(version.split('.')[0]) === oldest), "the machine's own line is not fetched again");
  assert.ok(supported.includes(Number(/^v(\d+)/.exec(process.version)?.[1])), `this Node.js (${process.version}) is a supported one`);
  for (const version of others) assert.ok(supported.includes(Number(version.split('.')[0])), version);
  const install = readFileSync(join(ROOT, 'docs', 'install.md'), 'utf8');
  const [first, ...rest] = supported;
  assert.ok(install.includes(`Supported and tested: ${first} (`) && rest.every((major) => install.includes(` ${major}`)), 'docs/install.md lists them');
  assert.ok(install.includes(`npm run test:node -- ${others.join(' ')}`), 'docs/install.md shows the command CI runs');
});
