/**
 * The dashboard's fleet view, its spawn form, its Stop button, the task form's "run with", and the
 * fleet's rows in Activity, in a real headless Chromium over a real `agent-bus web`, on a bus whose
 * agents the real CLI and the page start. The client is a stand-in (test/helpers/fake-agent.mjs),
 * named by the client's executable setting as the fleet's own tests name it.
 */
import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchBrowser, startWeb, type RunningWeb } from '../helpers/browser.js';
import { CLI, json, readAudit, ROOT, runCli, tempBus, type TempBus } from '../helpers/bus-env.js';
import { createToken, startHub } from '../helpers/hub.js';
import { repoIn } from '../helpers/reservations.js';
import { killRunner, machineEnv, startRunner } from '../helpers/runner.js';
import { hasExited, waitUntil } from '../helpers/wait.js';
import { shortId } from '../../src/model/short-id.js';

const FAKE_AGENT = join(ROOT, 'test', 'helpers', 'fake-agent.mjs');
/** The one signed in to `agent-bus web` (its $AGENT_BUS_NAME). */
const PERSON = 'maria';

let browser: Browser;
before(async () => {
  browser = await launchBrowser();
});
after(async () => {
  await browser.close();
});

interface Spawned {
  name: string;
  spawn_id: string;
  state: string;
  pid: number | null;
  log: string;
  machine: string;
  spawned_by: string;
  exit_code: number | null;
  exit_signal: string | null;
  exit_category: string | null;
  yolo: boolean;
  task: string | null;
}

/** The bus's environment with the stand-in as Claude Code and Codex, doing `steps`. */
function agentEnv(bus: TempBus, steps: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { ...bus.env, AGENT_BUS_CLAUDE_BIN: FAKE_AGENT, AGENT_BUS_CODEX_BIN: FAKE_AGENT, FAKE_AGENT: steps, FAKE_AGENT_CLI: CLI, ...extra };
}

/** Every spawned agent as `agent-bus agents --json` has it (the latest run of each name). */
function fleetOf(bus: TempBus): Spawned[] {
  return json<Array<{ spawned: Spawned | null }>>(runCli(['agents', '--json'], { env: bus.env })).flatMap((agent) => (agent.spawned === null || agent.spawned === undefined ? [] : [agent.spawned]));
}

function spawned(bus: TempBus, name: string): Spawned {
  const found = fleetOf(bus).find((spawn) => spawn.name === name);
  assert.ok(found, `${name} is among the spawned agents`);
  return found;
}

/** `agent-bus spawn CLIENT … ` in the repo, doing `steps`: its name. */
function spawnByCli(bus: TempBus, repo: string, steps: string, args: string[]): string {
  const result = runCli(['spawn', ...args], { env: agentEnv(bus, steps), cwd: repo });
  assert.equal(result.code, 0, result.stderr);
  return result.stdout.trim();
}

/** Stop whatever still runs, so no agent outlives its test. */
function stopAll(bus: TempBus): void {
  for (const spawn of fleetOf(bus)) if (spawn.state !== 'exited') runCli(['stop', spawn.spawn_id], { env: bus.env });
}

function spawnRows(bus: TempBus): Array<Record<string, unknown>> {
  return readAudit(bus.audit).filter((row) => row.op === 'spawn');
}

interface Opened {
  web: RunningWeb;
  context: BrowserContext;
  page: Page;
  /** Errors the page's script threw, and console errors but the refusals a test asks for. */
  errors: string[];
  close(): Promise<void>;
}

/** `agent-bus web` as PERSON, its spawns doing `steps`, and a signed-in page on it. */
async function openFleet(bus: TempBus, steps: string): Promise<Opened> {
  const web = await startWeb(bus, { ...agentEnv(bus, steps), AGENT_BUS_NAME: PERSON });
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  // A refusal the test provokes (a 400 the page shows) is the browser's console error too: not the script's.
  page.on('console', (message) => {
    if (message.type() === 'error' && !/status of 400 \(Bad Request\)/.test(message.text())) errors.push(message.text());
  });
  await page.goto(web.url);
  await page.locator('#live.on').waitFor({ timeout: 10_000 });
  return {
    web,
    context,
    page,
    errors,
    async close() {
      await context.close();
      await web.stop();
    },
  };
}

