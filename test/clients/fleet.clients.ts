/**
 * The fleet with the real clients: `agent-bus spawn --task` starts the client headless in a wired repo,
 * with the command line the bus builds for it, against a scripted model. A model that calls
 * complete_task delivers the result to the task's creator (`task wait` exits 0); one that ends without
 * closing the task fails it with the exit's reason (`task wait` exits 5).
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { json, runCli, runCliAsync } from '../helpers/bus-env.js';
import { claude, claudeOffline, codex, type ClientDriver, type Machine } from './drivers.js';
import { CLIENT_BIN, wiredRepo } from './harness.js';

interface TaskShown {
  state: string;
  holder: string | null;
  result: string | null;
}

/**
 * What a user has set up before spawning: the client trusts the repo and talks to the model at `modelUrl`.
 * The command line is the bus's own, so what the test drivers pass as flags is set here as a user would.
 */
const setUp: Record<'claude' | 'codex', (machine: Machine, modelUrl: string) => NodeJS.ProcessEnv> = {
  claude(machine, modelUrl) {
    claude.prepare(machine);
    return { ...claudeOffline(modelUrl), AGENT_BUS_CLAUDE_BIN: join(CLIENT_BIN, 'claude') };
  },
  codex(machine, modelUrl) {
    const codexHome = join(machine.dir, 'codex-home');
    mkdirSync(codexHome, { recursive: true });
    writeFileSync(
      join(codexHome, 'config.toml'),
      [
        'model = "fake-model"',
        'model_provider = "fake"',
        '[model_providers.fake]',
        'name = "fake"',
        `base_url = "${modelUrl}/v1"`,
        'env_key = "OPENAI_API_KEY"',
        'wire_api = "responses"',
        `[projects.${JSON.stringify(machine.repo)}]`,
        'trust_level = "trusted"',
        '',
      ].join('\n'),
    );
    return { CODEX_HOME: codexHome, OPENAI_API_KEY: 'dummy', AGENT_BUS_CODEX_BIN: join(CLIENT_BIN, 'codex') };
  },
};

function taskScenario(driver: ClientDriver & { id: 'claude' | 'codex' }): void {
  test(`${driver.label} spawned for a task: complete_task brings the result back to its creator; a run that leaves it open fails it`, { skip: driver.skip }, async () => {
    const { bus, repo } = wiredRepo(driver.id);
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
        const env = { ...bus.env, ...setUp[driver.id](machine, model.url) };
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
      } finally {
        await model.close();
      }
    } finally {
      bus.cleanup();
    }
  });
}

taskScenario(claude as ClientDriver & { id: 'claude' });
taskScenario(codex as ClientDriver & { id: 'codex' });
