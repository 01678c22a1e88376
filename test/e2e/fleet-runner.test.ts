/**
 * The fleet across machines: a real hub, a real `agent-bus runner` on a "machine" of its own (its own
 * home and bus folder, reaching the bus only through the hub with a token of the spawn scope), and a
 * person on a third, whose `spawn --on`, `agents`, `logs` and `stop` go through the hub. The client is
 * the stand-in agent, named by the runner machine's own executable setting.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { json, ROOT, runCli, runCliAsync } from '../helpers/bus-env.js';
import { connectHttp, createToken, withHub } from '../helpers/hub.js';
import { killRunner, machineEnv, startRunner, startRunnerWith } from '../helpers/runner.js';
import { waitUntil } from '../helpers/wait.js';

const FAKE_AGENT = join(ROOT, 'test', 'helpers', 'fake-agent.mjs');

interface Spawned {
  name: string;
  spawn_id: string;
  machine: string;
  state: string;
  pid: number | null;
  exit_category: string | null;
  exit_note: string | null;
  runner: string | null;
  spawned_by: string;
}

function fleet(env: NodeJS.ProcessEnv): Spawned[] {
  const agents = json<Array<{ name: string; spawned: Spawned | null }>>(runCli(['agents', '--json'], { env }));
  return agents.flatMap((agent) => (agent.spawned === null ? [] : [agent.spawned]));
}

function one(env: NodeJS.ProcessEnv, name: string): Spawned {
  const found = fleet(env).find((spawned) => spawned.name === name);
  assert.ok(found, `${name} is listed among the agents`);
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

test('spawn --on a runner\'s machine through the hub: it starts there under its repo\'s folder, its log reaches the asker, and a stop across machines ends it', withHub({}, async (bus, hub) => {
  const { token: runnerToken, id: runnerTokenId } = createToken(bus, 'shop/claude', ['--scope', 'spawn']);
  const askerToken = createToken(bus, 'ops/codex', ['--scope', 'spawn']).token;
  const plainToken = createToken(bus, 'ops/gemini').token;
  const runnerEnv = machineEnv(bus, hub, 'box-2', runnerToken, { AGENT_BUS_CLAUDE_BIN: FAKE_AGENT, FAKE_AGENT: 'say:remote hello,sleep:60000', AGENT_BUS_RUNNER_HEARTBEAT: '1' });
  const repo = join(bus.dir, 'machine-box-2', 'src', 'shop');
  mkdirSync(join(repo, '.git'), { recursive: true });
  const asker = machineEnv(bus, hub, 'laptop', askerToken);
  const runner = await startRunner(runnerEnv, repo, 'box-2');
  try {
    const started = runCli(['spawn', 'claude', '--on', 'box-2', '--repo', 'shop', '--prompt', 'run the slow suite', '--label', 'far'], { env: asker });
    assert.equal(started.code, 0, started.stderr);
    assert.equal(started.stdout, 'shop/claude-far\n');
    assert.match(started.stderr, /started claude on box-2 \(pid \d+\)/);
    const running = one(asker, 'shop/claude-far');
    assert.deepEqual([running.machine, running.state, running.runner, running.spawned_by], ['box-2', 'running', 'present', 'ops/codex']);
    // Its token speaks for all it offers (claude in shop), which it looked at before it took any work.
    await waitUntil(() => runner.said().includes('starting shop/claude-far'), 'the runner says it starts the agent');
    assert.doesNotMatch(runner.said(), /its token speaks for/);
    assert.ok(running.pid !== null && alive(running.pid), 'the agent runs on the runner\'s machine');
    // Its output, sent to the hub by the runner, read from the asker's machine.
    await waitUntil(() => runCli(['logs', 'shop/claude-far'], { env: asker }).stdout.includes('remote hello'), 'the log reaches the asker', 10_000, 200);
    const logs = runCli(['logs', 'shop/claude-far', '--lines', '50'], { env: asker }).stdout;
    assert.match(logs, /fake-agent name shop\/claude-far depth 1\n/, 'it runs as its name on the bus');
    assert.match(logs, new RegExp(`starting shop/claude-far: .* \\(in ${repo.replace(/[/.]/g, '\\$&')}\\)`), 'in the folder the runner offered for the repo');
    // On a quiet bus the runner and its supervisor wait at the hub: a few requests a second, never a busy loop (its own offers move the bus).
    const requests = async (): Promise<number> => Number(new RegExp(`agent_bus_token_requests_total\\{token_id="${runnerTokenId}"\\} (\\d+)`).exec(await (await fetch(`${hub.url}/metrics`)).text())?.[1]);
    const before = await requests();
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const quiet = (await requests()) - before;
    assert.ok(quiet < 45, `the runner made ${quiet} requests in 3 s of a quiet bus`);

    // What is refused: a token without the spawn scope, a machine with no runner, a repo or client it does not offer.
    const plain = runCli(['spawn', 'claude', '--on', 'box-2', '--repo', 'shop', '--prompt', 'x'], { env: machineEnv(bus, hub, 'other', plainToken) });
    assert.equal(plain.code, 1);
    assert.match(plain.stderr, /takes a token with the spawn scope/);
    const nowhere = runCli(['spawn', 'claude', '--on', 'nowhere', '--repo', 'shop', '--prompt', 'x'], { env: asker });
    assert.equal(nowhere.code, 1);
    assert.match(nowhere.stderr, /no runner is present on 'nowhere': runners are on box-2/);
    assert.match(runCli(['spawn', 'claude', '--on', 'box-2', '--repo', 'api', '--prompt', 'x'], { env: asker }).stderr, /runs agents in shop, not 'api'/);
    assert.match(runCli(['spawn', 'codex', '--on', 'box-2', '--repo', 'shop', '--prompt', 'x'], { env: asker }).stderr, /runs claude, not codex/);
    assert.equal(fleet(asker).length, 1, 'nothing refused was queued');

    const stopped = runCli(['stop', 'shop/claude-far'], { env: asker });
    assert.equal(stopped.code, 0, stopped.stderr);
    assert.match(stopped.stdout, /^stopped shop\/claude-far on box-2: SIGTERM \(stopped\)|^stopped shop\/claude-far on box-2: exit 143 \(stopped\)/);
    assert.equal(one(asker, 'shop/claude-far').exit_category, 'stopped');
    await waitUntil(() => !alive(running.pid as number), 'the agent\'s process is gone');

    // A task handed to an agent on another machine: its end with the task open fails it, with the log's last lines the runner sent.
    const task = json<{ id: string }>(runCli(['task', 'add', 'run the slow suite', '--to', 'shop', '--json'], { env: asker }));
    const holder = runCli(['spawn', 'claude', '--on', 'box-2', '--repo', 'shop', '--task', task.id, '--label', 'holder'], { env: asker });
    assert.equal(holder.code, 0, holder.stderr);
    const held = json<{ state: string; holder: string }>(runCli(['task', 'show', task.id, '--json'], { env: asker }));
    assert.deepEqual([held.state, held.holder], ['taken', 'shop/claude-holder']);
    await waitUntil(() => runCli(['logs', 'shop/claude-holder'], { env: asker }).stdout.includes('remote hello'), 'the holder has said its line', 10_000, 200);
    assert.equal(runCli(['stop', 'shop/claude-holder'], { env: asker }).code, 0);
    const waited = await runCliAsync(['task', 'wait', task.id, '--timeout', '10s'], { env: asker });
    assert.equal(waited.code, 5, waited.stdout + waited.stderr);
    const failed = json<{ state: string; result: string | null }>(runCli(['task', 'show', task.id, '--json'], { env: asker }));
    assert.equal(failed.state, 'failed');
    assert.match(failed.result ?? '', /shop\/claude-holder ended \(.*\(stopped\)\) without closing the task\.\nThe last lines of its log:\n(.*\n)*remote hello/);
    // The hub's audit log: the runner's offer, and the agent from its request to its exit.
    const audit = readFileSync(bus.audit, 'utf8');
    for (const event of ['runner', 'request', 'start', 'stop', 'exit']) assert.match(audit, new RegExp(`"op":"spawn"[^\\n]*"event":"${event}"`), event);
    assert.match(audit, /"op":"spawn","actor":"ops\/codex"[^\n]*"event":"request"/);
  } finally {
    await killRunner(runner);
  }
}));

test('a runner that goes away leaves its agents unknown, not gone; back, it takes the living one again and records how the other ended', withHub({}, async (bus, hub) => {
  const runnerToken = createToken(bus, 'shop/claude', ['--scope', 'spawn']).token;
  const askerToken = createToken(bus, 'ops/codex', ['--scope', 'spawn']).token;
  const runnerEnv = machineEnv(bus, hub, 'box-3', runnerToken, { AGENT_BUS_CLAUDE_BIN: FAKE_AGENT, FAKE_AGENT: 'sleep:60000', AGENT_BUS_RUNNER_HEARTBEAT: '1' });
  const repo = join(bus.dir, 'machine-box-3', 'src', 'shop');
  mkdirSync(join(repo, '.git'), { recursive: true });
  const asker = machineEnv(bus, hub, 'laptop', askerToken);
  let runner = await startRunner(runnerEnv, repo, 'box-3');
  const pids: number[] = [];
  try {
    for (const label of ['kept', 'lost']) {
      const started = runCli(['spawn', 'claude', '--on', 'box-3', '--repo', 'shop', '--prompt', 'long work', '--label', label], { env: asker });
      assert.equal(started.code, 0, started.stderr);
      const record = one(asker, `shop/claude-${label}`);
      assert.ok(record.state === 'running' && record.pid !== null, `${label} runs: ${JSON.stringify(record)}; spawn said ${started.stderr}; the runner said ${runner.said()}`);
      pids.push(record.pid);
    }
    await killRunner(runner);
    assert.ok(pids.every(alive), 'its agents run on without it');
    await waitUntil(() => fleet(asker).every((spawned) => spawned.state === 'unknown' && spawned.runner === 'away'), () => `the agents of an away runner are unknown: ${JSON.stringify(fleet(asker))}`, 10_000, 200);
    assert.match(runCli(['agents'], { env: asker }).stdout, /shop\/claude-kept +claude +unknown, runner away/);
    // One of them ends while nobody watches.
    process.kill(-(pids[1] as number), 'SIGKILL');
    await waitUntil(() => !alive(pids[1] as number), 'the lost one is gone');
    runner = await startRunner(runnerEnv, repo, 'box-3');
    await waitUntil(() => one(asker, 'shop/claude-lost').state === 'exited', 'the one that ended while the runner was away is recorded', 10_000, 200);
    const lost = one(asker, 'shop/claude-lost');
    assert.equal(lost.exit_category, 'failed');
    assert.match(lost.exit_note ?? '', /ended while its runner was away or restarting: its exit code is unknown/);
    const kept = one(asker, 'shop/claude-kept');
    assert.deepEqual([kept.state, kept.runner], ['running', 'present'], 'the living one is running again, its runner present');
    // Said on its standard error, read here as the event loop turns (the CLI calls above block it).
    await waitUntil(() => /adopting shop\/claude-kept/.test(runner.said()), 'the runner says it took the living one again');
    // A stop reaches the adopted one through its new runner.
    const stopped = runCli(['stop', 'shop/claude-kept', '--json'], { env: asker });
    assert.equal(stopped.code, 0, stopped.stderr);
    assert.equal(json<Spawned>(stopped).exit_category, 'stopped');
    await waitUntil(() => !alive(pids[0] as number), 'the adopted agent\'s process is gone');
  } finally {
    await killRunner(runner);
    for (const pid of pids) if (alive(pid)) process.kill(-pid, 'SIGKILL');
  }
}));

test('over the hub, spawn_agent starts a helper on the runner that offers the repo, agent_logs reads it and stop_agent ends it; without the spawn scope they are refused', withHub({}, async (bus, hub) => {
  const runnerToken = createToken(bus, 'shop/claude', ['--scope', 'spawn']).token;
  const leadToken = createToken(bus, 'shop/codex', ['--scope', 'spawn']).token;
  const plainToken = createToken(bus, 'shop/gemini').token;
  const runnerEnv = machineEnv(bus, hub, 'box-4', runnerToken, { AGENT_BUS_CLAUDE_BIN: FAKE_AGENT, FAKE_AGENT: 'say:helper here,sleep:60000', AGENT_BUS_RUNNER_HEARTBEAT: '1' });
  const repo = join(bus.dir, 'machine-box-4', 'src', 'shop');
  mkdirSync(join(repo, '.git'), { recursive: true });
  const runner = await startRunner(runnerEnv, repo, 'box-4');
  const lead = await connectHttp(hub.url, leadToken);
  const plain = await connectHttp(hub.url, plainToken);
  try {
    const asked = await lead.call('spawn_agent', { client: 'claude', prompt: 'write the changelog', label: 'helper' });
    assert.equal(asked.isError, false, asked.text);
    const spawned = asked.value as Spawned;
    assert.deepEqual([spawned.name, spawned.machine, spawned.spawned_by], ['shop/claude-helper', 'box-4', 'shop/codex']);
    await waitUntil(async () => ((await lead.call('agent_logs', { name: 'shop/claude-helper' })).value as { lines: string[] }).lines.includes('helper here'), 'the helper\'s output reaches the lead', 10_000, 200);
    for (const [tool, args] of [['spawn_agent', { client: 'claude', prompt: 'x' }], ['stop_agent', { name: 'shop/claude-helper' }], ['agent_logs', { name: 'shop/claude-helper' }]] as const) {
      const answer = await plain.call(tool, args);
      assert.equal(answer.isError, true, tool);
      assert.match(answer.text, /takes a token with the spawn scope/, tool);
    }
    const stopping = await lead.call('stop_agent', { name: 'shop/claude-helper' });
    assert.equal(stopping.isError, false, stopping.text);
    await waitUntil(async () => ((await lead.call('agent_logs', { name: 'shop/claude-helper' })).value as { state: string }).state === 'exited', () => `the helper has ended: ${runner.said()}`, 10_000, 200);
  } finally {
    await lead.close();
    await plain.close();
    await killRunner(runner);
  }
}));

test('spawn --on with --worktree: the runner makes each agent its own worktree of the repo on its machine, and an empty repo is refused', withHub({}, async (bus, hub) => {
  const runnerToken = createToken(bus, 'shop/claude', ['--scope', 'spawn']).token;
  const askerToken = createToken(bus, 'ops/codex', ['--scope', 'spawn']).token;
  const runnerEnv = machineEnv(bus, hub, 'box-5', runnerToken, { AGENT_BUS_CLAUDE_BIN: FAKE_AGENT, FAKE_AGENT: 'write:note.txt,sleep:60000', AGENT_BUS_RUNNER_HEARTBEAT: '1' });
  const repo = join(bus.dir, 'machine-box-5', 'src', 'shop');
  const empty = join(bus.dir, 'machine-box-5', 'src', 'empty');
  const git = (args: string[], cwd: string): void => {
    const result = spawnSync('git', args, { cwd, encoding: 'utf8', env: { ...runnerEnv, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' } });
    assert.equal(result.status, 0, result.stderr);
  };
  for (const folder of [repo, empty]) {
    mkdirSync(folder, { recursive: true });
    git(['init', '-q'], folder);
  }
  writeFileSync(join(repo, 'README'), 'shop\n');
  git(['add', 'README'], repo);
  git(['commit', '-qm', 'first'], repo);
  const asker = machineEnv(bus, hub, 'laptop', askerToken);
  const runner = await startRunnerWith(runnerEnv, [repo, empty], 'box-5');
  try {
    // Its token is shop/claude's: it says the agents of the other repo would not speak as their own names.
    await waitUntil(() => runner.said().includes('its token speaks for'), () => `the runner says whose token it holds: ${runner.said()}`);
    assert.match(runner.said(), /runner: its token speaks for shop\/claude: agents of empty\/claude started here would speak on the hub as shop\/claude, not as their own names, and could not close the tasks they hold; offer each from a runner whose token is its own \(agent-bus token create empty\/claude --scope spawn\), under another --name\n/);
    const folders: string[] = [];
    for (const label of ['left', 'right']) {
      const started = runCli(['spawn', 'claude', '--on', 'box-5', '--repo', 'shop', '--prompt', 'edit', '--label', label, '--worktree', '--json'], { env: asker });
      assert.equal(started.code, 0, started.stderr);
      const record = json<Spawned & { folder: string; worktree: boolean }>(started);
      assert.equal(record.worktree, true);
      assert.equal(record.folder, join(bus.dir, 'machine-box-5', 'bus', 'fleet', 'worktrees', 'shop', label), 'its folder is its worktree on the runner\'s machine');
      folders.push(record.folder);
    }
    for (const [index, label] of ['left', 'right'].entries()) {
      const note = join(folders[index] as string, 'note.txt');
      await waitUntil(() => existsSync(note), `${label} wrote in its own checkout`);
      assert.equal(readFileSync(note, 'utf8'), `written by shop/claude-${label} in ${folders[index]}\n`);
      const branch = spawnSync('git', ['branch', '--show-current'], { cwd: folders[index], encoding: 'utf8' }).stdout.trim();
      assert.equal(branch, `agent/${label}`);
    }
    assert.equal(existsSync(join(repo, 'note.txt')), false, 'nothing was written in the repo\'s own checkout');
    const refused = runCli(['spawn', 'claude', '--on', 'box-5', '--repo', 'empty', '--prompt', 'edit', '--label', 'nowhere', '--worktree'], { env: asker });
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /could not start on box-5: --worktree needs a repo with at least one commit/);
    for (const label of ['left', 'right']) assert.equal(runCli(['stop', `shop/claude-${label}`], { env: asker }).code, 0);
  } finally {
    await killRunner(runner);
  }
}));

test('--restart on-failure through a runner: a crash is started again on the runner\'s machine, its new run\'s log reaches the asker, and at the limit the spawner is told', withHub({}, async (bus, hub) => {
  const runnerToken = createToken(bus, 'shop/claude', ['--scope', 'spawn']).token;
  const askerToken = createToken(bus, 'ops/codex', ['--scope', 'spawn']).token;
  const runnerEnv = machineEnv(bus, hub, 'box-6', runnerToken, { AGENT_BUS_CLAUDE_BIN: FAKE_AGENT, FAKE_AGENT: 'say:crashing now,exit:3', AGENT_BUS_RUNNER_HEARTBEAT: '1' });
  const repo = join(bus.dir, 'machine-box-6', 'src', 'shop');
  mkdirSync(join(repo, '.git'), { recursive: true });
  const asker = machineEnv(bus, hub, 'laptop', askerToken);
  const runner = await startRunner(runnerEnv, repo, 'box-6');
  try {
    const started = runCli(['spawn', 'claude', '--on', 'box-6', '--repo', 'shop', '--prompt', 'work', '--label', 'crashy', '--restart', 'on-failure', '--max-restarts', '1'], { env: asker });
    assert.equal(started.code, 0, started.stderr);
    await waitUntil(() => {
      const latest = one(asker, 'shop/claude-crashy') as Spawned & { restarts: number };
      return latest.restarts === 1 && latest.state === 'exited';
    }, () => `the restarted run has ended: ${JSON.stringify(one(asker, 'shop/claude-crashy'))}; the runner said ${runner.said()}`, 20_000, 200);
    const latest = one(asker, 'shop/claude-crashy') as Spawned & { restarts: number; machine: string };
    assert.deepEqual([latest.machine, latest.exit_category], ['box-6', 'failed']);
    // The new run's own log, sent by the runner.
    await waitUntil(() => /crashing now[\s\S]*exited: exit 3 \(failed\)/.test(runCli(['logs', 'shop/claude-crashy'], { env: asker }).stdout), 'the restarted run\'s log reaches the asker', 10_000, 200);
    const audit = readFileSync(bus.audit, 'utf8');
    assert.match(audit, /"op":"spawn"[^\n]*"event":"restart"/);
    // At the limit, the spawner is told once.
    await waitUntil(() => /crashed \(exit 3 \(failed\)\) after 1 restart, the most --max-restarts allows/.test(runCli(['inbox', '--json'], { env: asker }).stdout), 'the spawner is told', 10_000, 200);
  } finally {
    await killRunner(runner);
  }
}));
