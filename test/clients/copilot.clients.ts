/**
 * GitHub Copilot CLI for real, offline: a temp repo wired by `agent-bus init --clients copilot`,
 * `copilot -p` against a fake Anthropic Messages API on 127.0.0.1 (COPILOT_OFFLINE, a provider of our
 * own), the folder trusted and repo hooks and workspace MCP allowed in prompt mode as a user would;
 * everything else is what init wrote.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { json, runCli } from '../helpers/bus-env.js';
import { copilot } from './drivers.js';
import { NOTICE_MARKERS, wiredRepo } from './harness.js';
import { localScenarios } from './scenarios.js';

localScenarios(copilot, {
  promptHook: 'the prompt hook (UserPromptSubmit)',
  duringTurn: 'continues',
  readInbox: 'read',
  urgent: 'at its next tool call (PreToolUse)',
  notices: {
    tools: ['channel_list'],
    shown: 'a critical one reaches the model at the tool call (PreToolUse), an info one once',
    check(requests) {
      const last = requests.at(-1) ?? '';
      assert.ok(last.includes('tool_result'), `a tool call came back (${requests.length} requests)`);
      assert.ok(last.includes(NOTICE_MARKERS.critical), 'the critical notice reached the model with the tool call');
      assert.equal(last.split(NOTICE_MARKERS.info).length - 1, 1, 'the info notice was shown once');
    },
  },
  launchChannels: { over: "the repo's default in the hook commands", callsATool: true },
});

test("Copilot CLI in a repo wired for Claude Code too: it starts the server from Claude Code's .mcp.json, whose entry wins over its own, and that server speaks for Copilot, never as Claude Code", { skip: copilot.skip }, async () => {
  const { bus, repo } = wiredRepo('claude', 'copilot');
  try {
    // Claude Code's entry: the server for Claude Code (who it is comes from --client and the repo), which Copilot CLI starts too.
    assert.deepEqual(JSON.parse(readFileSync(join(repo, '.mcp.json'), 'utf8')).mcpServers['agent-bus'].args, ['serve', '--client', 'claude']);
    let greeted = false;
    const model = await copilot.startModel((request) => {
      if (greeted || !request.offers('send_message')) return { text: 'sent it' };
      greeted = true;
      return { call: 'send_message', input: { to: 'human', body: 'hello from the shared config' } };
    });
    try {
      const run = await copilot.run({ repo, home: bus.env.HOME as string, dir: bus.dir, env: bus.env }, model.url, 'please greet the human');
      assert.equal(run.code, 0, run.stderr.slice(-2000));
      const got = json<Array<{ from: string; body: string }>>(runCli(['inbox', '--name', 'human', '--json'], { env: bus.env })).find((message) => message.body === 'hello from the shared config');
      assert.ok(got, `the tool call reached the bus (${model.requests.length} requests)`);
      assert.match(got.from, /^shop\/copilot(-\d+)?$/);
    } finally {
      await model.close();
    }
  } finally {
    bus.cleanup();
  }
});
