/**
 * The fleet through the real CLI: `spawn` starts a client (a stand-in here, named by the client's
 * executable setting) under a detached supervisor and returns at once with the agent's address; the
 * agent's output is in a private log `logs` reads; its exit is recorded with its code and category,
 * in `agents` and the audit log; `stop` ends it within the grace period; a missing executable is one
 * clear line and a kept log; the machine's limit queues the rest; a task handed over comes back, and
 * one left open fails with the exit's reason.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { CLI, json, ROOT, runCli, withTempBus, type TempBus } from '../helpers/bus-env.js';
import { waitUntil } from '../helpers/wait.js';
import { exitedOf, spawnedOf } from '../helpers/fleet.js';
import { connect } from '../helpers/mcp.js';
import { connectHttp, createToken, withHub } from '../helpers/hub.js';

const FAKE_AGENT = join(ROOT, 'test', 'helpers', 'fake-agent.mjs');

interface Spawned {
  name: string;
  spawn_id: string;
  state: string;
  pid: number | null;
  log: string;
  exit_code: number | null;
  exit_signal: string | null;
  exit_category: string | null;
  exit_note: string | null;
  yolo: boolean;
  task: string | null;
}

function repoIn(bus: TempBus): string {
  const repo = join(bus.dir, 'shop');
  mkdirSync(join(repo, '.git'), { recursive: true });
  return repo;
}

/** The bus's environment with the stand-in as Claude Code and Codex, doing `steps`. */
function agentEnv(bus: TempBus, steps: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { ...bus.env, AGENT_BUS_CLAUDE_BIN: FAKE_AGENT, AGENT_BUS_CODEX_BIN: FAKE_AGENT, FAKE_AGENT: steps, FAKE_AGENT_CLI: CLI, ...extra };
}

const spawned = (bus: TempBus, name: string): Spawned => spawnedOf<Spawned>(bus, name);

const exited = (bus: TempBus, name: string, timeoutMs = 10_000): Promise<Spawned> => exitedOf<Spawned>(bus, name, timeoutMs);

test('spawn returns at once with the address; the agent runs as that name, its log is private, and its exit is recorded with its code', withTempBus(async (bus) => {
  const repo = repoIn(bus);
  const env = agentEnv(bus, 'say:working on it,sleep:1500,exit:3');
  const started = Date.now();
  const result = runCli(['spawn', 'claude', '--prompt', 'fix the login test', '--label', 'fixer'], { env, cwd: repo });
  assert.equal(result.code, 0, result.stderr);
  assert.equal(result.stdout, 'shop/claude-fixer\n');
  assert.ok(Date.now() - started < 1500, 'spawn returned before the agent ended');
  assert.match(result.stderr, /started claude \(pid \d+\)/);
  const running = spawned(bus, 'shop/claude-fixer');
  assert.equal(running.state, 'running');
  assert.ok(running.pid !== null);
  const after = await exited(bus, 'shop/claude-fixer');
  assert.equal(after.exit_code, 3);
  assert.equal(after.exit_category, 'failed');
  assert.equal(statSync(after.log).mode & 0o777, 0o600, 'the log is private');
  assert.equal(statSync(join(after.log, '..')).mode & 0o777, 0o700, 'in a private folder');
  const logs = runCli(['logs', 'shop/claude-fixer'], { env: bus.env });
  assert.equal(logs.code, 0, logs.stderr);
  // The client's safe mode, its prompt as one argument, and the name and depth the bus gave it.
  assert.match(logs.stdout, /fake-agent args \["-p","fix the login test","--output-format","stream-json","--verbose","--permission-mode","acceptEdits","--allowedTools","mcp__agent-bus"\]/);
  assert.match(logs.stdout, /fake-agent name shop\/claude-fixer depth 1\n/);
  assert.match(logs.stdout, /working on it\n/);
  assert.match(logs.stdout, /\[agent-bus\] exited: exit 3 \(failed\)\n$/);
  assert.equal(runCli(['logs', 'shop/claude-fixer', '--lines', '1'], { env: bus.env }).stdout, '[agent-bus] exited: exit 3 (failed)\n');
  const audit = readFileSync(bus.audit, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);
  const events = audit.filter((row) => row.op === 'spawn').map((row) => `${row.event}:${row.to}`);
  assert.deepEqual(events, ['request:shop/claude-fixer', 'start:shop/claude-fixer', 'exit:shop/claude-fixer']);
  assert.equal(audit.find((row) => row.event === 'exit')?.exit_code, 3);
  // A label once spawned is not taken again.
  const again = runCli(['spawn', 'claude', '--prompt', 'again', '--label', 'fixer'], { env, cwd: repo });
  assert.equal(again.code, 1);
  assert.match(again.stderr, /^agent-bus: spawn: shop\/claude-fixer was spawned before/);
}));

