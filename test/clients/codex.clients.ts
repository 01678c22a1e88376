/**
 * Codex for real, offline: a temp repo wired by `agent-bus init --clients
 * codex`, `codex exec` against a fake Responses API on 127.0.0.1. The project
 * is trusted and its hooks approved the way a user would (--trust,
 * --dangerously-bypass-hook-trust); everything else is what init wrote.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { json, runCli } from '../helpers/bus-env.js';
import { hasToolOutput, startFakeResponses, type FakeResponses, type ResponsesReply } from './fake-responses.js';
import { assertReadThroughTool, assertReceiptsHonest, CLIENT_BIN, mailBody, modelSaw, publishTestNotices, runCodexIn, wiredRepo, type ClientRun, type WiredRepo } from './harness.js';

const CODEX = join(CLIENT_BIN, 'codex');
const runnable = existsSync(CODEX) && spawnSync(CODEX, ['--version'], { encoding: 'utf8', timeout: 20_000 }).status === 0;
const skip = runnable ? false : 'Codex is not installed in clients/ (npm run test:clients installs it)';

const setup = (): WiredRepo => wiredRepo('codex');

/** `launch` is the environment Codex is started with, on top of the test's own. */
function runCodex(s: WiredRepo, model: FakeResponses, prompt: string, launch: NodeJS.ProcessEnv = {}): Promise<ClientRun> {
  return runCodexIn(s.repo, join(s.bus.dir, 'codex-home'), { ...s.bus.env, ...launch }, model.url, prompt);
}

test("Codex starts our MCP server and the model's send_message lands in the bus", { skip }, async () => {
  const s = setup();
  // Codex offers an MCP server's tools as a namespace, its name made safe: agent-bus → mcp__agent_bus.
  const model = await startFakeResponses((body): ResponsesReply =>
    hasToolOutput(body) ? { text: 'sent it' } : { namespace: 'mcp__agent_bus', name: 'send_message', input: { to: 'human', body: 'hello from codex' } },
  );
  try {
    const run = await runCodex(s, model, 'please greet the human');
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    const inbox = json<Array<{ from: string; body: string }>>(runCli(['inbox', '--name', 'human', '--json'], { env: s.bus.env }));
    const greeting = inbox.find((message) => message.body === 'hello from codex');
    assert.ok(greeting, `the tool call reached the bus (${model.requests.length} requests): ${run.stdout.slice(-1500)}`);
    assert.match(greeting.from, /^shop\/codex(-\d+)?$/);
    assertReceiptsHonest(s.bus, 'shop/codex', model.requests, { noneExpected: true });
  } finally {
    await model.close();
    s.bus.cleanup();
  }
});

test('mail sent before a turn reaches the model through the prompt hook', { skip }, async () => {
  const s = setup();
  const mail = mailBody('MAIL-BEFORE-THE-TURN');
  assert.equal(runCli(['send', mail, '--to', 'shop/codex'], { env: s.bus.env }).code, 0);
  const model = await startFakeResponses(() => ({ text: 'noted' }));
  try {
    const run = await runCodex(s, model, 'anything new?');
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    assert.ok(modelSaw(mail, model.requests), 'the mail is in a model request');
    assertReceiptsHonest(s.bus, 'shop/codex', model.requests, { delivered: [{ body: mail, via: 'hook-user-prompt', readVia: 'hook-user-prompt' }] });
  } finally {
    await model.close();
    s.bus.cleanup();
  }
});

test('mail arriving during a turn keeps Codex working until the inbox is empty', { skip }, async () => {
  const s = setup();
  const mail = mailBody('MAIL-DURING-THE-TURN');
  let sent = false;
  const model = await startFakeResponses((): ResponsesReply => {
    if (!sent) {
      sent = true;
      runCli(['send', mail, '--to', 'shop/codex'], { env: s.bus.env });
    }
    return { text: 'working on it' };
  });
  try {
    const run = await runCodex(s, model, 'do the task');
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    assert.ok(modelSaw(mail, model.requests.slice(1)), `the Stop hook made another request carry the mail (${model.requests.length} requests)`);
    assert.ok(!modelSaw(mail, model.requests.slice(0, 1)));
    assert.ok(model.requests.length <= 4, 'the loop ended once the inbox was empty');
    assertReceiptsHonest(s.bus, 'shop/codex', model.requests, { delivered: [{ body: mail, via: 'hook-stop', readVia: 'hook-stop' }] });
  } finally {
    await model.close();
    s.bus.cleanup();
  }
});

