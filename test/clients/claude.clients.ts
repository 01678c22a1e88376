/**
 * Claude Code for real, offline: a temp repo wired by our own `agent-bus init`,
 * Claude Code started against a fake model server on 127.0.0.1. The workspace
 * is trusted the way a user would at the first-run prompt; everything else is
 * what init wrote.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { json, ROOT, runCli } from '../helpers/bus-env.js';
import { hasToolResult, startFakeAnthropic, type FakeModel, type Reply } from './fake-anthropic.js';
import { assertReceiptsHonest, claudeEnv, mailBody, modelSaw, publishTestNotices, runClient, wiredRepo, type ClientRun, type WiredRepo } from './harness.js';

const CLAUDE = join(ROOT, 'clients', 'node_modules', '.bin', 'claude');
const runnable = existsSync(CLAUDE) && spawnSync(CLAUDE, ['--version'], { encoding: 'utf8', timeout: 20_000 }).status === 0;
const skip = runnable ? false : `Claude Code is not installed in clients/ (npm run test:clients installs it)`;

function setup(): WiredRepo {
  const wired = wiredRepo('claude');
  // Init asked the real Claude Code its version and wired the background wake hook: every run below
  // is in print mode, where the watcher must exit at once so the run ends normally.
  const settings = readFileSync(join(wired.repo, '.claude', 'settings.json'), 'utf8');
  assert.match(settings, /hook-watch --client claude --max-seconds 86400 ; \[ \$\? -ne 10 \] \|\| exit 2/);
  // What the user does at the first-run prompt: trust this workspace.
  writeFileSync(join(wired.bus.env.HOME as string, '.claude.json'), JSON.stringify({ projects: { [wired.repo]: { hasTrustDialogAccepted: true } } }));
  return wired;
}

/** `launch` is the environment Claude Code is started with, on top of the test's own. */
function runClaude(s: WiredRepo, model: FakeModel, prompt: string, launch: NodeJS.ProcessEnv = {}): Promise<ClientRun> {
  return runClient(CLAUDE, ['-p', prompt, '--output-format', 'json'], s.repo, { ...claudeEnv(s.bus, model.url), ...launch });
}

test('Claude Code starts our MCP server and the model\'s send_message lands in the bus', { skip }, async () => {
  const s = setup();
  const model = await startFakeAnthropic((body): Reply =>
    hasToolResult(body) ? { text: 'sent it' } : { tool: 'mcp__agent-bus__send_message', input: { to: 'human', body: 'hello from the model' } },
  );
  try {
    const run = await runClaude(s, model, 'please greet the human');
    assert.equal(run.code, 0, run.stderr);
    const inbox = json<Array<{ from: string; body: string }>>(runCli(['inbox', '--name', 'human', '--json'], { env: s.bus.env }));
    const greeting = inbox.find((message) => message.body === 'hello from the model');
    assert.ok(greeting, `the tool call reached the bus; requests: ${model.requests.length}, output: ${run.stdout.slice(0, 300)}`);
    assert.match(greeting.from, /^shop\/claude(-\d+)?$/);
    assertReceiptsHonest(s.bus, 'shop/claude', model.requests, { noneExpected: true });
  } finally {
    await model.close();
    s.bus.cleanup();
  }
});

test('mail sent before a turn reaches the model through the prompt hook', { skip }, async () => {
  const s = setup();
  const mail = mailBody('MAIL-BEFORE-THE-TURN');
  const sent = runCli(['send', mail, '--to', 'shop/claude'], { env: s.bus.env });
  assert.equal(sent.code, 0, sent.stderr);
  const model = await startFakeAnthropic(() => ({ text: 'noted' }));
  try {
    const run = await runClaude(s, model, 'anything new?');
    assert.equal(run.code, 0, run.stderr);
    assert.ok(modelSaw(mail, model.requests), 'the mail is in a model request');
    assertReceiptsHonest(s.bus, 'shop/claude', model.requests, { delivered: [{ body: mail, via: 'hook-user-prompt', readVia: 'hook-user-prompt' }] });
  } finally {
    await model.close();
    s.bus.cleanup();
  }
});

