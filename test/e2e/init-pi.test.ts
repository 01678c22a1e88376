/**
 * `agent-bus init --clients pi`: the extension in `.pi/extensions/`, refreshed by a re-run with its
 * subscriptions kept; and doctor, which finds it present and current, stale, or missing.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli, tempBus, type TempBus } from '../helpers/bus-env.js';
import { agentBusOnPath } from '../helpers/on-path.js';

interface Finding {
  check: string;
  level: 'ok' | 'warn' | 'fail';
  detail: string;
  fix?: string;
}

/** A bus with agent-bus on PATH and a repo `shop` wired for Pi by the real init. */
function wired(): { bus: TempBus; repo: string; extension: string } {
  const bus = tempBus();
  bus.env.PATH = agentBusOnPath(bus.dir).PATH;
  const repo = join(bus.dir, 'shop');
  mkdirSync(join(repo, '.git'), { recursive: true });
  const init = runCli(['init', '--clients', 'pi'], { env: bus.env, cwd: repo });
  assert.equal(init.code, 0, init.stderr);
  assert.match(init.stdout, /^On the bus: shop\/pi /m);
  return { bus, repo, extension: join(repo, '.pi', 'extensions', 'agent-bus.ts') };
}

function piWiring(bus: TempBus): Finding {
  const result = runCli(['doctor', '--json'], { env: bus.env });
  const finding = (JSON.parse(result.stdout) as { checks: Finding[] }).checks.find((entry) => entry.check === 'wiring' && entry.detail.startsWith('shop/pi '));
  assert.ok(finding, result.stdout);
  return finding;
}

test('init --clients pi writes the extension, which names no agent and nothing of this machine; a re-run refreshes it and keeps its edited CHANNELS', () => {
  const { bus, repo, extension } = wired();
  try {
    const written = readFileSync(extension, 'utf8');
    assert.match(written, /^\/\/ Managed by `agent-bus init`/);
    assert.match(written, /^const CHANNELS = "brain,amygdala";$/m);
    assert.match(written, /^const BIN = "agent-bus";$/m);
    assert.match(written, /^const HUB = null;$/m);
    assert.ok(!written.includes(bus.dir), 'no path of this machine');
    assert.ok(!written.includes('AGENT_BUS_URL'), 'no hub');
    writeFileSync(extension, written.replace('const CHANNELS = "brain,amygdala";', 'const CHANNELS = "ops";').replace('export default', '// an edit\nexport default'));
    const again = runCli(['init', '--clients', 'pi'], { env: bus.env, cwd: repo });
    assert.equal(again.code, 0, again.stderr);
    const refreshed = readFileSync(extension, 'utf8');
    assert.equal(refreshed, written.replace('const CHANNELS = "brain,amygdala";', 'const CHANNELS = "ops";'), 'regenerated, with the edited subscriptions kept');
  } finally {
    bus.cleanup();
  }
});

test('init --clients pi leaves a hand-written extension of the same name alone, unless --force', () => {
  const { bus, repo, extension } = wired();
  try {
    writeFileSync(extension, 'export default function mine() {}\n');
    runCli(['init', '--clients', 'pi'], { env: bus.env, cwd: repo });
    assert.equal(readFileSync(extension, 'utf8'), 'export default function mine() {}\n');
    const forced = runCli(['init', '--clients', 'pi', '--force'], { env: bus.env, cwd: repo });
    assert.equal(forced.code, 0, forced.stderr);
    assert.match(readFileSync(extension, 'utf8'), /^\/\/ Managed by `agent-bus init`/);
  } finally {
    bus.cleanup();
  }
});

test('init --clients pi --remote names the hub in the extension, never the token', () => {
  const bus = tempBus();
  try {
    bus.env.PATH = agentBusOnPath(bus.dir).PATH;
    const repo = join(bus.dir, 'shop');
    mkdirSync(join(repo, '.git'), { recursive: true });
    const init = runCli(['init', '--clients', 'pi', '--remote', 'http://127.0.0.1:9'], { env: { ...bus.env, AGENT_BUS_TOKEN: 'secret-token-value' }, cwd: repo });
    assert.equal(init.code, 0, init.stderr);
    const written = readFileSync(join(repo, '.pi', 'extensions', 'agent-bus.ts'), 'utf8');
    assert.match(written, /^const HUB = "http:\/\/127\.0\.0\.1:9";$/m);
    assert.match(written, /AGENT_BUS_URL/);
    assert.ok(!written.includes('secret-token-value'));
  } finally {
    bus.cleanup();
  }
});

test('doctor: the Pi extension present and current passes; a stale one, or none, fails with init as the fix', () => {
  const { bus, repo, extension } = wired();
  try {
    const current = piWiring(bus);
    assert.equal(current.level, 'ok', current.detail);
    assert.match(current.detail, /: its extension in place \(hooks answered by its server, no process\)$/);
    const written = readFileSync(extension, 'utf8');
    writeFileSync(extension, written.replace("const RUNTIME = ", "const RUNTIME_OLD = ").replace('...RUNTIME)', '...RUNTIME_OLD)'));
    const stale = piWiring(bus);
    assert.equal(stale.level, 'fail');
    assert.match(stale.detail, /differs from what init writes/);
    assert.equal(stale.fix, `agent-bus init --clients pi ${repo}`);
    rmSync(extension);
    const missing = piWiring(bus);
    assert.equal(missing.level, 'fail');
    assert.match(missing.detail, /\.pi\/extensions\/agent-bus\.ts/);
  } finally {
    bus.cleanup();
  }
});
