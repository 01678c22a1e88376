/**
 * `agent-bus init --clients cline`: the generated plugin in the repo, our server merged into Cline's
 * user MCP settings (the user's other servers and settings kept, an unreadable file left alone), the
 * plugin's subscriptions kept across runs, and the plugin's hooks answering in what it reads.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli, type TempBus, withTempBus } from '../helpers/bus-env.js';
import { agentBusOnPath } from '../helpers/on-path.js';

/** The bus's environment with agent-bus on PATH, as an installed one is: what the committed plugin runs. */
const onPath = (bus: TempBus): NodeJS.ProcessEnv => ({ ...bus.env, PATH: agentBusOnPath(bus.dir).PATH });

function gitRepo(bus: TempBus, name: string): string {
  const path = join(bus.dir, name);
  mkdirSync(path, { recursive: true });
  assert.equal(spawnSync('git', ['init', '-q', path]).status, 0);
  return path;
}

/** Where Cline reads its MCP servers under the bus's HOME (no CLINE_DIR set). */
const settingsPath = (bus: TempBus): string => join(bus.env.HOME as string, '.cline', 'data', 'settings', 'cline_mcp_settings.json');

const init = (bus: TempBus, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}) => runCli(['init', '--clients', 'cline', ...args], { env: { ...onPath(bus), ...env }, cwd });

test("the plugin in the repo, our server merged into Cline's user MCP settings with the user's own kept; re-runs change nothing", withTempBus((bus) => {
  const repo = gitRepo(bus, 'shop');
  const settings = settingsPath(bus);
  mkdirSync(join(settings, '..'), { recursive: true });
  writeFileSync(settings, JSON.stringify({ mcpServers: { mine: { command: 'my-server', disabled: false } }, other: 1 }));
  const first = init(bus, [], repo);
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stdout, /Cline reads MCP servers only from its user settings/);
  assert.deepEqual(JSON.parse(readFileSync(settings, 'utf8')), {
    mcpServers: { mine: { command: 'my-server', disabled: false }, 'agent-bus': { command: 'agent-bus', args: ['serve', '--client', 'cline'] } },
    other: 1,
  });
  const plugin = readFileSync(join(repo, '.cline', 'plugins', 'agent-bus.js'), 'utf8');
  assert.match(plugin, /^\/\/ Managed by `agent-bus init`/);
  assert.match(plugin, /^const CHANNELS = "brain,amygdala";$/m);
  assert.match(plugin, /^const BIN = "agent-bus";$/m);
  assert.ok(!plugin.includes(bus.dir), 'the committed plugin names nothing of this machine');
  assert.match(init(bus, [], repo).stdout, /nothing to do/);
}));

test("CLINE_DIR and CLINE_MCP_SETTINGS_PATH move Cline's MCP settings, and init follows them", withTempBus((bus) => {
  const repo = gitRepo(bus, 'shop');
  const clineDir = join(bus.dir, 'cline-state');
  assert.equal(init(bus, [], repo, { CLINE_DIR: clineDir }).code, 0);
  assert.ok(existsSync(join(clineDir, 'data', 'settings', 'cline_mcp_settings.json')));
  const explicit = join(bus.dir, 'elsewhere', 'mcp.json');
  assert.equal(init(bus, [], repo, { CLINE_MCP_SETTINGS_PATH: explicit }).code, 0);
  assert.deepEqual(JSON.parse(readFileSync(explicit, 'utf8')).mcpServers['agent-bus'].args, ['serve', '--client', 'cline']);
}));

test('an unreadable MCP settings file is left alone, and nothing is written', withTempBus((bus) => {
  const repo = gitRepo(bus, 'shop');
  const settings = settingsPath(bus);
  mkdirSync(join(settings, '..'), { recursive: true });
  writeFileSync(settings, '{ not json');
  const result = init(bus, [], repo);
  assert.match(result.stdout, /cline: .*cline_mcp_settings\.json: it is not valid JSON, left alone/);
  assert.equal(readFileSync(settings, 'utf8'), '{ not json');
  assert.ok(!existsSync(join(repo, '.cline', 'plugins', 'agent-bus.js')));
}));

test('the subscriptions edited in the plugin are kept by a re-run; --remote puts the hub in the plugin and a relay in the settings', withTempBus((bus) => {
  const repo = gitRepo(bus, 'shop');
  assert.equal(init(bus, [], repo).code, 0);
  const pluginPath = join(repo, '.cline', 'plugins', 'agent-bus.js');
  writeFileSync(pluginPath, readFileSync(pluginPath, 'utf8').replace('const CHANNELS = "brain,amygdala";', 'const CHANNELS = "ops";'));
  assert.equal(init(bus, ['--remote', 'http://127.0.0.1:9'], repo).code, 0);
  const plugin = readFileSync(pluginPath, 'utf8');
  assert.match(plugin, /^const CHANNELS = "ops";$/m);
  assert.match(plugin, /^const HUB = "http:\/\/127\.0\.0\.1:9";$/m);
  assert.deepEqual(JSON.parse(readFileSync(settingsPath(bus), 'utf8')).mcpServers['agent-bus'], { command: 'agent-bus', args: ['serve', '--client', 'cline'], env: { AGENT_BUS_URL: 'http://127.0.0.1:9' } });
}));