test('a generated label reads as a word, never as a session number; --yolo passes the bypass and is shown', withTempBus(async (bus) => {
  const repo = repoIn(bus);
  const result = runCli(['spawn', 'codex', '--prompt', 'tidy up', '--yolo', '--json'], { env: agentEnv(bus, 'exit:0'), cwd: repo });
  assert.equal(result.code, 0, result.stderr);
  const made = json<Spawned>(result);
  assert.match(made.name, /^shop\/codex-[a-z][a-z0-9]{4}$/);
  assert.equal(made.yolo, true);
  const after = await exited(bus, made.name);
  assert.equal(after.exit_category, 'finished');
  assert.equal(after.yolo, true);
  const log = runCli(['logs', made.name], { env: bus.env }).stdout;
  assert.match(log, /"exec","--json","--dangerously-bypass-approvals-and-sandbox","tidy up"/);
}));

test('a client whose executable is missing: exit 1 with one line naming it and the PATH searched; the log and the exit record are kept', withTempBus(async (bus) => {
  const repo = repoIn(bus);
  const env = { ...bus.env, AGENT_BUS_CLAUDE_BIN: 'no-such-claude' };
  const result = runCli(['spawn', 'claude', '--prompt', 'hello', '--label', 'ghost'], { env, cwd: repo });
  assert.equal(result.code, 1);
  const lines = result.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, result.stderr);
  assert.match(lines[0] as string, /^agent-bus: spawn: cannot start claude: no executable 'no-such-claude' on PATH \(.+\); its log is \/.+\.log$/);
  assert.ok(lines[0]?.includes(bus.env.PATH as string), 'the PATH searched is named');
  const record = spawned(bus, 'shop/claude-ghost');
  assert.equal(record.state, 'exited');
  assert.equal(record.exit_category, 'start-failed');
  assert.match(readFileSync(record.log, 'utf8'), /could not start: no executable 'no-such-claude'/);
  // Bad input is refused before anything is kept.
  const unknown = runCli(['spawn', 'vim', '--prompt', 'x'], { env, cwd: repo });
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /'vim' is no client the bus can start: one of claude, codex, opencode, gemini, copilot, pi, qwen, cline/);
  const noPrompt = runCli(['spawn', 'claude'], { env, cwd: repo });
  assert.equal(noPrompt.code, 2);
  assert.match(noPrompt.stderr, /give the agent its prompt/);
  const deep = runCli(['spawn', 'claude', '--prompt', 'x'], { env: { ...agentEnv(bus, 'exit:0'), AGENT_BUS_SPAWN_DEPTH: '2', AGENT_BUS_NAME: 'shop/claude-deep' }, cwd: repo });
  assert.equal(deep.code, 1);
  assert.match(deep.stderr, /spawned agents go 2 deep at most \(AGENT_BUS_MAX_SPAWN_DEPTH\): nothing was started/);
}));

test('stop: a polite signal, then the kill after the grace period; the exit is recorded as stopped', withTempBus(async (bus) => {
  const repo = repoIn(bus);
  const env = agentEnv(bus, 'sleep:60000');
  assert.equal(runCli(['spawn', 'claude', '--prompt', 'wait', '--label', 'polite'], { env, cwd: repo }).code, 0);
  await waitUntil(() => /fake-agent name/.test(runCli(['logs', 'shop/claude-polite'], { env: bus.env }).stdout), 'the agent running');
  const stop = runCli(['stop', 'shop/claude-polite'], { env: bus.env });
  assert.equal(stop.code, 0, stop.stderr);
  assert.match(stop.stdout, /^stopped shop\/claude-polite: exit 143 \(stopped\) after \d+\.\ds\n$/);
  const stubborn = agentEnv(bus, 'ignore-term,sleep:60000', { AGENT_BUS_STOP_GRACE: '1s' });
  assert.equal(runCli(['spawn', 'claude', '--prompt', 'wait', '--label', 'stubborn'], { env: stubborn, cwd: repo }).code, 0);
  await waitUntil(() => /fake-agent name/.test(runCli(['logs', 'shop/claude-stubborn'], { env: bus.env }).stdout), 'the agent running');
  const started = Date.now();
  const kill = runCli(['stop', 'shop/claude-stubborn'], { env: { ...bus.env, AGENT_BUS_STOP_GRACE: '1s' } });
  assert.equal(kill.code, 0, kill.stderr);
  assert.match(kill.stdout, /SIGKILL \(stopped\)/);
  assert.ok(Date.now() - started < 8000, 'within the grace period and a little');
  assert.match(runCli(['logs', 'shop/claude-stubborn'], { env: bus.env }).stdout, /fake-agent ignores SIGTERM/);
  const twice = runCli(['stop', 'shop/claude-stubborn'], { env: bus.env });
  assert.equal(twice.code, 1);
  assert.match(twice.stderr, /has ended already: SIGKILL \(stopped\)/);
  assert.equal(runCli(['stop', 'shop/claude-nobody'], { env: bus.env }).code, 1);
}));

