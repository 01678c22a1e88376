/**
 * Claude Code for real, offline: a temp repo wired by our own `agent-bus init`,
 * Claude Code started against a fake model server on 127.0.0.1. The workspace
 * is trusted the way a user would at the first-run prompt; everything else is
 * what init wrote.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli } from '../helpers/bus-env.js';
import { claude } from './drivers.js';
import { assertReceiptsHonest, NOTICE_MARKERS } from './harness.js';
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