test("the hooks the plugin runs answer in what it reads: mail as plain text, a reserved file's write as a deny, mail to act on as a block at the stop", withTempBus((bus) => {
  const repo = gitRepo(bus, 'live');
  assert.equal(init(bus, [], repo).code, 0);
  const hook = (subcommand: string, payload: Record<string, unknown>): string => {
    const result = spawnSync('agent-bus', [subcommand, '--client', 'cline'], { env: onPath(bus), cwd: repo, input: JSON.stringify({ cwd: repo, session_id: 'conv-1', ...payload }), encoding: 'utf8' });
    assert.equal(result.status, 0, result.stderr);
    return result.stdout;
  };
  assert.equal(runCli(['send', 'mail for cline', '--to', 'live/cline'], { env: bus.env }).code, 0);
  const stop = JSON.parse(hook('hook-stop', { hook_event_name: 'Stop' })) as { decision: string; reason: string };
  assert.equal(stop.decision, 'block');
  assert.match(stop.reason, /mail for cline/);
  assert.equal(runCli(['reserve', 'src/a.ts', '--name', 'live/claude', '--reason', 'mine'], { env: bus.env, cwd: repo }).code, 0);
  const denied = JSON.parse(hook('hook-pre-tool', { hook_event_name: 'PreToolUse', tool_name: 'editor', tool_input: { path: join(repo, 'src', 'a.ts'), new_text: 'x' } })) as { decision: string; reason: string };
  assert.equal(denied.decision, 'deny');
  assert.match(denied.reason, /src\/a\.ts is reserved by live\/claude/);
  assert.equal(hook('hook-pre-tool', { hook_event_name: 'PreToolUse', tool_name: 'read_files', tool_input: { files: [{ path: join(repo, 'src', 'a.ts') }] } }), '');
}));

test("doctor says what Cline cannot do, and fails where the node Cline runs the plugin with is not on PATH", withTempBus((bus) => {
  const repo = gitRepo(bus, 'shop');
  assert.equal(init(bus, [], repo).code, 0);
  type Report = { checks: Array<{ check: string; level: string; detail: string }> };
  const wiring = (env: NodeJS.ProcessEnv) => (JSON.parse(runCli(['doctor', '--json'], { env }).stdout) as Report).checks.filter((check) => check.check === 'wiring' && check.detail.startsWith('shop/cline'));
  const here = wiring(onPath(bus));
  assert.ok(here.some((check) => check.level === 'ok' && check.detail.includes('server and hooks in place')), JSON.stringify(here));
  const limits = here.find((check) => check.detail.includes('what Cline CLI cannot do'));
  assert.equal(limits?.level, 'ok', JSON.stringify(here));
  assert.match(limits?.detail ?? '', /a stop is held while mail waits only in a headless `cline -y` run/);
  assert.match(limits?.detail ?? '', /no wake/);
  assert.ok(!here.some((check) => check.level === 'fail'), JSON.stringify(here));
  // PATH holding agent-bus alone: no node for Cline's plugin sandbox.
  const bare = wiring({ ...bus.env, PATH: agentBusOnPath(bus.dir, '').folder });
  const missing = bare.find((check) => check.detail.includes('node is not on PATH here'));
  assert.equal(missing?.level, 'fail', JSON.stringify(bare));
}));

test("a clone with the committed plugin and no server in this machine's Cline settings: doctor fails and names the file; init adds it", withTempBus((bus) => {
  const repo = gitRepo(bus, 'shop');
  assert.equal(init(bus, [], repo).code, 0);
  writeFileSync(settingsPath(bus), JSON.stringify({ mcpServers: {} }));
  const report = JSON.parse(runCli(['doctor', '--json'], { env: onPath(bus) }).stdout) as { checks: Array<{ check: string; level: string; detail: string }> };
  const missing = report.checks.find((check) => check.check === 'wiring' && check.detail.startsWith('shop/cline'));
  assert.equal(missing?.level, 'fail', JSON.stringify(report.checks));
  assert.ok(missing?.detail.includes(settingsPath(bus)), missing?.detail);
  assert.equal(init(bus, [], repo).code, 0);
  assert.ok(JSON.parse(readFileSync(settingsPath(bus), 'utf8')).mcpServers['agent-bus']);
}));
