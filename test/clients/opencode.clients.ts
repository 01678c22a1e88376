/**
 * opencode for real, offline: a temp repo wired by `agent-bus init --clients
 * opencode`, `opencode run` against a fake chat completions server on
 * 127.0.0.1. The fake model provider lives in the user's config (the temp
 * XDG_CONFIG_HOME), so the project files are exactly what init wrote.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { json, runCli } from '../helpers/bus-env.js';
import { hasToolMessage, startFakeChat, type ChatBody, type ChatReply, type FakeChat } from './fake-chat.js';
import { assertReceiptsHonest, CLIENT_BIN, mailBody, modelSaw, publishTestNotices, runOpencodeIn, wiredRepo, type ClientRun, type WiredRepo } from './harness.js';

const OPENCODE = join(CLIENT_BIN, 'opencode');
const runnable = existsSync(OPENCODE) && spawnSync(OPENCODE, ['--version'], { encoding: 'utf8', timeout: 30_000, env: { ...process.env, HOME: '/tmp' } }).status === 0;
const skip = runnable ? false : 'opencode is not installed in clients/ (npm run test:clients installs it)';

const setup = (): WiredRepo => wiredRepo('opencode');

/** `launch` is the environment opencode is started with, on top of the test's own. */
function runOpencode(s: WiredRepo, model: FakeChat, prompt: string, launch: NodeJS.ProcessEnv = {}): Promise<ClientRun> {
  return runOpencodeIn(s.repo, s.bus.env.HOME as string, { ...s.bus.env, ...launch }, model.url, prompt);
}

test("opencode starts our MCP server and the model's send_message lands in the bus", { skip }, async () => {
  const s = setup();
  const model = await startFakeChat((body): ChatReply => {
    const tool = (body.tools ?? []).map((entry) => entry.function?.name ?? '').find((name) => name.endsWith('send_message'));
    if (!tool || hasToolMessage(body)) return { text: 'sent it' };
    return { tool, input: { to: 'human', body: 'hello from opencode' } };
  });
  try {
    const run = await runOpencode(s, model, 'please greet the human');
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    const inbox = json<Array<{ from: string; body: string }>>(runCli(['inbox', '--name', 'human', '--json'], { env: s.bus.env }));
    const greeting = inbox.find((message) => message.body === 'hello from opencode');
    assert.ok(greeting, `the tool call reached the bus (${model.requests.length} requests): ${run.stdout.slice(-1500)} ${run.stderr.slice(-1500)}`);
    assert.match(greeting.from, /^shop\/opencode(-\d+)?$/);
    assertReceiptsHonest(s.bus, 'shop/opencode', model.requests, { noneExpected: true });
  } finally {
    await model.close();
    s.bus.cleanup();
  }
});

test('mail sent before a turn reaches the model through the plugin', { skip }, async () => {
  const s = setup();
  const mail = mailBody('MAIL-BEFORE-THE-TURN');
  assert.equal(runCli(['send', mail, '--to', 'shop/opencode'], { env: s.bus.env }).code, 0);
  const model = await startFakeChat(() => ({ text: 'noted' }));
  try {
    const run = await runOpencode(s, model, 'anything new?');
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    assert.ok(modelSaw(mail, model.requests), `the mail is in a model request (${model.requests.length} requests)`);
    assertReceiptsHonest(s.bus, 'shop/opencode', model.requests, { delivered: [{ body: mail, via: 'hook-user-prompt', readVia: 'hook-user-prompt' }] });
  } finally {
    await model.close();
    s.bus.cleanup();
  }
});

/** The name opencode offers one of our MCP tools under, if this request offers it (a title request offers none). */
function offered(body: ChatBody, tool: string): string | undefined {
  return (body.tools ?? []).map((entry) => entry.function?.name ?? '').find((name) => name.endsWith(tool));
}

test("the model's read_inbox tool call: mail that arrived during the turn reaches the model in the tool's result, read and delivered by read_inbox", { skip }, async () => {
  const s = setup();
  const mail = mailBody('MAIL-READ-BY-THE-MODEL');
  let sent = false;
  const model = await startFakeChat((body): ChatReply => {
    const tool = offered(body, 'read_inbox');
    if (!tool) return { text: 'a title' };
    if (hasToolMessage(body)) return { text: 'handled it' };
    if (sent) return { text: 'nothing more' };
    // Mail arrives after the plugin's prompt hook looked, while the model works; it reads its inbox.
    sent = true;
    assert.equal(runCli(['send', mail, '--to', 'shop/opencode'], { env: s.bus.env }).code, 0);
    return { tool, input: {} };
  });
  try {
    const run = await runOpencode(s, model, 'work, and read your mail');
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    const agentRequests = model.requests.filter((raw) => raw.includes('read_inbox'));
    assert.ok(!modelSaw(mail, agentRequests.slice(0, 1)), 'the first request came before the mail');
    assert.ok(modelSaw(mail, agentRequests.slice(1)), `the tool's result carried the mail to the model (${model.requests.length} requests)`);
    assertReceiptsHonest(s.bus, 'shop/opencode', model.requests, { delivered: [{ body: mail, via: 'read_inbox', readVia: 'read_inbox' }] });
  } finally {
    await model.close();
    s.bus.cleanup();
  }
});

