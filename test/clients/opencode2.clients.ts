/**
 * opencode 2 for real, offline, beside opencode 1.x (opencode.clients.ts): a temp repo wired by
 * `agent-bus init --clients opencode` with opencode 2 the one installed (so it writes 2.x's shape),
 * `opencode run --standalone` against a fake chat completions server on 127.0.0.1. The generated
 * plugin is the same file 1.x loads; here opencode 2 runs its `setup`.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { json, runCli } from '../helpers/bus-env.js';
import { hasExited, waitFor, waitUntil } from '../helpers/wait.js';
import { opencode2, opencodeOffline, type Machine, type Script } from './drivers.js';
import { assertReceiptsHonest, mailBody, modelSaw, OPENCODE2_BIN, runClient, wiredRepoWith, type ClientRun, type FakeServer } from './harness.js';
import { opencodeNotices } from './opencode-plan.js';
import { localScenarios, remoteScenarios } from './scenarios.js';

localScenarios(opencode2, {
  wiring(repo) {
    // opencode 2's own shape, the bus's tools out of Code Mode (which would hide them behind `execute`).
    const config = JSON.parse(readFileSync(join(repo, '.opencode', 'opencode.json'), 'utf8')) as { mcp: Record<string, unknown> & { servers?: Record<string, { codemode?: boolean }> } };
    assert.equal(config.mcp.servers?.['agent-bus']?.codemode, false, JSON.stringify(config));
    assert.equal(config.mcp['agent-bus'], undefined, "no entry in opencode 1.x's place");
  },
  promptHook: "the plugin's context hook",
  // At idle the plugin finds the mail and queues one follow-up turn; `opencode run` has ended by then
  // (the served session below shows that turn come).
  duringTurn: 'next-turn',
  readInbox: 'read',
  urgent: 'after its next tool call, through the plugin',
  notices: opencodeNotices(opencode2),
  launchChannels: { over: "the plugin's CHANNELS", callsATool: false },
});

remoteScenarios(opencode2, { sender: 'shop/opencode', readInbox: true });

/**
 * A session that outlives its turn, as a user's does: `opencode serve` (a private server on a port of
 * its own, its password ours) holds it, and `opencode run --server` hands it each prompt, ending at idle
 * while the session, its plugin and its MCP server live on in the server.
 */
interface Served {
  machine: Machine;
  model: FakeServer;
  /** A turn of a new session, to its idle. */
  run(prompt: string): Promise<ClientRun>;
  stop(): Promise<void>;
}

