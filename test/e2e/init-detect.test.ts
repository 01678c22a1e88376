/**
 * `agent-bus init` with no --clients wires the clients whose command is on PATH, and says so; Claude
 * Code where none is. The clients here are stand-ins on PATH that answer `--version` as each does.
 */
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { test } from 'node:test';
import { json, runCli, type TempBus, withTempBus } from '../helpers/bus-env.js';
import { agentBusOnPath } from '../helpers/on-path.js';

function repo(bus: TempBus, name: string): string {
  const path = join(bus.dir, name);
  mkdirSync(join(path, '.git'), { recursive: true });
  return path;
}

/** PATH with agent-bus on it and, in a folder of their own, stand-ins named `commands`. */
function pathWith(bus: TempBus, commands: Record<string, string>): string {
  const folder = join(bus.dir, 'client-bin');
  mkdirSync(folder, { recursive: true });
  for (const [command, version] of Object.entries(commands)) {
    writeFileSync(join(folder, command), `#!/bin/sh\necho '${version}'\n`);
    chmodSync(join(folder, command), 0o755);
  }
  return [folder, agentBusOnPath(bus.dir).PATH].join(delimiter);
}

test('with no --clients, init wires the clients found on PATH and says which; --scan plans the same', withTempBus((bus) => {
  const shop = repo(bus, 'shop');
  const env = { ...bus.env, PATH: pathWith(bus, { codex: 'codex-cli 0.171.0', gemini: '0.61.0' }) };
  const wired = runCli(['init'], { env, cwd: shop });
  assert.equal(wired.code, 0, wired.stderr);
  assert.match(wired.stdout, / clients=codex,gemini \(found on PATH\) · /);
  assert.ok(existsSync(join(shop, '.codex', 'config.toml')) && existsSync(join(shop, '.gemini', 'settings.json')), wired.stdout);
  assert.ok(!existsSync(join(shop, '.mcp.json')), 'Claude Code, not on PATH, is not wired');
  const roster = json<Array<{ name: string }>>(runCli(['agents', '--json'], { env })).map((row) => row.name);
  assert.deepEqual(roster.filter((name) => name.startsWith('shop/')).sort(), ['shop/codex', 'shop/gemini']);

  const web = repo(bus, 'web');
  const plan = runCli(['init', '--scan', bus.dir], { env, cwd: bus.dir });
  assert.equal(plan.code, 0, plan.stderr);
  assert.match(plan.stdout, /^\s+write\s+web\s.*\[codex, gemini\]$/m);
  assert.match(plan.stdout, / clients=codex,gemini \(found on PATH\) · /);
  assert.ok(!existsSync(join(web, '.codex')), 'a plan writes nothing');
}));

test('with no client on PATH, init wires Claude Code and says none was found; --clients chooses whatever is on PATH', withTempBus((bus) => {
  const shop = repo(bus, 'shop');
  const env = { ...bus.env, PATH: pathWith(bus, {}) };
  const wired = runCli(['init'], { env, cwd: shop });
  assert.equal(wired.code, 0, wired.stderr);
  assert.match(wired.stdout, / clients=claude \(no client found on PATH\) · /);
  assert.ok(existsSync(join(shop, '.mcp.json')));
  const named = runCli(['init', '--clients', 'gemini'], { env: { ...env, PATH: pathWith(bus, { codex: 'codex-cli 0.171.0' }) }, cwd: shop });
  assert.equal(named.code, 0, named.stderr);
  assert.match(named.stdout, / clients=gemini · /);
  assert.ok(existsSync(join(shop, '.gemini', 'settings.json')) && !existsSync(join(shop, '.codex')), named.stdout);
}));
