/**
 * The fleet across machines with the real clients, offline: a hub on a private bus; a runner machine
 * (its own home and bus folder, no database) whose repo is wired by `agent-bus init --remote`, its
 * client set up against a scripted model, and `agent-bus runner` offering it with a token of the spawn
 * scope; a creator on a third machine who makes a task and asks `spawn CLIENT --on box --repo shop
 * --task ID` through the hub. The spawned agent speaks on the hub as its own name, a session of the
 * token's client address: its complete_task closes the task it holds, and `task wait` exits 0. Its
 * output reaches `logs` through the hub; an agent that leaves its task open fails it, and is resumed
 * on its own conversation; a running one is stopped across machines.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { test } from 'node:test';
import { json, runCli, runCliAsync, tempBus } from '../helpers/bus-env.js';
import { createToken, startHub } from '../helpers/hub.js';
import { listen } from '../helpers/http-server.js';
import { agentBusOnPath } from '../helpers/on-path.js';
import { killRunner, machineEnv, startRunnerWith, type Runner } from '../helpers/runner.js';
import { waitUntil } from '../helpers/wait.js';
import { claude, codex, type ClientDriver, type Machine } from './drivers.js';
import { setUp } from './fleet-setup.js';
import { CLIENT_BIN, type FakeServer } from './harness.js';

interface TaskShown {
  state: string;
  holder: string | null;
  result: string | null;
}

interface Spawned {
  spawn_id: string;
  machine: string;
  state: string;
  pid: number | null;
  exit_category: string | null;
  session: string | null;
  runner: string | null;
}

/** The latest run of the spawned agent `name`, as `agents --json` shows it on `env`'s machine. */
function spawnedAs(env: NodeJS.ProcessEnv, name: string): Spawned {
  const agents = json<Array<{ name: string; spawned: Spawned | null }>>(runCli(['agents', '--json'], { env }));
  const found = agents.find((agent) => agent.name === name)?.spawned;
  assert.ok(found, `${name} is among the agents, marked spawned`);
  return found;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * The model's address as the runner machine knows it: every request is passed to the scripted model,
 * but one carrying `marker` is held unanswered until the client gives up on it (an agent busy for as
 * long as the test wants). `held` counts the requests held.
 */
async function holdingProxy(model: FakeServer, marker: string): Promise<{ url: string; held(): number; close(): Promise<void> }> {
  let held = 0;
  const target = new URL(model.url);
  const proxy = await listen((req, raw, res) => {
    if (raw.includes(marker)) {
      held++;
      return;
    }
    const forward = http.request({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    forward.on('error', () => res.destroy());
    forward.end(raw);
  });
  return { url: proxy.url, held: () => held, close: proxy.close };
}

function fleetAcrossMachines(driver: ClientDriver): void {
  test(`${driver.label} spawned --on a runner's machine wired by init --remote: it speaks on the hub as its spawned name, its complete_task brings the result to a creator on another machine, its output reaches logs, a run leaving its task open fails it and resumes on its conversation, and a stop across machines ends a running one`, { skip: driver.skip }, async () => {
    const hubBus = tempBus();
    const hub = await startHub(hubBus);
    let runner: Runner | null = null;
    const models: Array<{ close(): Promise<void> }> = [];
    try {
      const agent = `shop/${driver.id}`;
      // On the hub's machine: the runner machine's token, for the repo's client address, may start agents.
      const runnerToken = createToken(hubBus, agent, ['--scope', 'spawn']).token;
      const creatorToken = createToken(hubBus, 'ops/lead', ['--scope', 'spawn']).token;

      // The runner machine: agent-bus on PATH (the committed files run the bare command), no database.
      const runnerEnv = machineEnv(hubBus, hub, 'box', runnerToken, { AGENT_BUS_RUNNER_HEARTBEAT: '1' });
      const boxDir = join(hubBus.dir, 'machine-box');
      runnerEnv.PATH = agentBusOnPath(boxDir, runnerEnv.PATH).PATH;
      const repo = join(boxDir, 'src', 'shop');
      mkdirSync(repo, { recursive: true });
      assert.equal(spawnSync('git', ['init', '-q', repo]).status, 0);
      const init = runCli(['init', '--clients', driver.id, '--remote', hub.url], {
        env: { ...runnerEnv, AGENT_BUS_CLAUDE_BIN: join(CLIENT_BIN, 'claude'), AGENT_BUS_CODEX_BIN: join(CLIENT_BIN, 'codex') },
        cwd: repo,
      });
      assert.equal(init.code, 0, init.stderr);
      assert.match(init.stdout, new RegExp(`On the hub: ${agent} is on its roster \\(the token's agent\\)`));

      const closedMarker = `the notes are out (${driver.id})`;
      let closed = false;
      let reported = false;
      let shippedId = '';
      const model = await driver.startModel((request) => {
        if (!closed && request.offers('complete_task')) {
          closed = true;
          return { call: 'complete_task', input: { id: shippedId, result: 'notes shipped' } };
        }
        if (closed && !reported && request.afterTool) {
          reported = true;
          return { text: closedMarker };
        }
        return { text: 'I give up' };
      });
      models.push(model);
      const holdMarker = 'HOLD-THIS-RUN-MARKER';
      const proxy = await holdingProxy(model, holdMarker);
      models.push(proxy);
      const machine: Machine = { repo, home: runnerEnv.HOME as string, dir: boxDir, env: runnerEnv };
      runner = await startRunnerWith({ ...runnerEnv, ...setUp[driver.id](machine, proxy.url) }, [repo], 'box', [driver.id]);

      // The creator, on a third machine.
      const creator = machineEnv(hubBus, hub, 'laptop', creatorToken);
      const shipped = json<{ id: string }>(runCli(['task', 'add', 'ship the release notes', '--to', 'shop', '--json'], { env: creator }));
      shippedId = shipped.id;
      const writer = `${agent}-writer`;
      const spawn = await runCliAsync(['spawn', driver.id, '--on', 'box', '--repo', 'shop', '--task', shipped.id, '--label', 'writer'], { env: creator });
      assert.equal(spawn.code, 0, spawn.stderr);
      assert.equal(spawn.stdout, `${writer}\n`);
      const logs = (name: string): string => runCli(['logs', name, '--lines', '60'], { env: creator }).stdout;
      const waited = await runCliAsync(['task', 'wait', shipped.id, '--timeout', '120s'], { env: creator });
      assert.equal(waited.code, 0, `${waited.stdout}${waited.stderr}\n${logs(writer)}\nthe runner said: ${runner.said()}`);
      assert.match(waited.stdout, /notes shipped/);
      const done = json<TaskShown>(runCli(['task', 'show', shipped.id, '--json'], { env: creator }));
      assert.deepEqual([done.state, done.holder, done.result], ['done', writer, 'notes shipped']);
      // The call that closed it spoke as the spawned name: the hub's audit names it the actor.
      assert.match(readFileSync(hubBus.audit, 'utf8'), new RegExp(`"op":"task","actor":"${writer}"[^\\n]*"event":"done"`));
      // Its conversation holds that name at the hub, as a session of the token's client address.
      const sessions = hubBus.rows<{ name: string; session_key: string | null }>(`SELECT name, session_key FROM sessions WHERE client_address = '${agent}'`);
      assert.ok(sessions.some((row) => row.name === writer && row.session_key !== null), `the hub holds ${writer} for its conversation: ${JSON.stringify(sessions)}`);
      assert.ok(!existsSync(join(boxDir, 'bus', 'bus.db')), 'the runner machine has no database of its own');
      // Its output, sent by the runner, read on the creator's machine.
      await waitUntil(() => logs(writer).includes(closedMarker), () => `the client's output reaches logs through the hub: ${logs(writer)}`, 20_000, 250);
      assert.match(logs(writer), new RegExp(`\\[agent-bus\\] starting ${writer}: .* \\(in ${repo.replace(/[/.]/g, '\\$&')}\\)`));

      // A run that leaves its task open fails it, with the log's last lines the runner sent.
      const abandoned = json<{ id: string }>(runCli(['task', 'add', 'a task nobody finishes', '--to', 'shop', '--json'], { env: creator }));
      const quitter = `${agent}-quitter`;
      const second = await runCliAsync(['spawn', driver.id, '--on', 'box', '--repo', 'shop', '--task', abandoned.id, '--label', 'quitter'], { env: creator });
      assert.equal(second.code, 0, second.stderr);
      const failed = await runCliAsync(['task', 'wait', abandoned.id, '--timeout', '120s'], { env: creator });
      assert.equal(failed.code, 5, `${failed.stdout}${failed.stderr}\n${logs(quitter)}`);
      const shown = json<TaskShown>(runCli(['task', 'show', abandoned.id, '--json'], { env: creator }));
      assert.match(shown.result ?? '', new RegExp(`^${quitter} ended \\(exit 0 \\(finished\\)\\) without closing the task\\.`));
      assert.match(shown.result ?? '', /I give up/, "the log's last lines carry the model's last words");

      // Resumed from the creator's machine, it goes on in its own conversation on the runner's.
      const ended = spawnedAs(creator, quitter);
      assert.ok(ended.session, `the session of ${quitter}'s run is recorded`);
      const before = model.requests.length;
      const resumed = await runCliAsync(['resume', quitter, '--prompt', 'say where you stopped'], { env: creator });
      assert.equal(resumed.code, 0, resumed.stderr);
      await waitUntil(() => {
        const now = spawnedAs(creator, quitter);
        return now.spawn_id !== ended.spawn_id && now.state === 'exited';
      }, () => `the resumed run's exit: ${logs(quitter)}`, 120_000, 500);
      assert.equal(spawnedAs(creator, quitter).exit_category, 'finished', logs(quitter));
      const started = logs(quitter).split('\n').find((line) => line.startsWith(`[agent-bus] starting ${quitter}: `)) ?? '';
      assert.ok(started.includes(ended.session), `the client was started on its session (${ended.session}): ${logs(quitter)}`);
      const later = model.requests.slice(before);
      assert.ok(later.some((raw) => raw.includes('say where you stopped')), `the resumed run's prompt reached the model (${later.length} requests)`);
      assert.ok(later.some((raw) => /You hold agent-bus task [0-9a-f]+: a task nobody finishes/.test(raw)), "the resumed run's requests carry the first run's prompt");

      // A running agent (its model's answer held back) stopped from the creator's machine: the runner ends it.
      const busy = `${agent}-busy`;
      const third = await runCliAsync(['spawn', driver.id, '--on', 'box', '--repo', 'shop', '--prompt', `${holdMarker}: think hard`, '--label', 'busy'], { env: creator });
      assert.equal(third.code, 0, third.stderr);
      await waitUntil(() => proxy.held() > 0, () => `the busy agent asks its model: ${logs(busy)}`, 60_000, 250);
      const running = spawnedAs(creator, busy);
      assert.ok(running.state === 'running' && running.pid !== null && alive(running.pid), `it runs on the runner's machine: ${JSON.stringify(running)}`);
      const stopped = await runCliAsync(['stop', busy], { env: creator });
      assert.equal(stopped.code, 0, stopped.stderr);
      assert.match(stopped.stdout, new RegExp(`^stopped ${busy} on box: .*\\(stopped\\)`));
      assert.equal(spawnedAs(creator, busy).exit_category, 'stopped');
      await waitUntil(() => !alive(running.pid as number), 'the stopped client is gone', 20_000, 200);
      // Whatever of theirs reached the hub with a conversation's id (tool calls, hooks, status) held their spawned names: none a number.
      const held = hubBus.rows<{ name: string }>(`SELECT DISTINCT name FROM sessions WHERE client_address = '${agent}' ORDER BY name`).map((row) => row.name);
      assert.ok(held.includes(writer) && held.every((name) => [writer, quitter, busy].includes(name)), `the hub's sessions of ${agent}: ${held.join(', ')}`);
    } finally {
      if (runner !== null) await killRunner(runner);
      for (const model of models) await model.close();
      await hub.stop();
      try {
        hubBus.cleanup();
      } catch {
        // A client still writing its files: the temp folder goes with the machine's.
      }
    }
  });
}

// Claude Code's relay and Codex's (each client's stdio server, `serve` on a machine set to use a hub)
// are handed the agent's name by the runner's start: both hold it for the conversation at the hub.
for (const driver of [claude, codex]) fleetAcrossMachines(driver);
