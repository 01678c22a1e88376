/**
 * Claude Code for real, offline: a temp repo wired by our own `agent-bus init`,
 * Claude Code started against a fake model server on 127.0.0.1. The workspace
 * is trusted the way a user would at the first-run prompt; everything else is
 * what init wrote.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { agentEnv, register } from '../helpers/agents.js';
import { CLI, json, runCli, tempBus } from '../helpers/bus-env.js';
import { claude } from './drivers.js';
import { assertReceiptsHonest, CLIENT_BIN, mailBody, modelSaw, NOTICE_MARKERS } from './harness.js';
import { localScenarios, withLocal, type LocalPlan } from './scenarios.js';

/** How many times `needle` occurs in `haystack`. */
function occurrences(haystack: string, needle: string): number {
  return haystack.split(needle).length - 1;
}

const plan: LocalPlan = {
  wiring(repo) {
    // Init asked the real Claude Code its version and wired the background wake hook: every run below
    // is in print mode, where the watcher must exit at once so the run ends normally.
    const settings = readFileSync(join(repo, '.claude', 'settings.json'), 'utf8');
    assert.match(settings, /hook-watch --client claude --max-seconds 86400 ; \[ \$\? -ne 10 \] \|\| exit 2/);
  },
  promptHook: 'the prompt hook',
  duringTurn: 'continues',
  readInbox: 'peek',
  notices: {
    tools: ['list_agents', 'channel_list'],
    shown: 'a critical one reaches the model before each tool call, an info one exactly once',
    check(requests) {
      const last = requests.at(-1) ?? '';
      assert.ok(requests.length >= 3, `two tool calls were made (${requests.length} requests)`);
      for (const tool of ['list_agents', 'channel_list']) {
        const context = `PreToolUse:mcp__agent-bus__${tool} hook additional context`;
        const at = last.indexOf(context);
        assert.ok(at >= 0, `the pre-tool hook's context before ${tool} reached the model`);
        assert.ok(last.slice(at, at + 600).includes(NOTICE_MARKERS.critical), `the critical notice is in it (${tool})`);
      }
      assert.equal(occurrences(requests[0] ?? '', NOTICE_MARKERS.critical) >= 1, true, 'critical at the first turn too');
      assert.equal(occurrences(last, NOTICE_MARKERS.info), 1, 'the info notice was shown once in the whole session');
    },
  },
};

localScenarios(claude, plan);

test("subscriptions in layers: init's default brings the brain at the first turn, a launch AGENT_BUS_CHANNELS wins over it, settings.local.json over settings.json", { skip: claude.skip }, withLocal(claude, plan, async (s) => {
  // The feed folder in the bus folder turns the brain on; init subscribed the repo to brain and amygdala.
  const feed = join(s.bus.folder, 'brain-feed');
  mkdirSync(feed, { recursive: true });
  writeFileSync(join(feed, 'hot-arcs.md'), '---\nid: hot-arcs\ntitle: Active Hot Arcs\npriority: 10\n---\nBRAIN-ENTRY-MARKER: the login rewrite is the hottest arc\n');
  // A critical notice on each of two other channels: each session must show the one its layer subscribes it to.
  for (const [channel, marker] of [['ops', 'OPS-CHANNEL-MARKER'], ['amygdala', 'AMYGDALA-CHANNEL-MARKER']]) {
    assert.equal(runCli(['channel', 'publish', channel as string, marker as string, '-s', 'critical'], { env: s.bus.env }).code, 0);
  }
  const model = await claude.startModel(() => ({ text: 'noted' }));
  const session = async (launch: NodeJS.ProcessEnv = {}): Promise<string[]> => {
    const before = model.requests.length;
    const run = await s.run(model, 'what is hot?', launch);
    assert.equal(run.code, 0, run.stderr);
    assert.ok(model.requests.length > before, 'the session reached the model');
    return model.requests.slice(before);
  };
  const sees = (requests: string[], marker: string): boolean => requests.some((raw) => raw.includes(marker));
  try {
    const settings = JSON.parse(readFileSync(join(s.machine.repo, '.claude', 'settings.json'), 'utf8')) as { env: Record<string, string> };
    assert.deepEqual(settings.env, { AGENT_BUS_DEFAULT_CHANNELS: 'brain,amygdala' }, "init's default");

    const byDefault = await session();
    assert.ok(byDefault[0]?.includes('BRAIN-ENTRY-MARKER'), 'the first model request carries the brain entry');
    assert.ok(sees(byDefault, 'AMYGDALA-CHANNEL-MARKER') && !sees(byDefault, 'OPS-CHANNEL-MARKER'));

    const launched = await session({ AGENT_BUS_CHANNELS: 'ops' });
    assert.ok(!sees(launched, 'BRAIN-ENTRY-MARKER'), 'launched with AGENT_BUS_CHANNELS=ops: no brain entry');
    assert.ok(sees(launched, 'OPS-CHANNEL-MARKER'), 'and the launch value is what the hooks used');
    assert.ok(!sees(launched, 'AMYGDALA-CHANNEL-MARKER'));

    writeFileSync(join(s.machine.repo, '.claude', 'settings.local.json'), JSON.stringify({ env: { AGENT_BUS_DEFAULT_CHANNELS: 'ops' } }));
    const local = await session();
    assert.ok(!sees(local, 'BRAIN-ENTRY-MARKER') && !sees(local, 'AMYGDALA-CHANNEL-MARKER'), 'settings.local.json wins over settings.json');
    assert.ok(sees(local, 'OPS-CHANNEL-MARKER'));
    assertReceiptsHonest(s.bus, s.agent, model.requests, { noneExpected: true });
  } finally {
    await model.close();
  }
}));

