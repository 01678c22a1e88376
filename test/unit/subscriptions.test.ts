/** The subscription layers: which variable wins, and which layer a value came from. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseSubscriptions, subscriptionSource, type SettingsFileLayer } from '../../src/core/subscriptions.js';

const files = (local: Record<string, string>, repo: Record<string, string>, user: Record<string, string>): SettingsFileLayer[] => [
  { layer: 'repo-local', where: 'local.json', env: local },
  { layer: 'repo', where: 'repo.json', env: repo },
  { layer: 'user', where: 'user.json', env: user },
];

test('precedence: AGENT_BUS_CHANNELS, AGENTIHOOKS_BASE_CHANNELS, AGENT_BUS_DEFAULT_CHANNELS, then the user default', () => {
  const dotEnv = () => ({ AGENT_BUS_DEFAULT_CHANNELS: 'user' });
  assert.deepEqual(parseSubscriptions({ AGENT_BUS_CHANNELS: 'a', AGENTIHOOKS_BASE_CHANNELS: 'b', AGENT_BUS_DEFAULT_CHANNELS: 'c' }, dotEnv).channels, ['a']);
  assert.deepEqual(parseSubscriptions({ AGENTIHOOKS_BASE_CHANNELS: 'b', AGENT_BUS_DEFAULT_CHANNELS: 'c' }, dotEnv).channels, ['b']);
  assert.deepEqual(parseSubscriptions({ AGENT_BUS_DEFAULT_CHANNELS: 'c' }, dotEnv).channels, ['c']);
  assert.deepEqual(parseSubscriptions({}, dotEnv).channels, ['user']);
  assert.deepEqual(parseSubscriptions({}).channels, []);
  let read = 0;
  parseSubscriptions({ AGENT_BUS_DEFAULT_CHANNELS: 'c' }, () => {
    read++;
    return {};
  });
  assert.equal(read, 0, 'the .env file is read only when nothing above it says');
});

test('a value a settings file holds came from the highest such file; a launch value no file holds came from the launch', () => {
  const layered = files({ AGENT_BUS_DEFAULT_CHANNELS: 'l' }, { AGENT_BUS_DEFAULT_CHANNELS: 'r' }, { AGENT_BUS_DEFAULT_CHANNELS: 'u' });
  assert.deepEqual(pick(subscriptionSource({ AGENT_BUS_DEFAULT_CHANNELS: 'l' }, layered, {}, '.env')), ['repo-local', 'local.json', ['l']]);
  assert.deepEqual(pick(subscriptionSource({ AGENT_BUS_DEFAULT_CHANNELS: 'r' }, layered, {}, '.env')), ['repo', 'repo.json', ['r']]);
  assert.deepEqual(pick(subscriptionSource({ AGENT_BUS_CHANNELS: 'x', AGENT_BUS_DEFAULT_CHANNELS: 'l' }, layered, {}, '.env')), ['launch', 'the launch environment', ['x']]);
  assert.deepEqual(pick(subscriptionSource({ AGENT_BUS_DEFAULT_CHANNELS: 'wired' }, [], {}, '.env')), ['repo', "the repo's wiring", ['wired']]);
  assert.deepEqual(pick(subscriptionSource({}, [], { AGENT_BUS_DEFAULT_CHANNELS: 'u' }, '/bus/.env')), ['user', '/bus/.env', ['u']]);
  assert.deepEqual(pick(subscriptionSource({}, [], {}, '.env')), ['none', 'nothing sets them', []]);
  // Not given the settings: read as Claude Code would merge the files.
  assert.deepEqual(pick(subscriptionSource({}, files({}, { AGENT_BUS_DEFAULT_CHANNELS: 'r' }, { AGENT_BUS_DEFAULT_CHANNELS: 'u' }), {}, '.env')), ['repo', 'repo.json', ['r']]);
});

test('a launch variable written into a settings file is warned about: it masks every launch value', () => {
  const source = subscriptionSource({ AGENT_BUS_CHANNELS: 'ops' }, files({ AGENT_BUS_CHANNELS: 'ops' }, {}, { AGENTIHOOKS_BASE_CHANNELS: 'brain' }), {}, '.env');
  assert.equal(source.layer, 'repo-local');
  assert.deepEqual(source.warnings, [
    'local.json sets AGENT_BUS_CHANNELS in its env, which Claude Code applies over the launch environment, so no launch value can win; name it AGENT_BUS_DEFAULT_CHANNELS there',
    'user.json sets AGENTIHOOKS_BASE_CHANNELS in its env, which Claude Code applies over the launch environment, so no launch value can win; name it AGENT_BUS_DEFAULT_CHANNELS there',
  ]);
});

function pick(source: ReturnType<typeof subscriptionSource>): unknown[] {
  return [source.layer, source.where, source.subscriptions.channels];
}