/** The agent's item in the fleet view. */
function itemOf(page: Page, name: string) {
  return page.locator(`#fleet-list li.spawn[data-name="${name}"]`);
}

async function post(origin: string, cookie: string, path: string, body: unknown): Promise<{ status: number; error: string | undefined; body: Record<string, unknown> }> {
  const response = await fetch(`${origin}${path}`, { method: 'POST', headers: { cookie, origin, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const answer = (await response.json()) as Record<string, unknown>;
  return { status: response.status, error: typeof answer.error === 'string' ? answer.error : undefined, body: answer };
}

function cookieFor(origin: string, value: string): string {
  return `agent_bus_dashboard_${new URL(origin).port}=${value}`;
}

test('the fleet view lists spawned agents with machine, client, state, uptime, task and --yolo; a live log follows a running one, and an exit shows its code and category', async () => {
  const bus = tempBus();
  const repo = repoIn(bus);
  assert.equal(runCli(['init', '--clients', 'claude'], { env: bus.env, cwd: repo }).code, 0);
  const opened = await openFleet(bus, 'exit:0');
  const { page } = opened;
  try {
    await page.locator('#fleet-list', { hasText: 'No agent started by the bus yet.' }).waitFor();
    // Started after the page opened: it comes without a reload.
    const fixer = spawnByCli(bus, repo, 'say:working on <i>it</i>,sleep:60000', ['claude', '--prompt', 'fix the <b>login</b> test', '--label', 'fixer', '--yolo']);
    assert.equal(fixer, 'shop/claude-fixer');
    const running = itemOf(page, fixer);
    await running.locator('.state', { hasText: 'running' }).waitFor({ timeout: 5_000 });
    const record = spawned(bus, fixer);
    assert.equal(record.state, 'running');
    assert.equal(await running.locator('.client').textContent(), 'claude');
    assert.equal(await running.locator('.yolo').textContent(), '--yolo');
    // Its pid is noted just after it starts: the page shows it with the next change.
    await running.locator('.where', { hasText: `pid ${record.pid}` }).waitFor({ timeout: 5_000 });
    assert.match((await running.locator('.where').textContent()) ?? '', new RegExp(`^on ${hostname()} · pid ${record.pid} · spawned by human `));
    assert.match((await running.locator('.uptime').textContent()) ?? '', /^up \d+s$/);
    // The prompt is text: no element was made from it.
    assert.equal(await running.locator('.prompt').textContent(), 'fix the <b>login</b> test');
    assert.equal(await page.locator('#fleet-list b').count(), 0);
    // The uptime ticks on the page.
    const first = (await running.locator('.uptime').textContent()) ?? '';
    await page.waitForFunction(({ name, was }) => (document.querySelector(`li.spawn[data-name="${name}"] .uptime`)?.textContent ?? was) !== was, { name: fixer, was: first }, { timeout: 3_000 });

    // Its log: the client's own lines, as text, and what is written later while it runs.
    await page.getByRole('button', { name: `Show the log of ${fixer}` }).click();
    await page.locator('#fleet-log-title', { hasText: `Log of ${fixer}` }).waitFor();
    const lines = page.locator('#fleet-log-lines');
    await lines.filter({ hasText: 'working on <i>it</i>' }).waitFor({ timeout: 5_000 });
    assert.match((await lines.textContent()) ?? '', new RegExp(`fake-agent name ${fixer} depth 1`));
    assert.equal(await page.locator('#fleet-log i').count(), 0);
    assert.ok(record.log.startsWith(join(bus.folder, 'fleet', 'logs')), `the log is in the bus's own folder: ${record.log}`);
    appendFileSync(record.log, 'a line written after the log was opened\n');
    await lines.filter({ hasText: 'a line written after the log was opened' }).waitFor({ timeout: 5_000 });

    // One that holds a task and fails: its exit, its code and category, and its task's title.
    const made = json<{ id: string }>(runCli(['task', 'add', 'make the tests pass', '--to', 'shop', '--json'], { env: bus.env, cwd: repo }));
    const quitter = spawnByCli(bus, repo, 'say:giving up here,sleep:300,exit:3', ['codex', '--task', made.id, '--label', 'quitter']);
    const ended = itemOf(page, quitter);
    await ended.locator('.state', { hasText: 'exited' }).waitFor({ timeout: 10_000 });
    assert.equal(spawned(bus, quitter).exit_category, 'failed');
    assert.match((await ended.locator('.exit').textContent()) ?? '', /^exit 3 \(failed\) after \d+s, \S.*$/);
    assert.equal(await ended.locator('.task').textContent(), `task ${shortId(made.id)}: make the tests pass`);
    assert.equal(await ended.locator('.client').textContent(), 'codex');
    assert.equal(await ended.locator('.yolo').count(), 0);
    assert.equal(await ended.locator('button.stop').count(), 0, 'an agent that ended has no Stop button');
    // Its log ends with the exit, read once more after it ended.
    await page.getByRole('button', { name: `Show the log of ${quitter}` }).click();
    await lines.filter({ hasText: '[agent-bus] exited: exit 3 (failed)' }).waitFor({ timeout: 5_000 });
    assert.match((await lines.textContent()) ?? '', /giving up here/);
    await page.locator('#fleet-summary', { hasText: '1 running, 0 queued, 1 ended.' }).waitFor();
    assert.deepEqual(opened.errors, []);
  } finally {
    stopAll(bus);
    await opened.close();
    bus.cleanup();
  }
});

test("the spawn form starts an agent as the signed-in person: it appears running, its log shows its output, and the CLI's errors come back as they are", async () => {
  const bus = tempBus();
  const repo = repoIn(bus);
  const opened = await openFleet(bus, 'say:hello from the form,sleep:60000');
  const { page, web } = opened;
  try {
    await page.getByText('Spawn an agent', { exact: true }).click();
    await page.getByLabel('Client', { exact: true }).selectOption('codex');
    await page.getByLabel('Repo folder').fill(repo);
    await page.getByLabel('Label (empty: a generated one)').fill('helper');
    await page.getByLabel('Prompt', { exact: true }).fill('tidy <script>up</script> the docs');
    await page.getByRole('button', { name: 'Spawn', exact: true }).click();
    const result = page.locator('#fleet-result.ok');
    await result.waitFor({ timeout: 10_000 });
    const record = spawned(bus, 'shop/codex-helper');
    assert.equal((await result.textContent()) ?? '', `shop/codex-helper: started codex (pid ${record.pid}) in ${repo}.`);
    assert.deepEqual([record.state, record.spawned_by, record.yolo], ['running', PERSON, false]);

    const item = itemOf(page, 'shop/codex-helper');
    await item.locator('.state', { hasText: 'running' }).waitFor({ timeout: 5_000 });
    assert.equal(await item.locator('.prompt').textContent(), 'tidy <script>up</script> the docs');
    // The new agent's log is followed at once: its output, and its prompt as one argument.
    const lines = page.locator('#fleet-log-lines');
    await lines.filter({ hasText: 'hello from the form' }).waitFor({ timeout: 5_000 });
    assert.match((await lines.textContent()) ?? '', /"exec","--json","--sandbox","workspace-write",.*"tidy <script>up<\/script> the docs"/);
    assert.equal(await page.locator('#fleet-log script').count(), 0);
    // Audited as asked for by the one signed in.
    const request = spawnRows(bus).find((row) => row.event === 'request');
    assert.deepEqual([request?.actor, request?.from, request?.to, request?.client], [PERSON, PERSON, 'shop/codex-helper', 'codex']);

    // The form says what the CLI says when it refuses: a label taken.
    await page.getByLabel('Label (empty: a generated one)').fill('helper');
    await page.getByLabel('Prompt', { exact: true }).fill('again');
    await page.getByRole('button', { name: 'Spawn', exact: true }).click();
    await page.locator('#fleet-result.error', { hasText: "spawn: shop/codex-helper was spawned before: pick another --label, or 'agent-bus resume' it" }).waitFor();

    // The API checks as the CLI does, and nothing is kept for what it refuses.
    const cookie = cookieFor(web.origin, web.key);
    for (const [body, expected] of [
      [{ client: 'codex', prompt: 'x' }, 'folder is required'],
      [{ client: 'codex', folder: repo, prompt: '  ' }, 'prompt is required'],
      [{ client: 'codex', folder: 'shop', prompt: 'x' }, "folder must be a repo's full path, got 'shop'"],
      [{ client: 'codex', folder: bus.dir, prompt: 'x' }, `spawn: '${bus.dir}' is in no git repo: give the folder of a repo`],
      [{ client: 'vim', folder: repo, prompt: 'x' }, "spawn: 'vim' is no client the bus can start: one of claude, codex, opencode, gemini, copilot, pi, qwen, cline"],
      [{ client: 'codex', folder: repo, prompt: 'x', yolo: 'yes' }, 'yolo must be true or false'],
    ] as const) {
      const refused = await post(web.origin, cookie, '/api/fleet/spawn', body);
      assert.equal(refused.status, 400, JSON.stringify(body));
      assert.equal(refused.error, expected);
    }
    assert.deepEqual(
      fleetOf(bus).map((spawn) => spawn.name),
      ['shop/codex-helper'],
    );
    assert.deepEqual(opened.errors, []);
  } finally {
    stopAll(bus);
    await opened.close();
    bus.cleanup();
  }
});

test('the Stop button stops a running agent as the signed-in person: its process ends and its exit shows as stopped', async () => {
  const bus = tempBus();
  const repo = repoIn(bus);
  const opened = await openFleet(bus, 'exit:0');
  const { page, web } = opened;
  try {
    const name = spawnByCli(bus, repo, 'say:waiting,sleep:60000', ['claude', '--prompt', 'wait for me', '--label', 'sleeper']);
    const item = itemOf(page, name);
    await item.locator('.state', { hasText: 'running' }).waitFor({ timeout: 5_000 });
    const pid = spawned(bus, name).pid as number;
    await page.getByRole('button', { name: `Stop ${name}` }).click();
    await page.locator('#fleet-result.ok', { hasText: `Stopped ${name}: exit 143 (stopped).` }).waitFor({ timeout: 20_000 });
    await item.locator('.state', { hasText: 'exited' }).waitFor({ timeout: 5_000 });
    assert.match((await item.locator('.exit').textContent()) ?? '', /^exit 143 \(stopped\) after /);
    assert.equal(await item.locator('button.stop').count(), 0);
    const record = spawned(bus, name);
    assert.deepEqual([record.state, record.exit_code, record.exit_category], ['exited', 143, 'stopped']);
    assert.ok(hasExited(pid), 'the agent still runs');
    const stop = spawnRows(bus).find((row) => row.event === 'stop');
    assert.deepEqual([stop?.actor, stop?.to], [PERSON, name]);
    // One that has ended is not stopped again: the CLI's own line.
    const again = await post(web.origin, cookieFor(web.origin, web.key), '/api/fleet/stop', { spawn_id: record.spawn_id });
    assert.equal(again.status, 400);
    assert.equal(again.error, `stop: ${name} has ended already: exit 143 (stopped)`);
    assert.equal((await post(web.origin, cookieFor(web.origin, web.key), '/api/fleet/stop', { spawn_id: 'nope' })).error, "no spawned agent 'nope' ('agent-bus agents' lists them)");
    assert.deepEqual(opened.errors, []);
  } finally {
    stopAll(bus);
    await opened.close();
    bus.cleanup();
  }
});

test("Activity shows the fleet's rows as sentences (spawned, started, stopped, exited, resumed), and its op filter picks them out", async () => {
  const bus = tempBus();
  const repo = repoIn(bus);
  const opened = await openFleet(bus, 'say:on it,sleep:60000');
  const { page } = opened;
  try {
    await page.getByText('Spawn an agent', { exact: true }).click();
    await page.getByLabel('Repo folder').fill(repo);
    await page.getByLabel('Label (empty: a generated one)').fill('worker');
    await page.getByLabel('Prompt', { exact: true }).fill('first part');
    await page.getByRole('button', { name: 'Spawn', exact: true }).click();
    await page.locator('#fleet-result.ok').waitFor({ timeout: 10_000 });
    const name = 'shop/claude-worker';
    await page.getByRole('button', { name: `Stop ${name}` }).click();
    await page.locator('#fleet-result.ok', { hasText: `Stopped ${name}` }).waitFor({ timeout: 20_000 });
    const session = (fleetOf(bus).find((spawn) => spawn.name === name) as Spawned & { session: string | null }).session;
    assert.ok(session !== null, 'no session was noted for the resume');
    const resumed = runCli(['resume', name, '--prompt', 'second part'], { env: agentEnv(bus, 'exit:0', { AGENT_BUS_NAME: 'lead' }), cwd: repo });
    assert.equal(resumed.code, 0, resumed.stderr);
    await waitUntil(() => spawnRows(bus).filter((row) => row.event === 'exit').length === 2, 'the resumed run to end');

    const feed = page.locator('#activity-list');
    const host = hostname();
    const pid = spawnRows(bus).find((row) => row.event === 'start')?.pid;
    const sentences: Array<[string, string | RegExp]> = [
      ['request', `${PERSON} spawned ${name} (claude on ${host})`],
      ['start', `${name} started as pid ${String(pid)} on ${host}`],
      ['stop', `${PERSON} stopped ${name}`],
      ['exit', `${name} exited: exit 143 (stopped)`],
      ['resume', `lead resumed ${name} on its session ${session}`],
      ['exit', `${name} exited: exit 0 (finished)`],
    ];
    for (const [event, words] of sentences) {
      const row = feed.locator(`li.op-spawn.spawn-${event}`, { hasText: words });
      await row.first().waitFor({ timeout: 5_000 });
      assert.equal(await row.first().locator('.op').textContent(), 'spawn');
    }
    // The prompt it carried is shown under its row, as text.
    assert.equal(await feed.locator('li.spawn-request .preview').first().textContent(), 'first part');
    assert.equal(await feed.locator('li.spawn-resume .preview').first().textContent(), 'second part');
    // Every fleet row the audit log holds is on the page, and the op filter shows only those.
    const rows = spawnRows(bus).length;
    assert.equal(rows, 7, JSON.stringify(spawnRows(bus).map((row) => row.event)));
    await page.getByLabel('Op', { exact: true }).selectOption('spawn');
    await page.waitForFunction((count) => {
      const shown = [...document.querySelectorAll('#activity-list li')];
      return shown.length === count && shown.every((row) => row.classList.contains('op-spawn'));
    }, rows);
    assert.deepEqual(opened.errors, []);
  } finally {
    stopAll(bus);
    await opened.close();
    bus.cleanup();
  }
});

test('the task form runs a task with a client: the task is made by the one signed in and a spawned agent holds it and closes it', async () => {
  const bus = tempBus();
  const repo = repoIn(bus);
  assert.equal(runCli(['init', '--clients', 'claude'], { env: bus.env, cwd: repo }).code, 0);
  const opened = await openFleet(bus, 'done,exit:0');
  const { page } = opened;
  try {
    await page.getByText('New task', { exact: true }).click();
    await page.getByLabel('Title', { exact: true }).fill('tidy the docs');
    await page.getByLabel('For', { exact: true }).fill('shop');
    await page.getByLabel(/^Run with/).selectOption('claude');
    await page.getByRole('button', { name: 'Create' }).click();
    const said = page.locator('#task-result.ok');
    await said.waitFor({ timeout: 10_000 });
    const [record] = fleetOf(bus);
    assert.ok(record !== undefined && record.task !== null, 'no agent was spawned for the task');
    assert.equal((await said.textContent()) ?? '', `Task ${shortId(record.task)} made for shop; ${record.name} was spawned to hold it.`);
    assert.equal(record.spawned_by, PERSON);
    const task = json<{ creator: string; state: string; holder: string; result: string | null }>(runCli(['task', 'show', record.task, '--json'], { env: bus.env }));
    assert.equal(task.creator, PERSON);
    // The agent closes it (the stand-in runs `task done` as itself), and the fleet view shows it held and finished.
    const item = itemOf(page, record.name);
    await item.locator('.exit', { hasText: 'exit 0 (finished)' }).waitFor({ timeout: 15_000 });
    assert.equal(await item.locator('.task').textContent(), `task ${shortId(record.task)}: tidy the docs`);
    const done = json<{ state: string; holder: string; result: string }>(runCli(['task', 'show', record.task, '--json'], { env: bus.env }));
    assert.deepEqual([done.state, done.holder, done.result], ['done', record.name, 'all green']);
    // A repo the bus knows no folder of: the CLI's line, and no task made.
    await page.getByLabel('Title', { exact: true }).fill('orphan');
    await page.getByLabel('For', { exact: true }).fill('nowhere');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.locator('#task-result.error').waitFor();
    assert.match((await page.locator('#task-result').textContent()) ?? '', /no agent or group named 'nowhere'|knows no folder of repo 'nowhere'/);
    const titles = json<Array<{ title: string }>>(runCli(['task', 'list', '--state', 'all', '--json'], { env: bus.env })).map((row) => row.title);
    assert.deepEqual(titles, ['tidy the docs'], 'a task was made for a repo with no folder');
    assert.deepEqual(opened.errors, []);
  } finally {
    stopAll(bus);
    await opened.close();
    bus.cleanup();
  }
});

test("on the hub the fleet is listed, and spawn, stop, logs and a task's run are refused in one line; nothing starts", async () => {
  const bus = tempBus();
  const repo = repoIn(bus);
  const hub = await startHub(bus, agentEnv(bus, 'exit:0'));
  const lead = createToken(bus, 'lead');
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  try {
    const name = spawnByCli(bus, repo, 'exit:0', ['claude', '--prompt', 'done at once', '--label', 'quick']);
    await waitUntil(() => spawned(bus, name).state === 'exited', `${name}'s exit recorded`, 10_000, 100);
    const page = await context.newPage();
    await page.goto(`${hub.url}/`);
    await page.getByLabel('Token').fill(lead.token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#whoami', { hasText: 'On the hub as lead' }).waitFor();
    await itemOf(page, name).locator('.exit', { hasText: 'exit 0 (finished)' }).waitFor({ timeout: 5_000 });
    assert.equal(await page.locator('#fleet-hub-note').isVisible(), true);
    assert.equal(await page.locator('#fleet-spawn').isVisible(), false, 'the spawn form is offered on the hub');
    assert.equal(await page.locator('#task-new-run-field').isVisible(), false);
    assert.equal(await page.locator('#fleet-list button').count(), 0, 'Log or Stop buttons on the hub');

    const cookie = cookieFor(hub.url, lead.token);
    const me = (await (await fetch(`${hub.url}/api/me`, { headers: { cookie } })).json()) as { may_spawn: boolean };
    assert.equal(me.may_spawn, false);
    const before = spawnRows(bus).length;
    const refusals: Array<[string, Record<string, unknown>, string]> = [
      ['/api/fleet/spawn', { client: 'claude', folder: repo, prompt: 'x' }, "spawn: this is the hub's dashboard, and the hub starts and ends no process for a request: spawn on the machine that is to run the agent ('agent-bus spawn', or 'agent-bus web' there)"],
      ['/api/fleet/stop', { spawn_id: spawned(bus, name).spawn_id }, "stop: this is the hub's dashboard, and the hub starts and ends no process for a request: stop it on the machine it runs on ('agent-bus stop NAME' there)"],
      ['/api/tasks/run', { client: 'claude', title: 'x', to: 'shop' }, "task add --run: this is the hub's dashboard, and the hub starts and ends no process for a request: make the task here, and run it on the machine that is to run the agent ('agent-bus task add … --run CLIENT' there)"],
    ];
    for (const [path, body, expected] of refusals) {
      const refused = await post(hub.url, cookie, path, body);
      assert.equal(refused.status, 400, path);
      assert.equal(refused.error, expected);
    }
    const log = await fetch(`${hub.url}/api/fleet/log?spawn_id=${spawned(bus, name).spawn_id}`, { headers: { cookie } });
    assert.equal(log.status, 400);
    assert.equal(((await log.json()) as { error: string }).error, "logs: this is the hub's dashboard, and the hub starts and ends no process for a request: read it on the machine it ran on ('agent-bus logs NAME' there)");
    assert.equal(spawnRows(bus).length, before, 'the hub asked for a spawn or a stop');
    assert.deepEqual(json<unknown[]>(runCli(['task', 'list', '--state', 'all', '--json'], { env: bus.env })), [], 'the hub made the task');
  } finally {
    await context.close();
    await hub.stop();
    bus.cleanup();
  }
});

test("on the hub, a token of the spawn scope reads the log of an agent a runner runs and stops it from the fleet view; one without it only looks", async () => {
  const bus = tempBus();
  const hub = await startHub(bus);
  const runnerToken = createToken(bus, 'shop/claude', ['--scope', 'spawn']).token;
  const lead = createToken(bus, 'lead', ['--scope', 'spawn']);
  const plain = createToken(bus, 'watcher');
  const repo = join(bus.dir, 'machine-box-9', 'src', 'shop');
  mkdirSync(join(repo, '.git'), { recursive: true });
  const runner = await startRunner(machineEnv(bus, hub, 'box-9', runnerToken, { AGENT_BUS_CLAUDE_BIN: FAKE_AGENT, FAKE_AGENT: 'say:runner hello,sleep:60000', AGENT_BUS_RUNNER_HEARTBEAT: '1' }), repo, 'box-9');
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  try {
    const asked = runCli(['spawn', 'claude', '--on', 'box-9', '--repo', 'shop', '--prompt', 'far away work', '--label', 'far'], { env: machineEnv(bus, hub, 'laptop', lead.token) });
    assert.equal(asked.code, 0, asked.stderr);
    const name = 'shop/claude-far';
    const cookie = cookieFor(hub.url, plain.token);
    const refused = await fetch(`${hub.url}/api/fleet/log?spawn_id=${spawned(bus, name).spawn_id}`, { headers: { cookie } });
    assert.equal(refused.status, 400);
    assert.match(((await refused.json()) as { error: string }).error, /runs under a runner, and this token has no spawn scope/);

    const page = await context.newPage();
    await page.goto(`${hub.url}/`);
    await page.getByLabel('Token').fill(lead.token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#whoami', { hasText: 'On the hub as lead' }).waitFor();
    const item = itemOf(page, name);
    await item.locator('.state', { hasText: 'running' }).waitFor({ timeout: 10_000 });
    assert.match((await item.textContent()) ?? '', /on box-9/);
    assert.equal(await page.locator('#fleet-spawn').isVisible(), false, 'no spawn form on the hub');
    await item.getByRole('button', { name: /log/i }).click();
    await page.locator('#fleet-log-lines', { hasText: 'runner hello' }).waitFor({ timeout: 10_000 });
    await item.getByRole('button', { name: `Stop ${name}` }).click();
    await page.getByText(`Asked the runner on box-9 to stop ${name}.`).waitFor({ timeout: 5_000 });
    await waitUntil(() => spawned(bus, name).state === 'exited', `${name}'s exit recorded`, 10_000, 100);
    assert.equal(spawned(bus, name).exit_category, 'stopped');
    assert.ok(spawnRows(bus).some((row) => row.event === 'stop' && row.actor === 'lead'), 'the stop is audited as the one signed in');
  } finally {
    await context.close();
    await killRunner(runner);
    await hub.stop();
    bus.cleanup();
  }
});