test("with --bin-path and no agent-bus on PATH, Claude Code runs this machine's agent-bus through its personal settings.local.json: the server starts, the hooks deliver, and the committed files hold no path of this machine", { skip: claude.skip }, async () => {
  const bus = tempBus();
  try {
    const repo = join(bus.dir, 'shop');
    mkdirSync(repo);
    assert.equal(spawnSync('git', ['init', '-q', repo]).status, 0);
    // PATH has node and the system's tools, and no agent-bus.
    const env: NodeJS.ProcessEnv = { ...bus.env, PATH: `${dirname(process.execPath)}:/usr/bin:/bin` };
    const init = runCli(['init', '--clients', 'claude', '--bin-path', CLI], { env: { ...env, AGENT_BUS_CLAUDE_BIN: join(CLIENT_BIN, 'claude') }, cwd: repo });
    assert.equal(init.code, 0, init.stderr);
    for (const file of ['.mcp.json', join('.claude', 'settings.json')]) assert.ok(!readFileSync(join(repo, file), 'utf8').includes(CLI), `${file} holds no path of this machine`);
    assert.deepEqual(JSON.parse(readFileSync(join(repo, '.claude', 'settings.local.json'), 'utf8')), { env: { AGENT_BUS_BIN: CLI } });
    register(agentEnv(bus, 'human', bus.dir));
    const machine = { repo, home: env.HOME as string, dir: bus.dir, env };
    claude.prepare(machine);
    const mail = mailBody('MAIL-THROUGH-THE-PERSONAL-AGENT-BUS');
    assert.equal(runCli(['send', mail, '--to', 'shop/claude'], { env: bus.env }).code, 0);
    let called = false;
    const model = await claude.startModel(() => {
      if (called) return { text: 'sent it' };
      called = true;
      return { call: 'send_message', input: { to: 'human', body: 'hello through the personal agent-bus' } };
    });
    try {
      const run = await claude.run(machine, model.url, 'anything new?');
      assert.equal(run.code, 0, run.stderr.slice(-2000));
      assert.ok(modelSaw(mail, model.requests), 'the prompt hook ran this machine\'s agent-bus and showed the mail');
      const inbox = json<Array<{ from: string; body: string }>>(runCli(['inbox', '--name', 'human', '--json'], { env: bus.env }));
      assert.ok(inbox.some((message) => message.body === 'hello through the personal agent-bus' && /^shop\/claude(-\d+)?$/.test(message.from)), JSON.stringify(inbox));
      assertReceiptsHonest(bus, 'shop/claude', model.requests, { delivered: [{ body: mail, via: 'hook-user-prompt', readVia: 'hook-user-prompt' }] });
    } finally {
      await model.close();
    }
  } finally {
    bus.cleanup();
  }
});
