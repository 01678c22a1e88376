/**
 * `agent-bus init --clients opencode` by the opencode installed (`opencode --version`, here a stand-in
 * named by AGENT_BUS_OPENCODE_BIN): opencode 2's shape (`mcp.servers`, out of Code Mode) or 1.x's
 * (`mcp.agent-bus`), switched by a run after an upgrade or a downgrade with the rest of the file kept;
 * and `doctor`, which fails a repo wired for the other opencode, the state in which it does nothing.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parse } from 'jsonc-parser';
import { runCli, type TempBus, withTempBus } from '../helpers/bus-env.js';
import { agentBusOnPath } from '../helpers/on-path.js';
import { PLUGIN_MARKER } from '../../src/clients/opencode/plugin.js';

/** An `opencode` that answers `--version` as the real ones do (2.x: `opencode v2.1.2`; 1.x: `1.18.33`). */
function standIn(bus: TempBus, version: string): string {
  const path = join(bus.dir, `opencode-${version}`);
  writeFileSync(path, `#!/bin/sh\necho "${version.startsWith('2.') ? 'opencode v' : ''}${version}"\n`);
  chmodSync(path, 0o755);
  return path;
}

const SEED = `{
  // the team's own settings
  "theme": "dark",
  "mcp": {
    "docs": { "type": "local", "command": ["docs-server"] }
  }
}
`;

function setUp(bus: TempBus): { repo: string; env: (version: string) => NodeJS.ProcessEnv } {
  const repo = join(bus.dir, 'shop');
  mkdirSync(join(repo, '.git'), { recursive: true });
  mkdirSync(join(repo, '.opencode'));
  writeFileSync(join(repo, '.opencode', 'opencode.json'), SEED);
  const PATH = agentBusOnPath(bus.dir).PATH;
  return { repo, env: (version) => ({ ...bus.env, PATH, AGENT_BUS_OPENCODE_BIN: standIn(bus, version) }) };
}

function init(repo: string, env: NodeJS.ProcessEnv, ...extra: string[]): string {
  const result = runCli(['init', '--clients', 'opencode', ...extra], { env, cwd: repo });
  assert.equal(result.code, 0, result.stderr);
  return result.stdout;
}

type Config = { theme?: string; mcp: Record<string, unknown> & { servers?: Record<string, unknown> } };

function config(repo: string): { text: string; value: Config } {
  const text = readFileSync(join(repo, '.opencode', 'opencode.json'), 'utf8');
  return { text, value: parse(text) as Config };
}

