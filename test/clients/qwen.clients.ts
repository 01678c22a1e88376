/**
 * Qwen Code for real, offline, on Node.js 22: a temp repo wired by `agent-bus init --clients qwen`,
 * `qwen -p … --yolo` against a fake Anthropic Messages API on 127.0.0.1 (Anthropic as the user's
 * sign-in); everything else is what init wrote. Its model reaches the bus's tools through
 * `tool_search` and `tool_call`.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runCli } from '../helpers/bus-env.js';
import { qwen } from './drivers.js';
import { assertReceiptsHonest, mailBody, modelSaw, NOTICE_MARKERS } from './harness.js';
import { localScenarios, remoteScenarios, withLocal } from './scenarios.js';

localScenarios(qwen, {
  promptHook: 'the prompt hook (UserPromptSubmit)',
  duringTurn: 'continues',
  readInbox: 'read',
  urgent: 'with the next tool result (PostToolUse)',
  notices: {
    tools: ['channel_list'],
    shown: 'a critical one reaches the model with the tool call\'s result (PostToolUse), an info one once',
    check(requests) {
      const last = requests.at(-1) ?? '';
      assert.ok(last.includes('tool_result'), `a tool call came back (${requests.length} requests)`);
      const results = qwen.toolResults(last);
      assert.ok(results.some((result) => result.includes(NOTICE_MARKERS.critical)), `the critical notice reached the model in the tool call's result: ${JSON.stringify(results)}`);
      assert.equal(last.split(NOTICE_MARKERS.info).length - 1, 1, 'the info notice was shown once');
    },
  },
  launchChannels: { over: "the repo's default in the hook commands", callsATool: true },
});

test('Qwen Code mid-turn: urgent mail sent before a tool call is in the request that carries its result (PostToolUse), while plain mail sent with it waits through its sends of tool results for the stop hook', { skip: qwen.skip }, withLocal(qwen, {}, async (s) => {
  const urgent = mailBody('URGENT-MID-TURN');
  const plain = mailBody('PLAIN-MID-TURN');
  let step = 0;
  const model = await qwen.startModel((request) => {
    if (!request.offers('send_message')) return { text: 'a title' };
    step++;
    if (step === 1) {
      // Both are sent once the model has asked for its first command, before the command's PreToolUse runs.
      for (const [body, flags] of [[urgent, ['--urgent']], [plain, []]] as const) assert.equal(runCli(['send', body, '--to', s.agent, ...flags], { env: s.bus.env }).code, 0);
      return { shell: 'echo one' };
    }
    if (step === 2) return { shell: 'echo two' };
    return { text: 'done' };
  });
  try {
    const run = await s.run(model, 'run two commands');
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    const turn = qwen.turns(model.requests, 'send_message');
    assert.ok(turn.length >= 4, `two commands, then the turn the stop hook kept (${turn.length} requests)`);
    const where = (body: string): number[] => turn.flatMap((raw, index) => (modelSaw(body, [raw]) ? [index] : []));
    assert.ok(!modelSaw(urgent, turn.slice(0, 1)) && modelSaw(urgent, turn.slice(1, 2)), `the urgent mail came with the first command's result: ${JSON.stringify({ urgent: where(urgent), plain: where(plain), of: turn.length, all: model.requests.length })}`);
    assert.ok(!modelSaw(plain, turn.slice(0, 3)), 'the plain mail was not shown at the sends of tool results');
    assert.ok(modelSaw(plain, turn.slice(3)), 'the plain mail reached the model when the stop hook kept the turn');
    assertReceiptsHonest(s.bus, s.agent, model.requests, { delivered: [{ body: urgent, via: 'hook-pre-tool' }, { body: plain, via: 'hook-stop' }] });
  } finally {
    await model.close();
  }
}));

// Qwen Code sends no session id with its tool calls over HTTP: they speak as the client address. Its hooks do.
remoteScenarios(qwen, { sender: 'shop/qwen', sessions: [['shop/qwen-1', true]], readInbox: true });