test('mail arriving during a turn is never marked delivered unseen: `opencode run` ends at idle before a follow-up turn, and the next turn shows it', { skip }, async () => {
  const s = setup();
  const mail = mailBody('MAIL-DURING-THE-TURN');
  let sent = false;
  const model = await startFakeChat((body): ChatReply => {
    if (!offered(body, 'read_inbox')) return { text: 'a title' };
    if (!sent) {
      sent = true;
      assert.equal(runCli(['send', mail, '--to', 'shop/opencode'], { env: s.bus.env }).code, 0);
    }
    return { text: 'working on it' };
  });
  try {
    const run = await runOpencode(s, model, 'do the task');
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    const agentRequests = model.requests.filter((raw) => raw.includes('read_inbox'));
    assert.ok(!modelSaw(mail, agentRequests.slice(0, 1)), 'the first request came before the mail');
    // At idle the plugin only peeks; the follow-up turn's first request would take the mail. `opencode run`
    // exits at idle, so that turn does not come: the mail must still be unsent to the model, not "delivered".
    assertReceiptsHonest(s.bus, 'shop/opencode', model.requests);
    if (modelSaw(mail, model.requests)) {
      assertReceiptsHonest(s.bus, 'shop/opencode', model.requests, { delivered: [{ body: mail, via: 'hook-stop', readVia: 'hook-stop' }] });
      return;
    }
    const next = await runOpencode(s, model, 'anything new?');
    assert.equal(next.code, 0, next.stderr.slice(-2000));
    assert.ok(modelSaw(mail, model.requests), 'the next turn showed the mail: nothing was lost');
    assertReceiptsHonest(s.bus, 'shop/opencode', model.requests, { delivered: [{ body: mail, via: 'hook-user-prompt', readVia: 'hook-user-prompt' }] });
  } finally {
    await model.close();
    s.bus.cleanup();
  }
});

test('notices: the plugin shows a critical one after each tool call and an info one at the first turn', { skip }, async () => {
  const s = setup();
  publishTestNotices(s.bus);
  let toolCalls = 0;
  const model = await startFakeChat((body): ChatReply => {
    const tool = (body.tools ?? []).map((entry) => entry.function?.name ?? '').find((name) => name.endsWith('channel_list'));
    if (!tool) return { text: 'a title' };
    if (toolCalls >= 1 && hasToolMessage(body)) return { text: 'done' };
    toolCalls++;
    return { tool, input: {} };
  });
  try {
    const run = await runOpencode(s, model, 'check the fleet');
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    const agentRequests = model.requests.filter((raw) => raw.includes('channel_list'));
    assert.ok(agentRequests.length >= 2, `a tool call and the request after it (${model.requests.length} requests)`);
    const afterTool = agentRequests.at(-1) ?? '';
    // The request after the tool carries the critical notice twice: in the turn's text and from the pre-tool hook.
    assert.ok(afterTool.split('CRITICAL-NOTICE-MARKER').length - 1 >= 2, 'the pre-tool hook added the critical notice after the tool call');
    assert.ok(agentRequests.every((raw) => raw.includes('INFO-NOTICE-MARKER')), 'the info notice stays in the turn it was shown in');
    assert.ok(model.requests.every((raw) => !raw.includes('UNSUBSCRIBED-NOTICE-MARKER')));
    const listed = json<Array<{ message: string; delivered_to: number }>>(runCli(['channel', 'list', '--notices', '--json'], { env: s.bus.env }));
    assert.equal(listed.find((notice) => notice.message === 'INFO-NOTICE-MARKER')?.delivered_to, 1, 'shown to one session, once');
    assertReceiptsHonest(s.bus, 'shop/opencode', model.requests, { noneExpected: true });
  } finally {
    await model.close();
    s.bus.cleanup();
  }
});

test("a launch AGENT_BUS_CHANNELS wins over the plugin's CHANNELS", { skip }, async () => {
  const s = setup();
  publishTestNotices(s.bus);
  const model = await startFakeChat(() => ({ text: 'noted' }));
  try {
    const run = await runOpencode(s, model, 'anything new?', { AGENT_BUS_CHANNELS: 'ops' });
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    assert.ok(model.requests.some((raw) => raw.includes('UNSUBSCRIBED-NOTICE-MARKER')), `the ops notice reached the model (${model.requests.length} requests)`);
    assert.ok(model.requests.every((raw) => !raw.includes('CRITICAL-NOTICE-MARKER') && !raw.includes('INFO-NOTICE-MARKER')), "the plugin's brain,amygdala did not apply");
    assertReceiptsHonest(s.bus, 'shop/opencode', model.requests, { noneExpected: true });
  } finally {
    await model.close();
    s.bus.cleanup();
  }
});