test('beyond AGENT_BUS_MAX_SPAWNED a spawn queues, is shown queued, and starts when a slot frees: five spawns with a limit of 4', withTempBus(async (bus) => {
  const repo = repoIn(bus);
  const env = agentEnv(bus, 'sleep:2500', { AGENT_BUS_MAX_SPAWNED: '4' });
  for (const label of ['one', 'two', 'three', 'four']) assert.equal(runCli(['spawn', 'claude', '--prompt', 'work', '--label', label], { env, cwd: repo }).code, 0);
  const fifth = runCli(['spawn', 'claude', '--prompt', 'work', '--label', 'five'], { env: { ...env, FAKE_AGENT: 'exit:0' }, cwd: repo });
  assert.equal(fifth.code, 0, fifth.stderr);
  assert.match(fifth.stderr, /^queued: 4 spawned agents run on this machine/);
  assert.equal(spawned(bus, 'shop/claude-five').state, 'queued');
  assert.match(runCli(['agents'], { env: bus.env }).stdout, /shop\/claude-five +claude +queued/);
  const after = await exited(bus, 'shop/claude-five', 15_000);
  assert.equal(after.exit_category, 'finished');
  const firstFour = ['one', 'two', 'three', 'four'].map((label) => spawned(bus, `shop/claude-${label}`));
  assert.ok(firstFour.some((spawn) => spawn.state === 'exited'), 'it started only once another had ended');
  // Every one ends before the bus's folder goes: their supervisors write their logs to the last.
  for (const label of ['one', 'two', 'three', 'four']) await exited(bus, `shop/claude-${label}`);
}));

test('a spawned agent whose process is killed fails the task it held, with the exit as the reason', withTempBus(async (bus) => {
  const repo = repoIn(bus);
  runCli(['init', '--clients', 'claude'], { env: bus.env, cwd: repo });
  const made = json<{ id: string }>(runCli(['task', 'add', 'a task whose agent is killed', '--to', 'shop', '--json'], { env: bus.env, cwd: repo }));
  assert.equal(runCli(['spawn', 'claude', '--task', made.id, '--label', 'victim'], { env: agentEnv(bus, 'say:working,sleep:60000'), cwd: repo }).code, 0);
  await waitUntil(() => /working/.test(runCli(['logs', 'shop/claude-victim'], { env: bus.env }).stdout), 'the agent is at work');
  // Killed from outside, as the OOM killer or a person would: the client alone, not its group.
  const clientPid = Number(/fake-agent pid (\d+)/.exec(runCli(['logs', 'shop/claude-victim'], { env: bus.env }).stdout)?.[1]);
  assert.ok(clientPid > 0 && clientPid !== spawned(bus, 'shop/claude-victim').pid, 'the client, not the shell that leads its group');
  process.kill(clientPid, 'SIGKILL');
  const failed = runCli(['task', 'wait', made.id, '--timeout', '20s'], { env: bus.env });
  assert.equal(failed.code, 5, failed.stderr + failed.stdout);
  const shown = json<{ state: string; result: string }>(runCli(['task', 'show', made.id, '--json'], { env: bus.env }));
  assert.equal(shown.state, 'failed');
  assert.match(shown.result, /^shop\/claude-victim ended \(exit 137 \(oom\)\) without closing the task\.\nThe last lines of its log:\n(.*\n)*working/);
}));

