/**
 * One language for time: every human-readable listing shows a moment relative to now within a day
 * ("just now", "3 min ago", "in 1 h") and as the local date and time beyond; a raw ISO timestamp
 * appears only in --json.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { agentEnv, register } from '../helpers/agents.js';
import { runCli, withTempBus, type TempBus } from '../helpers/bus-env.js';

const ISO = /\d{4}-\d\d-\d\dT\d\d:\d\d/;

/** A bus with something in every listing: agents, mail, a thread, tasks, reservations, notices, a token, an integration. */
function busWithEverything(bus: TempBus): { messageId: string; threadId: string; taskId: string; repo: string } {
  const repo = join(bus.dir, 'shop');
  mkdirSync(join(repo, '.git'), { recursive: true });
  const claude = agentEnv(bus, 'shop/claude', repo);
  register(claude);
  register(agentEnv(bus, 'shop/codex', repo));
  const sent = JSON.parse(run(bus, ['send', 'the login form needs review', '--to', 'shop/codex', '--json'])) as { message_ids: string[]; thread_id: string };
  const taskId = run(bus, ['task', 'add', 'fix the login test', '--to', 'shop/codex'], claude).trim();
  run(bus, ['task', 'take', taskId], agentEnv(bus, 'shop/codex', repo));
  run(bus, ['reserve', 'src/auth.ts', '--reason', 'rewriting login', '--name', 'shop/claude', '--repo', repo]);
  run(bus, ['channel', 'publish', 'deploy', 'a freeze until the release', '-s', 'alert', '-t', '4h']);
  run(bus, ['token', 'create', 'shop/claude', '--expires', '30d']);
  run(bus, ['integration', 'add', 'ci', '--kind', 'generic', '--to', 'shop']);
  return { messageId: sent.message_ids[0] as string, threadId: sent.thread_id, taskId, repo };
}

function run(bus: TempBus, args: string[], env: NodeJS.ProcessEnv = bus.env): string {
  const result = runCli(args, { env });
  assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

test('no listing shows a raw ISO timestamp; --json keeps them', withTempBus((bus) => {
  const { messageId, threadId, taskId, repo } = busWithEverything(bus);
  const codex = agentEnv(bus, 'shop/codex', repo);
  const listings: string[][] = [
    ['agents'],
    ['inbox', '--peek', '--name', 'shop/codex'],
    ['inbox', '--peek', '--short', '--name', 'shop/codex'],
    ['tail'],
    ['tail', '--full'],
    ['search', 'login'],
    ['status', messageId],
    ['read', messageId],
    ['thread', threadId],
    ['task', 'list'],
    ['task', 'show', taskId],
    ['reservations'],
    ['channel', 'list'],
    ['channel', 'list', '--notices'],
    ['token', 'list'],
    ['integration', 'list'],
    ['integration', 'outbox'],
    ['brain', 'status'],
  ];
  for (const args of listings) {
    const out = run(bus, args, args[0] === 'inbox' ? codex : bus.env);
    assert.ok(out.trim() !== '', `${args.join(' ')} printed something`);
    assert.doesNotMatch(out, ISO, `${args.join(' ')} shows no raw timestamp:\n${out}`);
  }
  // Each kind of moment reads relative to now: "just now", or seconds ago on a machine slow enough
  // that the listing comes a few seconds after the moment.
  const recent = String.raw`(?:just now|\d+ s ago)`;
  assert.match(run(bus, ['agents']), new RegExp(`seen ${recent}`));
  assert.match(run(bus, ['task', 'list']), new RegExp(recent));
  assert.match(run(bus, ['reservations']), new RegExp(`since ${recent}, expires in 1 h`));
  assert.match(run(bus, ['channel', 'list', '--notices']), /expires in 4 h/);
  assert.match(run(bus, ['token', 'list']), new RegExp(`${recent} .*30 Dec|${recent} .* \\d+ [A-Z][a-z]{2} `));
  // --json is where the stamps are.
  for (const args of [['agents', '--json'], ['task', 'list', '--json'], ['reservations', '--json'], ['inbox', '--peek', '--json', '--name', 'shop/codex']]) {
    assert.match(run(bus, args), ISO, `${args.join(' ')} keeps the stamps`);
  }
}));

test('a moment more than a day away reads as the local date and time, in the machine\'s time zone', withTempBus((bus) => {
  const { repo } = busWithEverything(bus);
  bus.sql("UPDATE tasks SET created_at = '2025-03-04T05:06:07.000000Z', updated_at = '2025-03-04T05:06:07.000000Z'");
  bus.sql("UPDATE agents SET last_seen = '2025-03-04T05:06:07.000000Z' WHERE name = 'shop/codex'");
  const inTokyo = { ...agentEnv(bus, 'shop/codex', repo), AGENT_BUS_NAME: '', TZ: 'Asia/Tokyo' };
  assert.match(run(bus, ['task', 'list'], inTokyo), / 4 Mar 2025 14:06 /);
  assert.match(run(bus, ['task', 'show', run(bus, ['task', 'list'], inTokyo).split(' ')[0] as string], inTokyo), /made by {2}shop\/claude, 4 Mar 2025 14:06\n {2}updated {2}4 Mar 2025 14:06\n/);
  assert.match(run(bus, ['agents'], { ...bus.env, TZ: 'UTC' }), /shop\/codex +seen 4 Mar 2025 05:06/);
}));