test("init writes opencode 2's shape for opencode 2 and 1.x's for 1.x, and a run after an upgrade or a downgrade moves it, the rest of the file kept", withTempBus((bus) => {
  const { repo, env } = setUp(bus);
  init(repo, env('1.18.33'));
  let now = config(repo);
  assert.deepEqual(now.value.mcp['agent-bus'], { type: 'local', command: ['agent-bus', 'serve', '--client', 'opencode'], enabled: true });
  assert.equal(now.value.mcp.servers, undefined, "opencode 1.x would take a `servers` key for a server's name");

  init(repo, env('2.1.2'));
  now = config(repo);
  assert.deepEqual(now.value.mcp.servers, { 'agent-bus': { type: 'local', command: ['agent-bus', 'serve', '--client', 'opencode'], codemode: false } });
  assert.equal(now.value.mcp['agent-bus'], undefined, "ours in 1.x's place is gone: opencode 2 would start it as a second server, in Code Mode");
  assert.deepEqual(now.value.mcp.docs, { type: 'local', command: ['docs-server'] }, "the team's own server is left alone");
  assert.equal(now.value.theme, 'dark');
  assert.match(now.text, /\/\/ the team's own settings/, 'comments stay');
  // One plugin for both: opencode 2 loads its default definition, 1.x its server.
  const plugin = readFileSync(join(repo, '.opencode', 'plugins', 'agent-bus.js'), 'utf8');
  assert.ok(plugin.startsWith(PLUGIN_MARKER));
  assert.match(plugin, /^export default \{ id: 'agent-bus', setup, server \};$/m);
  assert.doesNotMatch(plugin, /^export const /m, 'no second export opencode 1.x would load as another plugin');
  // Unchanged on a second run.
  assert.match(init(repo, env('2.1.2')), /unchanged +\.opencode\/opencode\.json/);

  // A server of the user's own in opencode 2's place stays there on a downgrade; only ours moves.
  const withTheirs = config(repo).text.replace('"servers": {', '"servers": {\n      "search": { "type": "local", "command": ["search-server"] },');
  writeFileSync(join(repo, '.opencode', 'opencode.json'), withTheirs);
  init(repo, env('1.18.33'));
  now = config(repo);
  assert.deepEqual(now.value.mcp.servers, { search: { type: 'local', command: ['search-server'] } });
  assert.deepEqual(now.value.mcp['agent-bus'], { type: 'local', command: ['agent-bus', 'serve', '--client', 'opencode'], enabled: true });
  // Without the user's, the emptied `servers` goes too.
  writeFileSync(join(repo, '.opencode', 'opencode.json'), SEED);
  init(repo, env('2.1.2'));
  init(repo, env('1.18.33'));
  assert.equal(config(repo).value.mcp.servers, undefined);
}));

test("init over a hub for opencode 2: the hub's /mcp in mcp.servers, out of Code Mode, no token in the file", withTempBus((bus) => {
  const { repo, env } = setUp(bus);
  init(repo, { ...env('2.1.2'), AGENT_BUS_TOKEN: 'secret-token' }, '--remote', 'https://hub.example:7777');
  const { value, text } = config(repo);
  assert.deepEqual(value.mcp.servers?.['agent-bus'], {
    type: 'remote',
    url: 'https://hub.example:7777/mcp',
    oauth: false,
    headers: { Authorization: 'Bearer {env:AGENT_BUS_TOKEN}' },
    codemode: false,
  });
  assert.doesNotMatch(text, /secret-token/);
}));

test("init that cannot tell opencode's version writes 1.x's shape and says why", withTempBus((bus) => {
  const { repo, env } = setUp(bus);
  const out = init(repo, { ...env('1.18.33'), AGENT_BUS_OPENCODE_BIN: join(bus.dir, 'no-opencode-here') });
  assert.match(out, /cannot tell the opencode version .*: wrote opencode 1\.x's shape; run init again once opencode is on PATH/);
  assert.ok(config(repo).value.mcp['agent-bus']);
}));

test('doctor fails a repo wired for the other opencode, saying what silently does not happen, and init puts it right', withTempBus((bus) => {
  const { repo, env } = setUp(bus);
  init(repo, env('1.18.33'));
  const doctor = (version: string): { code: number | null; stdout: string } => runCli(['doctor'], { env: env(version), cwd: repo });
  assert.match(doctor('1.18.33').stdout, /ok +wiring: shop\/opencode \(opencode in .*\): server and hooks in place/);

  // opencode upgraded, the repo not re-wired: its server starts, and the model sees none of its tools.
  let after = doctor('2.1.2');
  assert.notEqual(after.code, 0);
  assert.match(
    after.stdout,
    /FAIL +wiring: shop\/opencode \(opencode in .*\): wired for opencode 1\.x, and opencode 2\.1\.2 is installed here \(.*opencode-2\.1\.2\): its server is in opencode 1\.x's place \(mcp\.agent-bus\), where opencode 2's Code Mode hides the bus's tools from the model behind `execute`\n +fix: agent-bus init --clients opencode .*shop/,
  );

  // A plugin an older init wrote (a 1.x plugin function) is not loaded by opencode 2.
  const pluginPath = join(repo, '.opencode', 'plugins', 'agent-bus.js');
  init(repo, env('2.1.2'));
  assert.match(doctor('2.1.2').stdout, /ok +wiring: shop\/opencode /);
  const current = readFileSync(pluginPath, 'utf8');
  writeFileSync(pluginPath, `${PLUGIN_MARKER}\nexport const AgentBus = async () => ({});\n`);
  after = doctor('2.1.2');
  assert.match(after.stdout, /FAIL +wiring: shop\/opencode .*its plugin is an opencode 1\.x plugin, which opencode 2 does not load: no mail shown, no reservation enforced, no stop held/);
  writeFileSync(pluginPath, current);

  // Downgraded with 2.x's wiring: opencode 1.x finds no server.
  assert.match(doctor('1.18.33').stdout, /FAIL +wiring: shop\/opencode .*wired for opencode 2, and opencode 1\.18\.33 is installed here .*: its server is in opencode 2's place \(mcp\.servers\), where opencode 1\.x finds no server/);
}));

test('doctor fails a hub-wired repo for the other opencode too, and says to wire it for that hub again', withTempBus((bus) => {
  const { repo, env } = setUp(bus);
  init(repo, { ...env('1.18.33'), AGENT_BUS_TOKEN: 'secret-token' }, '--remote', 'https://hub.example:7777');
  const after = runCli(['doctor'], { env: env('2.1.2'), cwd: repo });
  assert.match(after.stdout, /FAIL +wiring: opencode in .*shop: wired for opencode 1\.x.*where opencode 2's Code Mode hides the bus's tools .* \(init again with --remote https:\/\/hub\.example:7777\)\n +fix: agent-bus init --clients opencode .*shop/);
}));