test('mail arriving during a turn keeps Claude Code working until the inbox is empty', { skip }, async () => {
  const s = setup();
  const mail = mailBody('MAIL-DURING-THE-TURN');
  let sent = false;
  const model = await startFakeAnthropic((): Reply => {
    if (!sent) {
      sent = true;
      runCli(['send', mail, '--to', 'shop/claude'], { env: s.bus.env });
    }
    return { text: 'working on it' };
  });
  try {
    const run = await runClaude(s, model, 'do the task');
    assert.equal(run.code, 0, run.stderr);
    assert.ok(modelSaw(mail, model.requests.slice(1)), `the Stop hook made another request carry the mail (${model.requests.length} requests)`);
    assert.ok(!modelSaw(mail, model.requests.slice(0, 1)));
    assert.ok(model.requests.length <= 4, 'the loop ended once the inbox was empty');
    assertReceiptsHonest(s.bus, 'shop/claude', model.requests, { delivered: [{ body: mail, via: 'hook-stop', readVia: 'hook-stop' }] });
  } finally {
    await model.close();
    s.bus.cleanup();
  }
});

test("the model's read_inbox tool call: a peek shows it mail that arrived during the turn (delivered, not read), and the Stop hook then hands it over", { skip }, async () => {
  const s = setup();
  const mail = mailBody('MAIL-PEEKED-BY-THE-MODEL');
  let id = '';
  let afterPeek: { delivered_via: string | null; read_at: string | null } | undefined;
  const model = await startFakeAnthropic((body, _raw, index): Reply => {
    if (index === 1) {
      // Mail arrives after the prompt hook looked, while the model works; it peeks at its inbox.
      id = json<{ message_id: string }>(runCli(['send', mail, '--to', 'shop/claude', '--json'], { env: s.bus.env })).message_id;
      return { tool: 'mcp__agent-bus__read_inbox', input: { mark_read: false } };
    }
    if (hasToolResult(body)) {
      afterPeek = json<{ copies: Array<{ delivered_via: string | null; read_at: string | null }> }>(runCli(['status', id, '--json'], { env: s.bus.env })).copies[0];
      return { text: 'seen it' };
    }
    return { text: 'handled it' };
  });
  try {
    const run = await runClaude(s, model, 'work, and look at your mail');
    assert.equal(run.code, 0, run.stderr);
    assert.ok(!modelSaw(mail, model.requests.slice(0, 1)), 'the first request came before the mail');
    assert.ok(modelSaw(mail, model.requests.slice(1, 2)), `the tool's result carried the mail to the model (${model.requests.length} requests)`);
    assert.ok(model.requests.length <= 4, 'the loop ended once the inbox was empty');
    assert.deepEqual(afterPeek, { ...afterPeek, delivered_via: 'read_inbox', read_at: null }, 'right after the peek: delivered by read_inbox, not read');
    // The peek delivered it; the Stop hook then took it (read), the delivery keeping its first way.
    assertReceiptsHonest(s.bus, 'shop/claude', model.requests, { delivered: [{ body: mail, via: 'read_inbox', readVia: 'hook-stop' }] });
  } finally {
    await model.close();
    s.bus.cleanup();
  }
});

/** How many times `needle` occurs in `haystack`. */
function occurrences(haystack: string, needle: string): number {
  return haystack.split(needle).length - 1;
}

test('notices: a critical one reaches the model before each tool call, an info one exactly once, an unsubscribed one never', { skip }, async () => {
  const s = setup();
  publishTestNotices(s.bus);
  const model = await startFakeAnthropic((_body, _raw, index): Reply => {
    if (index === 1) return { tool: 'mcp__agent-bus__list_agents', input: {} };
    if (index === 2) return { tool: 'mcp__agent-bus__channel_list', input: {} };
    return { text: 'done' };
  });
  try {
    const run = await runClaude(s, model, 'check the fleet');
    assert.equal(run.code, 0, run.stderr);
    const last = model.requests.at(-1) ?? '';
    assert.ok(model.requests.length >= 3, `two tool calls were made (${model.requests.length} requests)`);
    for (const tool of ['list_agents', 'channel_list']) {
      const context = `PreToolUse:mcp__agent-bus__${tool} hook additional context`;
      const at = last.indexOf(context);
      assert.ok(at >= 0, `the pre-tool hook's context before ${tool} reached the model`);
      assert.ok(last.slice(at, at + 600).includes('CRITICAL-NOTICE-MARKER'), `the critical notice is in it (${tool})`);
    }
    assert.equal(occurrences(model.requests[0] ?? '', 'CRITICAL-NOTICE-MARKER') >= 1, true, 'critical at the first turn too');
    assert.equal(occurrences(last, 'INFO-NOTICE-MARKER'), 1, 'the info notice was shown once in the whole session');
    assert.ok(model.requests.every((raw) => !raw.includes('UNSUBSCRIBED-NOTICE-MARKER')), 'a channel the repo does not subscribe to never reaches it');
    assertReceiptsHonest(s.bus, 'shop/claude', model.requests, { noneExpected: true });
  } finally {
    await model.close();
    s.bus.cleanup();
  }
});

