/**
 * The real clients on a machine without the database, wired by `agent-bus
 * init --remote` to a loopback hub, offline against fake model servers. The
 * client machine's environment holds AGENT_BUS_TOKEN and nothing of the bus:
 * the tool calls land in the hub's bus, and mail waiting before a turn reaches
 * the model through the remote hooks.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { CLI, json, runCli, tempBus, type TempBus } from '../helpers/bus-env.js';
import { createToken, startHub, type RunningHub } from '../helpers/hub.js';
import { hasToolResult, startFakeAnthropic, type Reply } from './fake-anthropic.js';
import { hasToolMessage, startFakeChat, type ChatReply } from './fake-chat.js';
import { hasToolOutput, startFakeResponses, type ResponsesReply } from './fake-responses.js';
import { assertReadThroughTool, assertReceiptsHonest, claudeOffline, CLIENT_BIN, mailBody, modelSaw, runClient, runCodexIn, runOpencodeIn } from './harness.js';

const BIN = CLIENT_BIN;
const installed = (client: string, env: NodeJS.ProcessEnv = process.env): boolean =>
  existsSync(join(BIN, client)) && spawnSync(join(BIN, client), ['--version'], { encoding: 'utf8', timeout: 30_000, env }).status === 0;
const skipFor = (client: string, env?: NodeJS.ProcessEnv): false | string =>
  installed(client, env) ? false : `${client} is not installed in clients/ (npm run test:clients installs it)`;

interface Remote {
  hubBus: TempBus;
  hub: RunningHub;
  /** The client machine: a HOME, a repo wired by init --remote, the token in the environment. */
  home: string;
  repo: string;
  env: NodeJS.ProcessEnv;
  close(): Promise<void>;
}

async function remoteSetup(client: string): Promise<Remote> {
  const hubBus = tempBus();
  const hub = await startHub(hubBus);
  const { token } = createToken(hubBus, `shop/${client}`);
  // The human is on the hub's roster, so the model's mail to it is accepted.
  assert.equal(runCli(['send', 'joining', '--to', 'human'], { env: hubBus.env }).code, 0);
  const home = mkdtempSync(join(tmpdir(), 'agent-bus-client-machine-'));
  const repo = join(home, 'shop');
  mkdirSync(repo);
  assert.equal(spawnSync('git', ['init', '-q', repo]).status, 0);
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: home, NO_COLOR: '1', AGENT_BUS_TOKEN: token };
  const init = runCli(['init', '--clients', client, '--bin-path', CLI, '--remote', hub.url], { env: { ...env, AGENT_BUS_CLAUDE_BIN: join(BIN, 'claude') }, cwd: repo });
  assert.equal(init.code, 0, init.stderr);
  return {
    hubBus,
    hub,
    home,
    repo,
    env,
    async close() {
      await hub.stop();
      hubBus.cleanup();
      rmSync(home, { recursive: true, force: true });
    },
  };
}

/** A test body with a hub and a client machine for `client`, both gone afterwards whatever happens. */
function withRemote(client: string, work: (r: Remote) => Promise<void>): () => Promise<void> {
  return async () => {
    const r = await remoteSetup(client);
    try {
      await work(r);
    } finally {
      await r.close();
    }
  };
}

/** The session addresses the hub's bus holds for a client address, with whether a session id claimed each. */
function hubSessions(r: Remote, clientAddress: string): Array<[string, boolean]> {
  return r.hubBus.rows(`SELECT name, session_key FROM sessions WHERE client_address = '${clientAddress}' ORDER BY name`).map((row) => [String(row.name), row.session_key !== null]);
}

function sentToHuman(r: Remote, body: string): { from: string } | undefined {
  return json<Array<{ from: string; body: string }>>(runCli(['inbox', '--name', 'human', '--json'], { env: r.hubBus.env })).find((message) => message.body === body);
}

function noLocalBus(r: Remote): void {
  assert.ok(!existsSync(join(r.home, '.claude-agent-bus', 'bus.db')), 'the client machine has no database of its own');
}

// ------------------------------------------------------------------ Claude Code