test('a task handed to a spawned agent: closed by the agent, its result comes back; left open at its exit, it fails with the reason', withTempBus(async (bus) => {
  const repo = repoIn(bus);
  runCli(['init', '--clients', 'claude'], { env: bus.env, cwd: repo });
  const made = json<{ id: string }>(runCli(['task', 'add', 'make the tests pass', '--to', 'shop', '--json'], { env: bus.env, cwd: repo }));
  const result = runCli(['spawn', 'claude', '--task', made.id, '--label', 'worker'], { env: agentEnv(bus, 'done,exit:0'), cwd: repo });
  assert.equal(result.code, 0, result.stderr);
  const waited = runCli(['task', 'wait', made.id, '--timeout', '20s'], { env: bus.env });
  assert.equal(waited.code, 0, waited.stderr + waited.stdout);
  const done = json<{ state: string; result: string; holder: string }>(runCli(['task', 'show', made.id, '--json'], { env: bus.env }));
  assert.deepEqual([done.state, done.result, done.holder], ['done', 'all green', 'shop/claude-worker']);

  const second = json<{ id: string }>(runCli(['task', 'add', 'a task left open', '--to', 'shop', '--json'], { env: bus.env, cwd: repo }));
  assert.equal(runCli(['spawn', 'claude', '--task', second.id, '--label', 'quitter'], { env: agentEnv(bus, 'say:giving up here,exit:2'), cwd: repo }).code, 0);
  const failed = runCli(['task', 'wait', second.id, '--timeout', '20s'], { env: bus.env });
  assert.equal(failed.code, 5, failed.stderr + failed.stdout);
  const shown = json<{ state: string; result: string }>(runCli(['task', 'show', second.id, '--json'], { env: bus.env }));
  assert.equal(shown.state, 'failed');
  assert.match(shown.result, /^shop\/claude-quitter ended \(exit 2 \(failed\)\) without closing the task\.\nThe last lines of its log:\n/);
  assert.match(shown.result, /giving up here/);
  // The creator is told, as for any failed task.
  assert.match(runCli(['inbox'], { env: bus.env }).stdout, /failed: a task left open/);
}));

test('task add --run: the task made and an agent spawned to hold it, in the folder the bus knows for the repo', withTempBus(async (bus) => {
  const repo = repoIn(bus);
  runCli(['init', '--clients', 'claude'], { env: bus.env, cwd: repo });
  const elsewhere = join(bus.dir, 'elsewhere');
  mkdirSync(elsewhere);
  const made = runCli(['task', 'add', 'tidy the docs', '--to', 'shop', '--run', 'claude', '--label', 'tidier', '--json'], { env: agentEnv(bus, 'done,exit:0'), cwd: elsewhere });
  assert.equal(made.code, 0, made.stderr);
  const task = JSON.parse(made.stdout) as { id: string; state: string; holder: string; spawned: Spawned };
  assert.equal(task.spawned.name, 'shop/claude-tidier');
  assert.equal(task.spawned.task, task.id);
  assert.deepEqual([task.state, task.holder], ['taken', 'shop/claude-tidier']);
  const waited = runCli(['task', 'wait', task.id, '--timeout', '20s'], { env: bus.env });
  assert.equal(waited.code, 0, waited.stderr + waited.stdout);
  assert.match(runCli(['logs', 'shop/claude-tidier'], { env: bus.env }).stdout, /fake-agent done 0/);
  // A repo the bus knows no folder of: refused, and no task is made.
  const unknown = runCli(['task', 'add', 'orphan', '--to', 'nowhere', '--run', 'claude'], { env: agentEnv(bus, 'exit:0'), cwd: elsewhere });
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /no agent or group named 'nowhere'|knows no folder of repo 'nowhere'/);
  assert.deepEqual(json<unknown[]>(runCli(['task', 'list', '--state', 'all', '--json'], { env: bus.env })).filter((row) => (row as { title: string }).title === 'orphan'), []);
  // A client that cannot start: the task stands, offered, and the line says so.
  const failed = runCli(['task', 'add', 'no client', '--to', 'shop', '--run', 'claude'], { env: { ...bus.env, AGENT_BUS_CLAUDE_BIN: 'no-such-claude' }, cwd: elsewhere });
  assert.equal(failed.code, 1);
  assert.match(failed.stderr, /^agent-bus: spawn: cannot start claude: .*; task [0-9a-f]{12} was made, and is offered to shop\n$/);
}));

