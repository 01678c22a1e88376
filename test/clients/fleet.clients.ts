/**
 * The fleet with the real clients (Claude Code, Codex, opencode, Gemini CLI, Copilot CLI, Pi, Qwen Code, Cline CLI):
 * `agent-bus spawn --task` starts the client headless in a wired repo, with the command line the bus
 * builds for it (src/fleet/launch.ts), against a scripted model. A model that calls
 * complete_task delivers the result to the task's creator (`task wait` exits 0); one that ends without
 * closing the task fails it with the exit's reason (`task wait` exits 5). Resumed, an agent that has
 * ended goes on in its own conversation, through the client's own resume.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { json, runCli, runCliAsync } from '../helpers/bus-env.js';
import { waitUntil } from '../helpers/wait.js';
import { claude, cline, codex, copilot, gemini, opencode, opencode2, pi, qwen, type ClientDriver, type Machine } from './drivers.js';
import { setUp } from './fleet-setup.js';
import { wiredRepoWith } from './harness.js';

interface TaskShown {
  state: string;
  holder: string | null;
  result: string | null;
}

interface Spawned {
  spawn_id: string;
  state: string;
  exit_category: string | null;
  session: string | null;
}

/** The latest run of the spawned agent `name`, as `agents --json` shows it. */
function spawnedAs(env: NodeJS.ProcessEnv, name: string): Spawned {
  const agents = json<Array<{ name: string; spawned: Spawned | null }>>(runCli(['agents', '--json'], { env }));
  const found = agents.find((agent) => agent.name === name)?.spawned;
  assert.ok(found, `${name} is among the agents, marked spawned`);
  return found;
}

/**
 * `resumes`: whether the bus learns the client's session and resumes it; Cline CLI names it nowhere
 * the bus reads (its output names the conversation only), so the bus cannot resume it.
 */
function taskScenario(driver: ClientDriver, resumes = true): void {
  test(`${driver.label} spawned for a task: complete_task brings the result back to its creator; a run that leaves it open fails it${resumes ? ', and resumed goes on in its own conversation' : ''}`, { skip: driver.skip }, async () => {
    const { bus, repo } = wiredRepoWith({ env: driver.initEnv }, driver.id);
    try {
      const machine: Machine = { repo, home: bus.env.HOME as string, dir: bus.dir, env: bus.env };
      const shipped = json<{ id: string }>(runCli(['task', 'add', 'ship the release notes', '--to', 'shop', '--json'], { env: bus.env, cwd: repo }));
      const abandoned = json<{ id: string }>(runCli(['task', 'add', 'a task nobody finishes', '--to', 'shop', '--json'], { env: bus.env, cwd: repo }));
      // The first run's first turn closes its task; every other request (that run's next, the second run's) only answers.
      let closed = false;
      const model = await driver.startModel((request) => {
        if (closed || !request.offers('complete_task')) return { text: 'I give up' };
        closed = true;
        return { call: 'complete_task', input: { id: shipped.id, result: 'notes shipped' } };
      });
      try {
        // The client's own executable where the driver names one (opencode 2 beside 1.x).
        const env = { ...bus.env, ...setUp[driver.id](machine, model.url), ...driver.initEnv };
        const writer = `shop/${driver.id}-writer`;
        const spawn = runCli(['spawn', driver.id, '--task', shipped.id, '--label', 'writer'], { env, cwd: repo });
        assert.equal(spawn.code, 0, spawn.stderr);
        assert.equal(spawn.stdout, `${writer}\n`);
        // Waited for without blocking this process: the scripted model answers from it.
        const waited = await runCliAsync(['task', 'wait', shipped.id, '--timeout', '120s'], { env: bus.env });
        assert.equal(waited.code, 0, `${waited.stdout}${waited.stderr}\n${runCli(['logs', writer, '--lines', '30'], { env: bus.env }).stdout}`);
        const done = json<TaskShown>(runCli(['task', 'show', shipped.id, '--json'], { env: bus.env }));
        assert.deepEqual([done.state, done.holder, done.result], ['done', writer, 'notes shipped']);

        const quitter = `shop/${driver.id}-quitter`;
        assert.equal(runCli(['spawn', driver.id, '--task', abandoned.id, '--label', 'quitter'], { env, cwd: repo }).code, 0);
        const failed = await runCliAsync(['task', 'wait', abandoned.id, '--timeout', '120s'], { env: bus.env });
        assert.equal(failed.code, 5, `${failed.stdout}${failed.stderr}`);
        const shown = json<TaskShown>(runCli(['task', 'show', abandoned.id, '--json'], { env: bus.env }));
        assert.match(shown.result ?? '', new RegExp(`^${quitter} ended \\(exit 0 \\(finished\\)\\) without closing the task\\.`));
        assert.match(shown.result ?? '', /I give up/, "the log's last lines carry the model's last words");

        if (!resumes) return;
        // Resumed with a new prompt, it goes on in its own conversation: the client is started on the
        // session its run was recorded with, and the model is shown that run's prompt again.
        const ended = spawnedAs(bus.env, quitter);
        assert.ok(ended.session, `the session of ${quitter}'s run is recorded (by its hooks or its output)`);
        const before = model.requests.length;
        const resumed = runCli(['resume', quitter, '--prompt', 'say where you stopped'], { env, cwd: repo });
        assert.equal(resumed.code, 0, resumed.stderr);
        const logs = (): string => runCli(['logs', quitter, '--lines', '30'], { env: bus.env }).stdout;
        await waitUntil(() => {
          const now = spawnedAs(bus.env, quitter);
          return now.spawn_id !== ended.spawn_id && now.state === 'exited';
        }, () => `the resumed run's exit: ${logs()}`, 120_000, 250);
        assert.equal(spawnedAs(bus.env, quitter).exit_category, 'finished', logs());
        const started = logs().split('\n').find((line) => line.startsWith(`[agent-bus] starting ${quitter}: `)) ?? '';
        assert.ok(started.includes(ended.session), `the client was started with its session's id (${ended.session}): ${logs()}`);
        const later = model.requests.slice(before);
        assert.ok(later.some((raw) => raw.includes('say where you stopped')), `the resumed run's prompt reached the model (${later.length} requests)`);
        assert.ok(
          later.some((raw) => /You hold agent-bus task [0-9a-f]+: a task nobody finishes/.test(raw)),
          "the resumed run's requests carry the first run's prompt: its conversation went on",
        );
      } finally {
        await model.close();
      }
    } finally {
      bus.cleanup();
    }
  });
}

for (const driver of [claude, codex, opencode, opencode2, gemini, copilot, pi, qwen]) taskScenario(driver);
taskScenario(cline, false);
