/**
 * A session that outlives its turn, as a user's does, in opencode 1.x and 2 alike: `opencode serve`
 * (a private server on a port of its own, its password ours) holds it, and `opencode run` attached to
 * that server hands it each prompt, ending at idle while the session, its plugin and its MCP server
 * live on in the server. The scenarios here prove what only such a session shows: a stop held for
 * mail, an idle session woken, and its presence once the turn is over.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { json, runCli } from '../helpers/bus-env.js';
import { hasExited, waitFor, waitUntil } from '../helpers/wait.js';
import { opencodeOffline, type ClientDriver, type Machine, type Script } from './drivers.js';
import { assertReceiptsHonest, mailBody, modelSaw, runClient, wiredRepoWith, type ClientRun, type FakeServer } from './harness.js';

/** How one opencode serves a session and attaches a run to it. */
export interface ServedOpencode {
  driver: ClientDriver;
  /** Its executable. */
  bin: string;
  /** The environment variable `serve` takes its password from, which the attached run reads too. */
  passwordEnv: string;
  /** The arguments of a run of `prompt` attached to the server at `url`. */
  attach(url: string, prompt: string): string[];
}

/** opencode 1.x: `run --attach URL`, the password in OPENCODE_SERVER_PASSWORD. */
export const servedOpencode1 = (driver: ClientDriver, bin: string): ServedOpencode => ({
  driver,
  bin,
  passwordEnv: 'OPENCODE_SERVER_PASSWORD',
  attach: (url, prompt) => ['run', '--attach', url, '--format', 'json', prompt],
});

/** opencode 2: `run --server URL`, the password in OPENCODE_PASSWORD. */
export const servedOpencode2 = (driver: ClientDriver, bin: string): ServedOpencode => ({
  driver,
  bin,
  passwordEnv: 'OPENCODE_PASSWORD',
  attach: (url, prompt) => ['run', '--server', url, '--format', 'json', prompt],
});

interface Served {
  machine: Machine;
  model: FakeServer;
  /** A turn of a new session, to its idle. */
  run(prompt: string): Promise<ClientRun>;
  stop(): Promise<void>;
}