test('the MCP tools: an agent spawns a helper of another client, reads its output and stops it; over the hub they are refused', withTempBus(async (bus) => {
  const repo = repoIn(bus);
  const mcp = await connect({ ...agentEnv(bus, 'say:helper here,sleep:60000'), AGENT_BUS_NAME: 'shop/claude-lead' }, { cwd: repo });
  try {
    const spawned = await mcp.call<Spawned>('spawn_agent', { client: 'codex', prompt: 'write the changelog', label: 'helper' });
    assert.equal(spawned.name, 'shop/codex-helper');
    assert.equal(spawned.state, 'running');
    await waitUntil(async () => (await mcp.call<{ lines: string[] }>('agent_logs', { name: 'shop/codex-helper' })).lines.includes('helper here'), 'the helper has said its line');
    const logs = await mcp.call<{ name: string; state: string; lines: string[] }>('agent_logs', { name: 'shop/codex-helper', lines: 2 });
    assert.deepEqual([logs.name, logs.state, logs.lines.length], ['shop/codex-helper', 'running', 2]);
    // It is one level deeper, and spawned by the agent that asked.
    assert.match((await mcp.call<{ lines: string[] }>('agent_logs', { name: 'shop/codex-helper', lines: 10 })).lines.join('\n'), /fake-agent name shop\/codex-helper depth 1/);
    const stopped = await mcp.call<Spawned>('stop_agent', { name: 'shop/codex-helper' });
    assert.deepEqual([stopped.state, stopped.exit_category], ['exited', 'stopped']);
    assert.match(await mcp.fails('spawn_agent', { client: 'codex' }), /give the agent a prompt, or a task to hold/);
    assert.match(await mcp.fails('stop_agent', { name: 'shop/codex-helper' }), /has ended already/);
    const audit = readFileSync(bus.audit, 'utf8');
    assert.match(audit, /"op":"spawn","actor":"shop\/claude-lead"[^\n]*"event":"request"/);
  } finally {
    await mcp.close();
  }
}));

test('over the hub, spawn_agent, stop_agent and agent_logs are refused to a token without the spawn scope, and nothing is asked', withHub({}, async (bus, hub) => {
  const { token } = createToken(bus, 'shop/claude');
  const remote = await connectHttp(hub.url, token);
  try {
    for (const [tool, args] of [['spawn_agent', { client: 'claude', prompt: 'x' }], ['stop_agent', { name: 'shop/claude-x' }], ['agent_logs', { name: 'shop/claude-x' }]] as const) {
      const answer = await remote.call(tool, args);
      assert.equal(answer.isError, true, tool);
      assert.match(answer.text, /takes a token with the spawn scope/, tool);
    }
    assert.equal(readFileSync(bus.audit, 'utf8').includes('"op":"spawn"'), false, 'nothing was asked for');
  } finally {
    await remote.close();
  }
}));

test('resume: an agent that ended starts again on its own session, with a new prompt; one still running, or with no session known, is refused', withTempBus(async (bus) => {
  const repo = repoIn(bus);
  assert.equal(runCli(['spawn', 'claude', '--prompt', 'first part', '--label', 'worker'], { env: agentEnv(bus, 'exit:0'), cwd: repo }).code, 0);
  const first = await exited(bus, 'shop/claude-worker');
  const session = (first as Spawned & { session: string | null }).session;
  assert.match(session ?? '', /^fake-session-\d+$/, 'the session its output named is kept');
  const resumed = runCli(['resume', 'shop/claude-worker', '--prompt', 'second part'], { env: agentEnv(bus, 'sleep:60000'), cwd: repo });
  assert.equal(resumed.code, 0, resumed.stderr);
  assert.equal(resumed.stdout, 'shop/claude-worker\n');
  assert.match(resumed.stderr, new RegExp(`resumed claude session ${session}`));
  // The client's own line (the bus's "starting" line, written before it, names the flags too).
  await waitUntil(() => /fake-agent args .*"--resume"/.test(runCli(['logs', 'shop/claude-worker'], { env: bus.env }).stdout), 'the resumed run');
  assert.match(runCli(['logs', 'shop/claude-worker'], { env: bus.env }).stdout, new RegExp(`fake-agent args \\["-p","second part","--resume","${session}"`));
  const still = runCli(['resume', 'shop/claude-worker'], { env: agentEnv(bus, 'exit:0'), cwd: repo });
  assert.equal(still.code, 1);
  assert.match(still.stderr, /is running: only an agent that has ended is resumed/);
  assert.equal(runCli(['stop', 'shop/claude-worker'], { env: bus.env }).code, 0);
  const audit = readFileSync(bus.audit, 'utf8');
  assert.match(audit, /"event":"resume"[^\n]*"session":"fake-session-/);
  // A client whose session only its hooks name (Copilot CLI's output is not read for it), here with no hooks run, cannot be resumed.
  assert.equal(runCli(['spawn', 'copilot', '--prompt', 'x', '--label', 'quiet'], { env: { ...agentEnv(bus, 'exit:0'), AGENT_BUS_COPILOT_BIN: FAKE_AGENT }, cwd: repo }).code, 0);
  await exited(bus, 'shop/copilot-quiet');
  const unknown = runCli(['resume', 'shop/copilot-quiet'], { env: bus.env, cwd: repo });
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /no session of shop\/copilot-quiet is known/);
}));