async function serve(driverEnv: { machine: Machine }, model: FakeServer): Promise<Served> {
  const { machine } = driverEnv;
  const env = { ...machine.env, ...opencodeOffline(machine, model.url), OPENCODE_PASSWORD: randomBytes(12).toString('hex') };
  const server: ChildProcess = spawn(OPENCODE2_BIN, ['serve', '--hostname', '127.0.0.1', '--port', '0'], { cwd: machine.repo, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let said = '';
  server.stdout?.on('data', (chunk: Buffer) => (said += chunk.toString()));
  server.stderr?.on('data', (chunk: Buffer) => (said += chunk.toString()));
  const url = await waitFor(() => /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(said)?.[1], () => `opencode serve to listen: ${said}`, 60_000);
  return {
    machine,
    model,
    run: (prompt) => runClient(OPENCODE2_BIN, ['run', '--server', url, '--format', 'json', prompt], machine.repo, env),
    async stop() {
      if (server.pid !== undefined && !hasExited(server.pid)) {
        server.kill('SIGTERM');
        await waitUntil(() => server.exitCode !== null || server.signalCode !== null, 'opencode serve to end', 20_000);
      }
    },
  };
}

/** A test body: a repo wired for opencode 2, its model on `script`, a served session; all gone afterwards. */
function withServed(script: Script, work: (served: Served, bus: ReturnType<typeof wiredRepoWith>['bus']) => Promise<void>): () => Promise<void> {
  return async () => {
    const { bus, repo } = wiredRepoWith({ env: opencode2.initEnv }, 'opencode');
    const machine: Machine = { repo, home: bus.env.HOME as string, dir: bus.dir, env: bus.env };
    const model = await opencode2.startModel(script);
    let served: Served | undefined;
    try {
      served = await serve({ machine }, model);
      await work(served, bus);
    } finally {
      await served?.stop();
      await model.close();
      bus.cleanup();
    }
  };
}

test('opencode 2: mail that arrives during a turn holds its stop once: at idle the plugin queues one follow-up turn, whose request carries the mail (hook-stop), and the session then rests', { skip: opencode2.skip, timeout: 180_000 }, async () => {
  const mail = mailBody('MAIL-HELD-AT-THE-STOP');
  let sent = false;
  let bus: ReturnType<typeof wiredRepoWith>['bus'] | undefined;
  const script: Script = (request) => {
    if (!request.offers('read_inbox')) return { text: 'a title' };
    if (!sent && bus) {
      sent = true;
      assert.equal(runCli(['send', mail, '--to', 'shop/opencode'], { env: bus.env }).code, 0);
    }
    return { text: 'working on it' };
  };
  await withServed(script, async (served, theBus) => {
    bus = theBus;
    const run = await served.run('do the task');
    assert.equal(run.code, 0, run.stderr.slice(-2000));
    const agent = () => opencode2.turns(served.model.requests, 'read_inbox');
    assert.ok(!modelSaw(mail, agent().slice(0, 1)), 'the first request came before the mail');
    await waitUntil(() => modelSaw(mail, served.model.requests), () => `a follow-up turn's request to carry the mail (${served.model.requests.length} requests)`, 60_000);
    const held = agent().findIndex((raw) => modelSaw(mail, [raw]));
    assert.equal(held, 1, 'the request right after the turn ended carries it');
    // Held once: with the inbox empty, the follow-up turn ends and no other starts.
    await waitUntil(() => bus !== undefined && bus.rows("SELECT 1 FROM watchers").length > 0, 'the session to rest, watched for its next mail', 30_000);
    assert.equal(agent().length, 2, `one follow-up turn, no more (${agent().length} agent requests)`);
    assertReceiptsHonest(theBus, 'shop/opencode', served.model.requests, { delivered: [{ body: mail, via: 'hook-stop', readVia: 'hook-stop' }] });
  })();
});

test('opencode 2: an idle session is woken by mail: the watcher the plugin starts at idle finds it, and the plugin prompts the session (queue), whose next request carries it', { skip: opencode2.skip, timeout: 180_000 }, withServed(() => ({ text: 'noted' }), async (served, bus) => {
  const first = await served.run('hello, first prompt');
  assert.equal(first.code, 0, first.stderr.slice(-2000));
  await waitUntil(() => bus.rows("SELECT 1 FROM watchers").length > 0, 'the idle session to be watched', 30_000);
  // Presence from session.execution.*: the session rests idle once its turn has succeeded.
  const sessions = json<Array<{ name: string; state: string }>>(runCli(['agents', '--json'], { env: bus.env })).filter((agent) => agent.name.startsWith('shop/opencode-'));
  assert.deepEqual(sessions.map((agent) => agent.state), ['idle'], JSON.stringify(sessions));
  const before = served.model.requests.length;
  const mail = mailBody('WAKE-MARKER');
  assert.equal(runCli(['send', mail, '--to', 'shop/opencode'], { env: bus.env }).code, 0);
  await waitUntil(() => modelSaw(mail, served.model.requests.slice(before)), () => `a woken turn's request to carry the mail (${served.model.requests.length} requests)`, 60_000);
  // The turn is the session's own, in its transcript: the prompt the plugin sent went to that session.
  const woken = served.model.requests.slice(before).find((raw) => modelSaw(mail, [raw])) ?? '';
  assert.ok(woken.includes('hello, first prompt'), 'the woken turn continues the idle session');
  assertReceiptsHonest(bus, 'shop/opencode', served.model.requests, { delivered: [{ body: mail, via: 'hook-watch' }] });
}));