async function serve(client: ServedOpencode, machine: Machine, model: FakeServer): Promise<Served> {
  const env = { ...machine.env, ...opencodeOffline(machine, model.url), [client.passwordEnv]: randomBytes(12).toString('hex') };
  const server: ChildProcess = spawn(client.bin, ['serve', '--hostname', '127.0.0.1', '--port', '0'], { cwd: machine.repo, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let said = '';
  server.stdout?.on('data', (chunk: Buffer) => (said += chunk.toString()));
  server.stderr?.on('data', (chunk: Buffer) => (said += chunk.toString()));
  const url = await waitFor(() => /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(said)?.[1], () => `opencode serve to listen: ${said}`, 60_000);
  return {
    machine,
    model,
    run: (prompt) => runClient(client.bin, client.attach(url, prompt), machine.repo, env),
    async stop() {
      if (server.pid !== undefined && !hasExited(server.pid)) {
        server.kill('SIGTERM');
        await waitUntil(() => server.exitCode !== null || server.signalCode !== null, 'opencode serve to end', 20_000);
      }
    },
  };
}

type Bus = ReturnType<typeof wiredRepoWith>['bus'];

/** A test body: a repo wired for this opencode, its model on `script`, a served session; all gone afterwards. */
function withServed(client: ServedOpencode, script: Script, work: (served: Served, bus: Bus) => Promise<void>): () => Promise<void> {
  return async () => {
    const { bus, repo } = wiredRepoWith({ env: client.driver.initEnv }, 'opencode');
    const machine: Machine = { repo, home: bus.env.HOME as string, dir: bus.dir, env: bus.env };
    const model = await client.driver.startModel(script);
    let served: Served | undefined;
    try {
      served = await serve(client, machine, model);
      await work(served, bus);
    } finally {
      await served?.stop();
      await model.close();
      bus.cleanup();
    }
  };
}

/**
 * The states `agents --json` shows for the repo's opencode sessions (`shop/opencode-N`), or with
 * `shared` for its client address too (`shop/opencode`), which a hook run before the session took its
 * address would have spoken as.
 */
function sessionStates(bus: Bus, shared = false): string[] {
  const name = shared ? /^shop\/opencode(-\d+)?$/ : /^shop\/opencode-\d+$/;
  return json<Array<{ name: string; state: string }>>(runCli(['agents', '--json'], { env: bus.env }))
    .filter((agent) => name.test(agent.name))
    .map((agent) => agent.state);
}

const watched = (bus: Bus): boolean => bus.rows('SELECT 1 FROM watchers').length > 0;

/** What is proven here beside the held stop and the wake. */
export interface ServedPlan {
  /** Presence through a whole turn (working during it, idle after it): where the local scenarios cannot show it. */
  presence?: true;
}

export function servedScenarios(client: ServedOpencode, plan: ServedPlan = {}): void {
  const { driver } = client;
  const { label, skip } = driver;

  test(`${label}: mail that arrives during a turn holds its stop once: at idle the plugin queues one follow-up turn, whose request carries the mail (hook-stop), and the session then rests`, { skip, timeout: 180_000 }, async () => {
    const mail = mailBody('MAIL-HELD-AT-THE-STOP');
    let sent = false;
    let bus: Bus | undefined;
    const script: Script = (request) => {
      if (!request.offers('read_inbox')) return { text: 'a title' };
      if (!sent && bus) {
        sent = true;
        assert.equal(runCli(['send', mail, '--to', 'shop/opencode'], { env: bus.env }).code, 0);
      }
      return { text: 'working on it' };
    };
    await withServed(client, script, async (served, theBus) => {
      bus = theBus;
      const run = await served.run('do the task');
      assert.equal(run.code, 0, run.stderr.slice(-2000));
      const agent = () => driver.turns(served.model.requests, 'read_inbox');
      assert.ok(sent, 'the mail was sent while the turn ran');
      assert.ok(!modelSaw(mail, agent().slice(0, 1)), 'the first request came before the mail');
      await waitUntil(() => modelSaw(mail, served.model.requests), () => `a follow-up turn's request to carry the mail (${served.model.requests.length} requests)`, 60_000);
      const held = agent().findIndex((raw) => modelSaw(mail, [raw]));
      assert.equal(held, 1, 'the request right after the turn ended carries it');
      // Held once: with the inbox empty, the follow-up turn ends and no other starts.
      await waitUntil(() => watched(theBus), 'the session to rest, watched for its next mail', 30_000);
      assert.equal(agent().length, 2, `one follow-up turn, no more (${agent().length} agent requests)`);
      assertReceiptsHonest(theBus, 'shop/opencode', served.model.requests, { delivered: [{ body: mail, via: 'hook-stop', readVia: 'hook-stop' }] });
    })();
  });

  test(`${label}: an idle session is woken by mail: the watcher the plugin starts at idle finds it, and the plugin prompts the session (queue), whose next request carries it`, { skip, timeout: 180_000 }, withServed(client, () => ({ text: 'noted' }), async (served, bus) => {
    const first = await served.run('hello, first prompt');
    assert.equal(first.code, 0, first.stderr.slice(-2000));
    await waitUntil(() => watched(bus), 'the idle session to be watched', 30_000);
    assert.deepEqual(sessionStates(bus), ['idle'], 'the session rests idle once its turn has ended');
    const before = served.model.requests.length;
    const mail = mailBody('WAKE-MARKER');
    assert.equal(runCli(['send', mail, '--to', 'shop/opencode'], { env: bus.env }).code, 0);
    await waitUntil(() => modelSaw(mail, served.model.requests.slice(before)), () => `a woken turn's request to carry the mail (${served.model.requests.length} requests)`, 60_000);
    // The turn is the session's own, in its transcript: the prompt the plugin sent went to that session.
    const woken = served.model.requests.slice(before).find((raw) => modelSaw(mail, [raw])) ?? '';
    assert.ok(woken.includes('hello, first prompt'), 'the woken turn continues the idle session');
    assertReceiptsHonest(bus, 'shop/opencode', served.model.requests, { delivered: [{ body: mail, via: 'hook-watch' }] });
  }));

  if (plan.presence) {
    test(`${label}: agents shows a served session working during its turn, and idle once the turn has ended`, { skip, timeout: 180_000 }, async () => {
      let during: string[] | undefined;
      let bus: Bus | undefined;
      const script: Script = (request) => {
        if (!request.offers('read_inbox')) return { text: 'a title' };
        if (bus) during ??= sessionStates(bus);
        return { text: 'done' };
      };
      await withServed(client, script, async (served, theBus) => {
        bus = theBus;
        const run = await served.run('say done');
        assert.equal(run.code, 0, run.stderr.slice(-2000));
        assert.deepEqual(during, ['working'], 'agents showed the session working while its model was asked');
        // The server lives on: the session is idle because its turn ended, not because its client went.
        await waitUntil(() => sessionStates(theBus).join() === 'idle', () => `the session idle once its turn ended: ${JSON.stringify(sessionStates(theBus))}`, 30_000, 200);
        assert.ok(!sessionStates(theBus, true).includes('working'), `nothing of the client shows working: ${JSON.stringify(sessionStates(theBus, true))}`);
      })();
    });
  }
}