function runClaude(r: Remote, modelUrl: string, prompt: string) {
  writeFileSync(join(r.home, '.claude.json'), JSON.stringify({ projects: { [r.repo]: { hasTrustDialogAccepted: true } } }));
  return runClient(join(BIN, 'claude'), ['-p', prompt, '--output-format', 'json'], r.repo, { ...r.env, ...claudeOffline(modelUrl) });
}

test('Claude Code wired by init --remote: the model\'s send_message reaches the hub, and mail waiting before a turn reaches the model', { skip: skipFor('claude') }, withRemote('claude', async (r) => {
  const model = await startFakeAnthropic((body): Reply =>
    hasToolResult(body) ? { text: 'sent it' } : { tool: 'mcp__agent-bus__send_message', input: { to: 'human', body: 'hello over the hub from claude' } },
  );
  try {
    const run = await runClaude(r, model.url, 'please greet the human');
    assert.equal(run.code, 0, run.stderr);
    const greeting = sentToHuman(r, 'hello over the hub from claude');
    assert.ok(greeting, `the tool call reached the hub (${model.requests.length} requests): ${run.stdout.slice(0, 400)}`);
    // Claude Code sends no session id with its tool calls over HTTP: they speak as the client address.
    assert.equal(greeting.from, 'shop/claude');
    // Its hooks do: the session's id holds a session address of its own.
    assert.deepEqual(hubSessions(r, 'shop/claude'), [['shop/claude-1', true]]);
  } finally {
    await model.close();
  }
  const mail = mailBody('REMOTE-MAIL-BEFORE-THE-TURN');
  assert.equal(runCli(['send', mail, '--to', 'shop/claude'], { env: r.hubBus.env }).code, 0);
  const quiet = await startFakeAnthropic(() => ({ text: 'noted' }));
  try {
    const run = await runClaude(r, quiet.url, 'anything new?');
    assert.equal(run.code, 0, run.stderr);
    assert.ok(modelSaw(mail, quiet.requests), 'the mail is in a model request');
    noLocalBus(r);
    // Every request either model server recorded: the hub's receipts against all the client's model saw.
    assertReceiptsHonest(r.hubBus, 'shop/claude', [...model.requests, ...quiet.requests], { delivered: [{ body: mail, via: 'hook-user-prompt', readVia: 'hook-user-prompt' }] });
  } finally {
    await quiet.close();
  }
}));

test("Claude Code wired by init --remote: the model's read_inbox tool call over the hub shows it mail that arrived during the turn, delivered and read by read_inbox", { skip: skipFor('claude') }, withRemote('claude', async (r) => {
  const mail = mailBody('REMOTE-MAIL-READ-BY-THE-MODEL');
  const model = await startFakeAnthropic((body, _raw, index): Reply => {
    if (index !== 1) return { text: hasToolResult(body) ? 'handled it' : 'nothing more' };
    // Mail arrives at the hub after the prompt hook looked, while the model works; it reads its inbox.
    assert.equal(runCli(['send', mail, '--to', 'shop/claude'], { env: r.hubBus.env }).code, 0);
    return { tool: 'mcp__agent-bus__read_inbox', input: {} };
  });
  try {
    const run = await runClaude(r, model.url, 'work, and read your mail');
    assert.equal(run.code, 0, run.stderr);
    assertReadThroughTool(r.hubBus, 'shop/claude', model.requests, mail);
  } finally {
    await model.close();
  }
}));

// ------------------------------------------------------------------ Codex

function runCodex(r: Remote, modelUrl: string, prompt: string) {
  return runCodexIn(r.repo, join(r.home, 'codex-home'), r.env, modelUrl, prompt);
}