test("the model's read_inbox tool call: mail that arrived during the turn reaches the model in the tool's output, read and delivered by read_inbox", { skip }, async () => {
  const s = setup();
  const mail = mailBody('MAIL-READ-BY-THE-MODEL');
  let sent = false;
  const model = await startFakeResponses((body): ResponsesReply => {
    if (hasToolOutput(body)) return { text: 'handled it' };
    if (sent) return { text: 'nothing more' };
    // Mail arrives after the prompt hook looked, while the model works; it reads its inbox.
    sent = true;
    assert.equal(runCli(['send', mail, '--to', 'shop/codex'], { env: s.bus.env }).code, 0);
    return { namespace: 'mcp__agent_bus', name: 'read_inbox', input: {} };
  });
  try {
    const run = await runCodex(s, model, 'work, and read your mail');
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    assertReadThroughTool(s.bus, 'shop/codex', model.requests, mail);
  } finally {
    await model.close();
    s.bus.cleanup();
  }
});

test('notices: a critical one reaches the model between a tool call and its output, an info one once', { skip }, async () => {
  const s = setup();
  publishTestNotices(s.bus);
  const model = await startFakeResponses((body): ResponsesReply =>
    hasToolOutput(body) ? { text: 'done' } : { namespace: 'mcp__agent_bus', name: 'channel_list', input: {} },
  );
  try {
    const run = await runCodex(s, model, 'check the fleet');
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    const last = model.requests.at(-1) ?? '';
    // Codex places PreToolUse context as a developer message between the call and its output.
    const call = last.indexOf('"function_call"');
    const output = last.indexOf('"function_call_output"');
    assert.ok(call >= 0 && output > call, `a tool call was made (${model.requests.length} requests)`);
    assert.ok(last.slice(call, output).includes('CRITICAL-NOTICE-MARKER'), 'the pre-tool hook showed the critical notice before the tool ran');
    assert.equal(last.split('INFO-NOTICE-MARKER').length - 1, 1, 'the info notice was shown once (at session start)');
    assert.ok(model.requests.every((raw) => !raw.includes('UNSUBSCRIBED-NOTICE-MARKER')));
    assertReceiptsHonest(s.bus, 'shop/codex', model.requests, { noneExpected: true });
  } finally {
    await model.close();
    s.bus.cleanup();
  }
});

test("a launch AGENT_BUS_CHANNELS wins over the repo's default in the hook commands", { skip }, async () => {
  const s = setup();
  publishTestNotices(s.bus);
  const model = await startFakeResponses((body): ResponsesReply =>
    hasToolOutput(body) ? { text: 'done' } : { namespace: 'mcp__agent_bus', name: 'channel_list', input: {} },
  );
  try {
    const run = await runCodex(s, model, 'check the fleet', { AGENT_BUS_CHANNELS: 'ops' });
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    assert.ok(model.requests.length >= 2, `a tool call was made (${model.requests.length} requests)`);
    assert.ok(model.requests.some((raw) => raw.includes('UNSUBSCRIBED-NOTICE-MARKER')), "the ops notice the launch value subscribes to reached the model");
    assert.ok(model.requests.every((raw) => !raw.includes('CRITICAL-NOTICE-MARKER') && !raw.includes('INFO-NOTICE-MARKER')), "the repo's default (brain, amygdala) did not apply");
    assertReceiptsHonest(s.bus, 'shop/codex', model.requests, { noneExpected: true });
  } finally {
    await model.close();
    s.bus.cleanup();
  }
});