test('a supervisor killed under its agent: agents says so, and stop ends the agent itself and records the exit', withTempBus(async (bus) => {
  const repo = repoIn(bus);
  runCli(['init', '--clients', 'claude'], { env: bus.env, cwd: repo });
  const held = json<{ id: string }>(runCli(['task', 'add', 'a task its agent keeps', '--to', 'shop', '--json'], { env: bus.env, cwd: repo }));
  assert.equal(runCli(['spawn', 'claude', '--task', held.id, '--label', 'orphan'], { env: agentEnv(bus, 'sleep:60000'), cwd: repo }).code, 0);
  const running = spawned(bus, 'shop/claude-orphan') as Spawned & { supervisor: string; supervisor_gone: boolean | null };
  assert.equal(running.supervisor_gone, false);
  const supervisorPid = Number(running.supervisor.split('/')[1]);
  process.kill(supervisorPid, 'SIGKILL');
  await waitUntil(() => (spawned(bus, 'shop/claude-orphan') as Spawned & { supervisor_gone: boolean | null }).supervisor_gone === true, 'the supervisor seen gone');
  assert.match(runCli(['agents'], { env: bus.env }).stdout, /shop\/claude-orphan +claude +running \d+s, supervisor gone/);
  const agentPid = running.pid as number;
  assert.doesNotThrow(() => process.kill(agentPid, 0), 'the agent runs on without its supervisor');
  const stop = runCli(['stop', 'shop/claude-orphan'], { env: { ...bus.env, AGENT_BUS_STOP_GRACE: '2s' } });
  assert.equal(stop.code, 0, stop.stderr);
  assert.match(stop.stdout, /^stopped shop\/claude-orphan: SIGTERM \(stopped\)/);
  const after = spawned(bus, 'shop/claude-orphan');
  assert.deepEqual([after.state, after.exit_category, after.exit_note], ['exited', 'stopped', 'its supervisor was gone: stop ended it, and its exit code is unknown']);
  // Its task fails with the exit, as at any exit.
  const task = json<{ state: string; result: string }>(runCli(['task', 'show', held.id, '--json'], { env: bus.env }));
  assert.equal(task.state, 'failed');
  assert.match(task.result, /^shop\/claude-orphan ended \(SIGTERM \(stopped\): its supervisor was gone/);
  await waitUntil(() => {
    try {
      process.kill(agentPid, 0);
      return false;
    } catch {
      return true;
    }
  }, 'the agent ended');
}));

test('--worktree: two agents in one repo edit separate checkouts on branches of their own; stop --clean removes a clean one and keeps one with work in it', withTempBus(async (bus) => {
  const repo = join(bus.dir, 'shop');
  mkdirSync(repo);
  const git = (...args: string[]) => spawnSync('git', ['-c', 'user.email=a@b.c', '-c', 'user.name=t', ...args], { cwd: repo, encoding: 'utf8' });
  git('init', '-q');
  // A repo with no commit cannot have a worktree: refused, and nothing is started.
  const empty = runCli(['spawn', 'claude', '--prompt', 'x', '--worktree'], { env: agentEnv(bus, 'exit:0'), cwd: repo });
  assert.equal(empty.code, 1);
  assert.match(empty.stderr, /--worktree needs a repo with at least one commit/);
  writeFileSync(join(repo, 'README.md'), 'shop\n');
  git('add', '.');
  git('commit', '-q', '-m', 'first');
  runCli(['init', '--clients', 'claude'], { env: bus.env, cwd: repo });
  for (const label of ['left', 'right']) {
    const made = runCli(['spawn', 'claude', '--prompt', 'edit', '--label', label, '--worktree'], { env: agentEnv(bus, `write:${label}.txt,exit:0`), cwd: repo });
    assert.equal(made.code, 0, made.stderr);
    assert.equal(made.stdout, `shop/claude-${label}\n`, 'the address keeps the repo');
  }
  const [left, right] = [await exited(bus, 'shop/claude-left'), await exited(bus, 'shop/claude-right')];
  const leftFolder = (left as Spawned & { folder: string }).folder;
  const rightFolder = (right as Spawned & { folder: string }).folder;
  assert.notEqual(leftFolder, rightFolder);
  assert.match(readFileSync(join(leftFolder, 'left.txt'), 'utf8'), new RegExp(`written by shop/claude-left in ${leftFolder}`));
  assert.ok(!existsSync(join(leftFolder, 'right.txt')) && !existsSync(join(repo, 'left.txt')) && !existsSync(join(repo, 'right.txt')), 'each edited its own checkout, the repo none');
  assert.ok(existsSync(join(leftFolder, '.mcp.json')), "the client's wiring is there, so the agent is on the bus");
  // task add --run --worktree: the agent that holds the task works in a checkout of its own too.
  const task = runCli(['task', 'add', 'edit in a checkout', '--to', 'shop', '--run', 'claude', '--label', 'tasked', '--worktree', '--json'], { env: agentEnv(bus, 'write:tasked.txt,exit:0'), cwd: repo });
  assert.equal(task.code, 0, task.stderr);
  const taskedFolder = (await exited(bus, 'shop/claude-tasked') as Spawned & { folder: string; worktree: boolean }).folder;
  assert.equal(taskedFolder, join(dirname(leftFolder), 'tasked'));
  assert.match(readFileSync(join(taskedFolder, 'tasked.txt'), 'utf8'), new RegExp(`written by shop/claude-tasked in ${taskedFolder}`));
  assert.ok(!existsSync(join(repo, 'tasked.txt')), 'nothing in the repo\'s own checkout');
  assert.match(git('branch', '--list', 'agent/*').stdout, /agent\/left[\s\S]*agent\/right/);
  // One with work left in it is kept, and the line says what; one whose work is committed is removed, its branch kept.
  const kept = runCli(['stop', 'shop/claude-left', '--clean'], { env: bus.env });
  assert.equal(kept.code, 0, kept.stderr);
  assert.match(kept.stdout, /kept its worktree .*: 1 uncommitted change \(left\.txt\)/);
  assert.ok(existsSync(leftFolder));
  spawnSync('git', ['-c', 'user.email=a@b.c', '-c', 'user.name=t', 'add', 'right.txt'], { cwd: rightFolder });
  spawnSync('git', ['-c', 'user.email=a@b.c', '-c', 'user.name=t', 'commit', '-q', '-m', 'right'], { cwd: rightFolder });
  const removed = runCli(['stop', 'shop/claude-right', '--clean'], { env: bus.env });
  assert.equal(removed.code, 0, removed.stderr);
  assert.match(removed.stdout, /removed its worktree .* \(its branch agent\/right stays\)/);
  assert.ok(!existsSync(rightFolder));
  assert.match(git('log', '--oneline', 'agent/right').stdout, / right\n/);
}));

test('--restart on-failure: a crash starts the agent again on its own session after a growing cooldown, up to --max-restarts; then its spawner is told once', withTempBus(async (bus) => {
  const repo = repoIn(bus);
  const usage = runCli(['spawn', 'claude', '--prompt', 'x', '--restart', 'always'], { env: agentEnv(bus, 'exit:0'), cwd: repo });
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /--restart takes on-failure, not 'always'/);
  assert.equal(runCli(['spawn', 'claude', '--prompt', 'x', '--max-restarts', '2'], { env: agentEnv(bus, 'exit:0'), cwd: repo }).code, 2);
  const made = runCli(['spawn', 'claude', '--prompt', 'work', '--label', 'crashy', '--restart', 'on-failure', '--max-restarts', '2'], { env: agentEnv(bus, 'exit:3'), cwd: repo });
  assert.equal(made.code, 0, made.stderr);
  const first = await exited(bus, 'shop/claude-crashy');
  const session = (first as Spawned & { session: string }).session;
  type Restarted = Spawned & { restarts: number; max_restarts: number; restart: string | null };
  await waitUntil(() => {
    const latest = spawned(bus, 'shop/claude-crashy') as Restarted;
    return latest.restarts === 2 && latest.state === 'exited';
  }, 'two restarts, both crashed', 20_000, 100);
  const last = spawned(bus, 'shop/claude-crashy') as Restarted;
  assert.deepEqual([last.restart, last.max_restarts, last.exit_category], ['on-failure', 2, 'failed']);
  // Each restart continued the first run's session.
  assert.match(runCli(['logs', 'shop/claude-crashy'], { env: bus.env }).stdout, new RegExp(`"--resume","${session}"`));
  const rows = readFileSync(bus.audit, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>);
  assert.deepEqual(rows.filter((row) => row.op === 'spawn' && row.to === 'shop/claude-crashy').map((row) => row.event), ['request', 'start', 'exit', 'restart', 'start', 'exit', 'restart', 'start', 'exit']);
  const told = (): string[] =>
    json<Array<{ from: string; body: string }>>(runCli(['inbox', '--peek', '--json'], { env: bus.env }))
      .filter((message) => message.from === 'agent-bus')
      .map((message) => message.body);
  await waitUntil(() => told().length > 0, 'the spawner told');
  assert.deepEqual(told(), ['[agent-bus] shop/claude-crashy crashed (exit 3 (failed)) after 2 restarts, the most --max-restarts allows: it is not started again. Its output: agent-bus logs shop/claude-crashy'], 'told once');
  assert.match(runCli(['agents'], { env: bus.env }).stdout, /shop\/claude-crashy .*restarts 2\/2/);
  // A finish is not a crash: nothing starts again.
  assert.equal(runCli(['spawn', 'claude', '--prompt', 'done', '--label', 'fine', '--restart', 'on-failure'], { env: agentEnv(bus, 'exit:0'), cwd: repo }).code, 0);
  const fine = await exited(bus, 'shop/claude-fine');
  assert.equal(fine.exit_category, 'finished');
  await new Promise((resolve) => setTimeout(resolve, 1500));
  assert.equal((spawned(bus, 'shop/claude-fine') as Restarted).restarts, 0, 'not restarted');
}));

