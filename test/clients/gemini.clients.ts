/**
 * Gemini CLI for real, offline: a temp repo wired by `agent-bus init --clients gemini`, `gemini -p`
 * against a fake Gemini API on 127.0.0.1, the workspace trusted the way a user would
 * (GEMINI_CLI_TRUST_WORKSPACE); everything else is what init wrote.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { json, runCli } from '../helpers/bus-env.js';
import { gemini } from './drivers.js';
import { modelSaw, NOTICE_MARKERS } from './harness.js';
import { localScenarios, withLocal } from './scenarios.js';

localScenarios(gemini, {
  promptHook: 'the prompt hook (BeforeAgent)',
  duringTurn: 'continues',
  readInbox: 'read',
  urgent: 'with the next tool result (AfterTool)',
  notices: {
    tools: ['channel_list'],
    shown: 'a critical one reaches the model after the tool call, with its result (AfterTool); an info one once',
    check(requests) {
      const last = requests.at(-1) ?? '';
      const result = last.lastIndexOf('"functionResponse"');
      assert.ok(result >= 0, `a tool call came back (${requests.length} requests)`);
      assert.ok(last.slice(result).includes(NOTICE_MARKERS.critical), 'the critical notice came with the tool result');
      assert.equal(last.split(NOTICE_MARKERS.info).length - 1, 1, 'the info notice was shown once');
    },
  },
  launchChannels: { over: "the repo's default in the hook commands", callsATool: true },
});

test('Gemini CLI sets no limit on the turns a stop hook starts: with mail arriving at every turn, the hook starts AGENT_BUS_STOP_KEEPS in a row, then lets the run end, the last mail left for the next prompt', { skip: gemini.skip }, withLocal(gemini, {}, async (s) => {
  let sent = 0;
  const model = await gemini.startModel(() => {
    sent++;
    assert.equal(runCli(['send', `mail number ${sent}`, '--to', s.agent], { env: s.bus.env }).code, 0);
    return { text: `working on mail ${sent}` };
  });
  try {
    const run = await s.run(model, 'keep going', { AGENT_BUS_STOP_KEEPS: '2' });
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    assert.equal(model.requests.length, 3, 'the turn the person started, and two the stop hook started');
    assert.ok(modelSaw('kept working for mail: 2 of 2 turns in a row.', model.requests), 'the second kept turn says it is the last');
    const left = json<Array<{ body: string }>>(runCli(['inbox', '--name', s.agent, '--json', '--peek'], { env: s.bus.env }));
    assert.deepEqual(left.map((message) => message.body), ['mail number 3'], 'the mail that came during the last turn waits, unread');
  } finally {
    await model.close();
  }
}));
