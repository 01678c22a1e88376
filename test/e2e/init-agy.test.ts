/** `agent-bus init --clients agy`: a workspace plugin of our own, the user's .agents/ untouched, hooks that run. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli, type TempBus, withTempBus } from '../helpers/bus-env.js';
import { agentBusOnPath } from '../helpers/on-path.js';

/** The bus's environment with agent-bus on PATH, as an installed one is: what the committed files run. */
const onPath = (bus: TempBus): NodeJS.ProcessEnv => ({ ...bus.env, PATH: agentBusOnPath(bus.dir).PATH });

function repo(bus: TempBus, name: string): string {
  const path = join(bus.dir, name);
  mkdirSync(join(path, '.git'), { recursive: true });
  return path;
}

const init = (bus: TempBus, args: string[], cwd: string) => runCli(['init', '--clients', 'agy', ...args], { env: onPath(bus), cwd });

test('a workspace plugin with the server and flat hook lists; the user\'s .agents files untouched; re-runs identical', withTempBus((bus) => {
  const path = repo(bus, 'tools');
  mkdirSync(join(path, '.agents'));
  writeFileSync(join(path, '.agents', 'hooks.json'), '{"mine": true}');
  writeFileSync(join(path, '.agents', 'mcp_config.json'), '// my own config, with a comment\n{}');
  assert.equal(init(bus, [], path).code, 0);
  const plugin = join(path, '.agents', 'plugins', 'agent-bus');
  assert.deepEqual(readdirSync(plugin).sort(), ['hooks.json', 'mcp_config.json', 'plugin.json']);
  assert.deepEqual(JSON.parse(readFileSync(join(plugin, 'plugin.json'), 'utf8')), { name: 'agent-bus' });
  assert.deepEqual(JSON.parse(readFileSync(join(plugin, 'mcp_config.json'), 'utf8')), {
    mcpServers: { 'agent-bus': { command: 'agent-bus', args: ['serve', '--client', 'agy'] } },
  });
  const hooks = JSON.parse(readFileSync(join(plugin, 'hooks.json'), 'utf8')) as Record<string, Record<string, Array<{ type: string; command: string }>>>;
  assert.deepEqual(hooks['agent-bus']?.PreInvocation, [{ type: 'command', command: 'AGENT_BUS_DEFAULT_CHANNELS=brain,amygdala agent-bus hook-user-prompt --client agy || true' }]);
  assert.deepEqual(hooks['agent-bus']?.Stop, [{ type: 'command', command: 'agent-bus hook-stop --client agy || true' }]);
  assert.equal(readFileSync(join(path, '.agents', 'hooks.json'), 'utf8'), '{"mine": true}');
  assert.equal(readFileSync(join(path, '.agents', 'mcp_config.json'), 'utf8'), '// my own config, with a comment\n{}');
  assert.match(init(bus, [], path).stdout, /nothing to do/);
}));

test('the agy hook commands run as written and answer in its JSON', withTempBus((bus) => {
  const path = repo(bus, 'live');
  assert.equal(init(bus, [], path).code, 0);
  assert.equal(runCli(['send', 'mail for agy', '--to', 'live/agy'], { env: bus.env }).code, 0);
  const hooks = JSON.parse(readFileSync(join(path, '.agents', 'plugins', 'agent-bus', 'hooks.json'), 'utf8')) as Record<string, Record<string, Array<{ command: string }>>>;
  const run = (command: string): string => {
    const result = spawnSync('sh', ['-c', command], { env: onPath(bus), cwd: bus.dir, input: JSON.stringify({ workspacePaths: [path], conversationId: 'c-1' }), encoding: 'utf8' });
    assert.equal(result.status, 0, result.stderr);
    return result.stdout;
  };
  const stop = JSON.parse(run(hooks['agent-bus']?.Stop?.[0]?.command ?? '')) as { decision: string; reason: string };
  assert.equal(stop.decision, 'continue');
  assert.match(stop.reason, /mail for agy/);
  assert.deepEqual(JSON.parse(run(hooks['agent-bus']?.PreInvocation?.[0]?.command ?? '')), { injectSteps: [] });
}));

test('subscriptions an older init wrote as AGENT_BUS_CHANNELS are kept and renamed; a launch value then wins over them', withTempBus((bus) => {
  const path = repo(bus, 'older');
  assert.equal(init(bus, [], path).code, 0);
  const hooksPath = join(path, '.agents', 'plugins', 'agent-bus', 'hooks.json');
  writeFileSync(hooksPath, readFileSync(hooksPath, 'utf8').replace('AGENT_BUS_DEFAULT_CHANNELS=brain,amygdala', "AGENT_BUS_CHANNELS='deploy,brain'"));
  assert.equal(init(bus, [], path).code, 0);
  const hooks = JSON.parse(readFileSync(hooksPath, 'utf8')) as Record<string, Record<string, Array<{ command: string }>>>;
  const command = hooks['agent-bus']?.PreInvocation?.[0]?.command ?? '';
  assert.equal(command, 'AGENT_BUS_DEFAULT_CHANNELS=deploy,brain agent-bus hook-user-prompt --client agy || true');
  // The command as agy runs it: a critical notice on ops reaches only a session launched with ops.
  assert.equal(runCli(['channel', 'publish', 'ops', 'OPS-ONLY', '-s', 'critical'], { env: bus.env }).code, 0);
  const shown = (launch: NodeJS.ProcessEnv): string => {
    const result = spawnSync('sh', ['-c', command], { env: { ...onPath(bus), ...launch }, cwd: path, input: JSON.stringify({ workspacePaths: [path], conversationId: 'c-1' }), encoding: 'utf8' });
    assert.equal(result.status, 0, result.stderr);
    return result.stdout;
  };
  assert.doesNotMatch(shown({}), /OPS-ONLY/, "the repo's default does not subscribe to ops");
  assert.match(shown({ AGENT_BUS_CHANNELS: 'ops' }), /OPS-ONLY/, 'the launch value wins');
}));