test('a queued agent whose supervisor is gone is shown so, and stop records it stopped at once, failing the task it held', withTempBus(async (bus) => {
  const repo = repoIn(bus);
  const env = agentEnv(bus, 'sleep:60000', { AGENT_BUS_MAX_SPAWNED: '1' });
  runCli(['init', '--clients', 'claude'], { env: bus.env, cwd: repo });
  assert.equal(runCli(['spawn', 'claude', '--prompt', 'hold the slot', '--label', 'first'], { env, cwd: repo }).code, 0);
  const task = json<{ id: string }>(runCli(['task', 'add', 'waits its turn', '--to', 'shop', '--json'], { env: bus.env, cwd: repo }));
  const queued = runCli(['spawn', 'claude', '--task', task.id, '--label', 'second'], { env, cwd: repo });
  assert.equal(queued.code, 0, queued.stderr);
  try {
    await waitUntil(() => spawned(bus, 'shop/claude-second').state === 'queued' && (spawned(bus, 'shop/claude-second') as Spawned & { supervisor: string | null }).supervisor !== null, 'the queued one names its waiting supervisor');
    const supervisor = (spawned(bus, 'shop/claude-second') as Spawned & { supervisor: string }).supervisor;
    const pid = Number(supervisor.split('/')[1]);
    process.kill(pid, 'SIGKILL');
    await waitUntil(() => (spawned(bus, 'shop/claude-second') as Spawned & { supervisor_gone: boolean | null }).supervisor_gone === true, 'the queue shows its supervisor gone');
    assert.match(runCli(['agents'], { env: bus.env }).stdout, /shop\/claude-second +claude +queued, supervisor gone/);
    const started = Date.now();
    const stopped = runCli(['stop', 'shop/claude-second', '--json'], { env: bus.env });
    assert.equal(stopped.code, 0, stopped.stderr);
    assert.ok(Date.now() - started < 5_000, 'stop did not wait for a supervisor that is gone');
    const record = json<Spawned>(stopped);
    assert.deepEqual([record.state, record.exit_category, record.exit_note], ['exited', 'stopped', 'stopped before it started; its supervisor was gone']);
    const shown = json<{ state: string; result: string }>(runCli(['task', 'show', task.id, '--json'], { env: bus.env }));
    assert.equal(shown.state, 'failed');
  } finally {
    runCli(['stop', 'shop/claude-first'], { env: bus.env });
  }
}));

test('a stop right after spawn, while the supervisor is still starting up, ends the agent and records it stopped', withTempBus(async (bus) => {
  const repo = repoIn(bus);
  for (const label of ['early', 'earlier']) {
    assert.equal(runCli(['spawn', 'claude', '--prompt', 'wait', '--label', label], { env: agentEnv(bus, 'sleep:60000'), cwd: repo }).code, 0);
    const stop = runCli(['stop', `shop/claude-${label}`, '--json'], { env: bus.env });
    assert.equal(stop.code, 0, stop.stderr);
    const record = json<Spawned>(stop);
    assert.deepEqual([record.state, record.exit_category], ['exited', 'stopped']);
    const shellPid = record.pid as number;
    await waitUntil(() => {
      try {
        process.kill(-shellPid, 0);
        return false;
      } catch {
        return true;
      }
    }, `${label}'s process group has ended`);
  }
}));