test("Codex wired by init --remote: the model's send_message reaches the hub from its thread's own address, and mail waiting before a turn reaches the model", { skip: skipFor('codex') }, withRemote('codex', async (r) => {
  const model = await startFakeResponses((body): ResponsesReply =>
    hasToolOutput(body) ? { text: 'sent it' } : { namespace: 'mcp__agent_bus', name: 'send_message', input: { to: 'human', body: 'hello over the hub from codex' } },
  );
  try {
    const run = await runCodex(r, model.url, 'please greet the human');
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    const greeting = sentToHuman(r, 'hello over the hub from codex');
    assert.ok(greeting, `the tool call reached the hub (${model.requests.length} requests): ${run.stdout.slice(-1500)}`);
    // Codex sends its thread id with each tool call: the thread speaks as a session address of its own.
    assert.equal(greeting.from, 'shop/codex-1');
    assert.deepEqual(hubSessions(r, 'shop/codex'), [['shop/codex-1', true]]);
  } finally {
    await model.close();
  }
  const mail = mailBody('REMOTE-MAIL-BEFORE-THE-TURN');
  assert.equal(runCli(['send', mail, '--to', 'shop/codex'], { env: r.hubBus.env }).code, 0);
  const quiet = await startFakeResponses(() => ({ text: 'noted' }));
  try {
    const run = await runCodex(r, quiet.url, 'anything new?');
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    assert.ok(modelSaw(mail, quiet.requests), 'the mail is in a model request');
    noLocalBus(r);
    // Every request either model server recorded: the hub's receipts against all the client's model saw.
    assertReceiptsHonest(r.hubBus, 'shop/codex', [...model.requests, ...quiet.requests], { delivered: [{ body: mail, via: 'hook-user-prompt', readVia: 'hook-user-prompt' }] });
  } finally {
    await quiet.close();
  }
}));

test("Codex wired by init --remote: the model's read_inbox tool call over the hub shows it mail that arrived during the turn, delivered and read by read_inbox", { skip: skipFor('codex') }, withRemote('codex', async (r) => {
  const mail = mailBody('REMOTE-MAIL-READ-BY-THE-MODEL');
  let sent = false;
  const model = await startFakeResponses((body): ResponsesReply => {
    if (hasToolOutput(body)) return { text: 'handled it' };
    if (sent) return { text: 'nothing more' };
    // Mail arrives at the hub after the prompt hook looked, while the model works; it reads its inbox.
    sent = true;
    assert.equal(runCli(['send', mail, '--to', 'shop/codex'], { env: r.hubBus.env }).code, 0);
    return { namespace: 'mcp__agent_bus', name: 'read_inbox', input: {} };
  });
  try {
    const run = await runCodex(r, model.url, 'work, and read your mail');
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    assertReadThroughTool(r.hubBus, 'shop/codex', model.requests, mail);
  } finally {
    await model.close();
  }
}));

// ------------------------------------------------------------------ opencode

function runOpencode(r: Remote, modelUrl: string, prompt: string) {
  return runOpencodeIn(r.repo, r.home, r.env, modelUrl, prompt);
}

test("opencode wired by init --remote: the model's send_message reaches the hub, and mail waiting before a turn reaches the model", { skip: skipFor('opencode', { ...process.env, HOME: '/tmp' }) }, withRemote('opencode', async (r) => {
  const model = await startFakeChat((body): ChatReply => {
    const tool = (body.tools ?? []).map((entry) => entry.function?.name ?? '').find((name) => name.endsWith('send_message'));
    if (!tool || hasToolMessage(body)) return { text: 'sent it' };
    return { tool, input: { to: 'human', body: 'hello over the hub from opencode' } };
  });
  try {
    const run = await runOpencode(r, model.url, 'please greet the human');
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    const greeting = sentToHuman(r, 'hello over the hub from opencode');
    assert.ok(greeting, `the tool call reached the hub (${model.requests.length} requests): ${run.stdout.slice(-1500)} ${run.stderr.slice(-1500)}`);
    assert.equal(greeting.from, 'shop/opencode');
  } finally {
    await model.close();
  }
  const mail = mailBody('REMOTE-MAIL-BEFORE-THE-TURN');
  assert.equal(runCli(['send', mail, '--to', 'shop/opencode'], { env: r.hubBus.env }).code, 0);
  const quiet = await startFakeChat(() => ({ text: 'noted' }));
  try {
    const run = await runOpencode(r, quiet.url, 'anything new?');
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    assert.ok(modelSaw(mail, quiet.requests), `the mail is in a model request (${quiet.requests.length} requests)`);
    noLocalBus(r);
    // Every request either model server recorded: the hub's receipts against all the client's model saw.
    assertReceiptsHonest(r.hubBus, 'shop/opencode', [...model.requests, ...quiet.requests], { delivered: [{ body: mail, via: 'hook-user-prompt', readVia: 'hook-user-prompt' }] });
  } finally {
    await quiet.close();
  }
}));