test("subscriptions in layers: init's default brings the brain at the first turn, a launch AGENT_BUS_CHANNELS wins over it, settings.local.json over settings.json", { skip }, async () => {
  const s = setup();
  // The feed folder in the bus folder turns the brain on; init subscribed the repo to brain and amygdala.
  const feed = join(s.bus.folder, 'brain-feed');
  mkdirSync(feed, { recursive: true });
  writeFileSync(join(feed, 'hot-arcs.md'), '---\nid: hot-arcs\ntitle: Active Hot Arcs\npriority: 10\n---\nBRAIN-ENTRY-MARKER: the login rewrite is the hottest arc\n');
  // A critical notice on each of two other channels: each session must show the one its layer subscribes it to.
  for (const [channel, marker] of [['ops', 'OPS-CHANNEL-MARKER'], ['amygdala', 'AMYGDALA-CHANNEL-MARKER']]) {
    assert.equal(runCli(['channel', 'publish', channel as string, marker as string, '-s', 'critical'], { env: s.bus.env }).code, 0);
  }
  const model = await startFakeAnthropic(() => ({ text: 'noted' }));
  const session = async (launch: NodeJS.ProcessEnv = {}): Promise<string[]> => {
    const before = model.requests.length;
    const run = await runClaude(s, model, 'what is hot?', launch);
    assert.equal(run.code, 0, run.stderr);
    assert.ok(model.requests.length > before, 'the session reached the model');
    return model.requests.slice(before);
  };
  const sees = (requests: string[], marker: string): boolean => requests.some((raw) => raw.includes(marker));
  try {
    const settings = JSON.parse(readFileSync(join(s.repo, '.claude', 'settings.json'), 'utf8')) as { env: Record<string, string> };
    assert.deepEqual(settings.env, { AGENT_BUS_DEFAULT_CHANNELS: 'brain,amygdala' }, "init's default");

    const byDefault = await session();
    assert.ok(byDefault[0]?.includes('BRAIN-ENTRY-MARKER'), 'the first model request carries the brain entry');
    assert.ok(sees(byDefault, 'AMYGDALA-CHANNEL-MARKER') && !sees(byDefault, 'OPS-CHANNEL-MARKER'));

    const launched = await session({ AGENT_BUS_CHANNELS: 'ops' });
    assert.ok(!sees(launched, 'BRAIN-ENTRY-MARKER'), 'launched with AGENT_BUS_CHANNELS=ops: no brain entry');
    assert.ok(sees(launched, 'OPS-CHANNEL-MARKER'), 'and the launch value is what the hooks used');
    assert.ok(!sees(launched, 'AMYGDALA-CHANNEL-MARKER'));

    writeFileSync(join(s.repo, '.claude', 'settings.local.json'), JSON.stringify({ env: { AGENT_BUS_DEFAULT_CHANNELS: 'ops' } }));
    const local = await session();
    assert.ok(!sees(local, 'BRAIN-ENTRY-MARKER') && !sees(local, 'AMYGDALA-CHANNEL-MARKER'), 'settings.local.json wins over settings.json');
    assert.ok(sees(local, 'OPS-CHANNEL-MARKER'));
    assertReceiptsHonest(s.bus, 'shop/claude', model.requests, { noneExpected: true });
  } finally {
    await model.close();
    s.bus.cleanup();
  }
});
