/**
 * `spawn --tmux` through the real CLI and a real tmux server of the test's own (TMUX_TMPDIR in its
 * temp folder, killed after): the client (the stand-in agent) runs interactive in a new window named
 * after the agent, its prompt one argument; `spawn` prints the address and, on stderr, the command
 * that shows the window; the pane's output is the agent's log; its exit is recorded with its code and
 * the window closes; `stop` ends it as any spawn; `resume` opens a window again; a machine without
 * tmux is one line and a kept exit record; through a hub or with --on it is refused.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { CLI, json, ROOT, runCli, withTempBus, type TempBus } from '../helpers/bus-env.js';
import { waitUntil } from '../helpers/wait.js';
import { exitedOf, spawnedOf } from '../helpers/fleet.js';

const FAKE_AGENT = join(ROOT, 'test', 'helpers', 'fake-agent.mjs');
const skip = spawnSync('tmux', ['-V']).status === 0 ? false : 'needs tmux';

interface Spawned {
  name: string;
  state: string;
  pid: number | null;
  log: string;
  exit_code: number | null;
  exit_signal: string | null;
  exit_category: string | null;
  exit_note: string | null;
  tmux: { socket: string | null; session: string | null; window: string | null; pane: string | null } | null;
}

function repoIn(bus: TempBus): string {
  const repo = join(bus.dir, 'shop');
  mkdirSync(join(repo, '.git'), { recursive: true });
  return repo;
}

/** The bus's environment with its own tmux server's folder, and the stand-in as Claude Code doing `steps`. */
function agentEnv(bus: TempBus, steps: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  // tmux takes TMUX_TMPDIR only where that folder is: else the machine's own server would be used.
  mkdirSync(join(bus.dir, 'tmux'), { recursive: true });
  return { ...bus.env, TMUX_TMPDIR: join(bus.dir, 'tmux'), AGENT_BUS_CLAUDE_BIN: FAKE_AGENT, FAKE_AGENT: steps, FAKE_AGENT_CLI: CLI, ...extra };
}

/** The test's tmux server, asked directly. */
function tmux(bus: TempBus, ...args: string[]): { code: number | null; out: string; err: string } {
  mkdirSync(join(bus.dir, 'tmux'), { recursive: true });
  const result = spawnSync('tmux', args, { env: { PATH: bus.env.PATH, HOME: bus.env.HOME, TMUX_TMPDIR: join(bus.dir, 'tmux') }, encoding: 'utf8' });
  return { code: result.status, out: result.stdout, err: result.stderr };
}

/** Every window of the test's server: `<window id> <session name> <window name> <pane pid>`; none when no server runs. */
function windows(bus: TempBus): string[] {
  const listed = tmux(bus, 'list-windows', '-a', '-F', '#{window_id} #{session_name} #{window_name} #{pane_pid}');
  return listed.code === 0 ? listed.out.split('\n').filter(Boolean) : [];
}

const spawned = (bus: TempBus, name: string): Spawned => spawnedOf<Spawned>(bus, name);

const exited = (bus: TempBus, name: string, timeoutMs = 15_000): Promise<Spawned> => exitedOf<Spawned>(bus, name, timeoutMs);

/** A test with its own tmux server, killed after whatever happened. */
function withTmux(work: (bus: TempBus) => Promise<void>): () => Promise<void> {
  return withTempBus(async (bus) => {
    try {
      await work(bus);
    } finally {
      tmux(bus, 'kill-server');
    }
  });
}

test('spawn --tmux: a window named after the agent runs the client interactive on its prompt; the attach command, the pane\'s output in the log, the exit with its code, and the window closed', { skip }, withTmux(async (bus) => {
  const repo = repoIn(bus);
  const prompt = 'make the login test pass; leave $HOME, "#{session_name}" and `ls` be;';
  const result = runCli(['spawn', 'claude', '--tmux', '--prompt', prompt, '--label', 'fixer'], { env: agentEnv(bus, 'say:hello from the pane,sleep:2000,exit:3'), cwd: repo });
  assert.equal(result.code, 0, result.stderr);
  assert.equal(result.stdout, 'shop/claude-fixer\n');
  const running = spawned(bus, 'shop/claude-fixer');
  assert.equal(running.state, 'running');
  assert.ok(running.tmux?.window && running.tmux.pane && running.tmux.session && running.tmux.socket, `agents --json shows its window: ${JSON.stringify(running.tmux)}`);
  const window = running.tmux.window;
  // One line on stderr: the window, and the command that shows it, which tmux takes.
  assert.match(result.stderr, new RegExp(`^started claude \\(pid ${running.pid}\\) in tmux window ${window}, named shop/claude-fixer; watch it: tmux attach -t ${window}; stop it: agent-bus stop shop/claude-fixer\\n$`));
  // No tmux ran before: the window is in a new session `agent-bus`, named after the agent, its pane the recorded pid.
  assert.deepEqual(windows(bus), [`${window} agent-bus shop/claude-fixer ${running.pid}`]);
  assert.equal(tmux(bus, 'display-message', '-p', '-t', window, '#{window_name}').out, 'shop/claude-fixer\n', 'the attach target is its window');
  // What a person opens in that session is not the agent.
  assert.doesNotMatch(tmux(bus, 'show-environment', '-t', 'agent-bus').out, /AGENT_BUS_NAME/);
  assert.doesNotMatch(tmux(bus, 'show-environment', '-g').out, /AGENT_BUS_NAME/);
  // A second agent while the session is there: a window of its own beside the first.
  const second = runCli(['spawn', 'claude', '--tmux', '--prompt', 'the second', '--label', 'second'], { env: agentEnv(bus, 'exit:0'), cwd: repo });
  assert.equal(second.code, 0, second.stderr);
  assert.ok(windows(bus).some((line) => line.endsWith(` agent-bus shop/claude-fixer ${running.pid}`)), 'the first still runs');
  assert.equal((await exited(bus, 'shop/claude-second')).exit_category, 'finished');

  const after = await exited(bus, 'shop/claude-fixer');
  assert.equal(after.exit_code, 3, 'the code the client exited with');
  assert.equal(after.exit_category, 'failed');
  assert.equal(after.exit_note, null);
  await waitUntil(() => windows(bus).length === 0, 'its window closed');
  const log = runCli(['logs', 'shop/claude-fixer'], { env: bus.env });
  assert.equal(log.code, 0, log.stderr);
  // The client's interactive mode in its safe mode, the prompt one argument after --, its name and depth: all printed in its pane.
  assert.ok(log.stdout.includes(`fake-agent args ${JSON.stringify(['--permission-mode', 'acceptEdits', '--allowedTools', 'mcp__agent-bus', '--', prompt])}`), log.stdout);
  assert.match(log.stdout, /fake-agent name shop\/claude-fixer depth 1\r?\n/);
  assert.match(log.stdout, /hello from the pane\r?\n/);
  assert.match(log.stdout, /\[agent-bus\] exited: exit 3 \(failed\)\n$/);
  assert.match(runCli(['agents'], { env: bus.env }).stdout, /shop\/claude-fixer +claude +failed \(exit 3\).* tmux/);
}));

test('stop ends an agent in tmux as any spawn (the polite signal, else the kill), recorded as stopped, and its window closes; spawned inside tmux, the window is in that session; a window closed by hand ends it with SIGHUP', { skip }, withTmux(async (bus) => {
  const repo = repoIn(bus);
  // A person's own session; spawn runs in its pane.
  assert.equal(tmux(bus, 'new-session', '-d', '-s', 'mine', '--', 'sleep', '600').code, 0);
  const pane = tmux(bus, 'display-message', '-p', '-t', 'mine', '#{pane_id}').out.trim();
  const socket = tmux(bus, 'display-message', '-p', '-t', 'mine', '#{socket_path}').out.trim();
  const inside = agentEnv(bus, 'say:waiting,sleep:60000', { TMUX: `${socket},1,0`, TMUX_PANE: pane });
  const result = runCli(['spawn', 'claude', '--tmux', '--prompt', 'wait here', '--label', 'waiter'], { env: inside, cwd: repo });
  assert.equal(result.code, 0, result.stderr);
  const running = spawned(bus, 'shop/claude-waiter');
  const window = running.tmux?.window ?? '';
  assert.match(result.stderr, new RegExp(`watch it: tmux switch-client -t ${window};`));
  assert.ok(windows(bus).includes(`${window} mine shop/claude-waiter ${running.pid}`), `in the person's session: ${windows(bus).join(' | ')}`);
  await waitUntil(() => /waiting/.test(runCli(['logs', 'shop/claude-waiter'], { env: bus.env }).stdout), 'the agent running');

  const stop = runCli(['stop', 'shop/claude-waiter'], { env: bus.env });
  assert.equal(stop.code, 0, stop.stderr);
  assert.match(stop.stdout, /^stopped shop\/claude-waiter: exit 143 \(stopped\) after \d+\.\ds\n$/);
  const after = spawned(bus, 'shop/claude-waiter');
  assert.deepEqual([after.state, after.exit_code, after.exit_category], ['exited', 143, 'stopped']);
  await waitUntil(() => !windows(bus).some((line) => line.startsWith(`${window} `)), 'its window closed');
  assert.equal(windows(bus).length, 1, "the person's own window stays");
  assert.match(runCli(['logs', 'shop/claude-waiter'], { env: bus.env }).stdout, /fake-agent got SIGTERM\r?\n/);

  // One that holds out past the grace period: the kill, recorded as stopped, and the window closes.
  const stubborn = agentEnv(bus, 'ignore-term,say:holding out,sleep:60000', { AGENT_BUS_STOP_GRACE: '1s' });
  assert.equal(runCli(['spawn', 'claude', '--tmux', '--prompt', 'hold', '--label', 'stubborn'], { env: stubborn, cwd: repo }).code, 0);
  const held = spawned(bus, 'shop/claude-stubborn').tmux?.window ?? '';
  await waitUntil(() => /holding out/.test(runCli(['logs', 'shop/claude-stubborn'], { env: bus.env }).stdout), 'the agent running');
  const kill = runCli(['stop', 'shop/claude-stubborn'], { env: { ...bus.env, AGENT_BUS_STOP_GRACE: '1s' } });
  assert.equal(kill.code, 0, kill.stderr);
  assert.match(kill.stdout, /^stopped shop\/claude-stubborn: SIGKILL \(stopped\)/);
  await waitUntil(() => !windows(bus).some((line) => line.startsWith(`${held} `)), 'its window closed');

  // A window a person closes: the client gets the hangup, and its exit is recorded as that.
  assert.equal(runCli(['spawn', 'claude', '--tmux', '--prompt', 'wait', '--label', 'closed'], { env: agentEnv(bus, 'say:open,sleep:60000'), cwd: repo }).code, 0);
  await waitUntil(() => /open/.test(runCli(['logs', 'shop/claude-closed'], { env: bus.env }).stdout), 'the agent running');
  assert.equal(tmux(bus, 'kill-window', '-t', spawned(bus, 'shop/claude-closed').tmux?.window ?? '?').code, 0);
  const closed = await exited(bus, 'shop/claude-closed');
  assert.deepEqual([closed.exit_code, closed.exit_signal, closed.exit_category], [null, 'SIGHUP', 'signal']);
}));

test('a task an agent in tmux leaves open fails with its exit and the last lines of its pane', { skip }, withTmux(async (bus) => {
  const repo = repoIn(bus);
  runCli(['init', '--clients', 'claude'], { env: bus.env, cwd: repo });
  const made = json<{ id: string }>(runCli(['task', 'add', 'a task left open', '--to', 'shop', '--json'], { env: bus.env, cwd: repo }));
  const result = runCli(['spawn', 'claude', '--tmux', '--task', made.id, '--label', 'quitter'], { env: agentEnv(bus, 'say:giving up here,exit:2'), cwd: repo });
  assert.equal(result.code, 0, result.stderr);
  const failed = runCli(['task', 'wait', made.id, '--timeout', '20s'], { env: bus.env });
  assert.equal(failed.code, 5, failed.stderr + failed.stdout);
  const shown = json<{ state: string; result: string }>(runCli(['task', 'show', made.id, '--json'], { env: bus.env }));
  assert.equal(shown.state, 'failed');
  assert.match(shown.result, /^shop\/claude-quitter ended \(exit 2 \(failed\)\) without closing the task\./);
  assert.match(shown.result, /\ngiving up here$/, 'the pane\'s line as it reads, without the terminal\'s carriage return');
}));

test('resume of an agent spawned in tmux opens a window again, interactive on its own session', { skip }, withTmux(async (bus) => {
  const repo = repoIn(bus);
  assert.equal(runCli(['spawn', 'claude', '--tmux', '--prompt', 'first', '--label', 'again'], { env: agentEnv(bus, 'exit:0'), cwd: repo }).code, 0);
  const first = await exited(bus, 'shop/claude-again');
  assert.equal(first.exit_category, 'finished');
  const session = /"session_id":"(fake-session-\d+)"/.exec(readFileSync(first.log, 'utf8'))?.[1];
  assert.ok(session, 'its output named its session');
  const resumed = runCli(['resume', 'shop/claude-again', '--prompt', 'go on'], { env: agentEnv(bus, 'say:resumed,sleep:1500,exit:0'), cwd: repo });
  assert.equal(resumed.code, 0, resumed.stderr);
  const running = spawned(bus, 'shop/claude-again');
  assert.ok(running.tmux?.window, 'in a tmux window again');
  assert.match(resumed.stderr, new RegExp(`^resumed claude session ${session}: started claude .* in tmux window ${running.tmux.window}, named shop/claude-again; watch it: tmux attach -t ${running.tmux.window}\\n$`));
  assert.ok(windows(bus).includes(`${running.tmux.window} agent-bus shop/claude-again ${running.pid}`), windows(bus).join(' | '));
  const after = await exited(bus, 'shop/claude-again');
  assert.equal(after.exit_category, 'finished');
  assert.ok(readFileSync(after.log, 'utf8').includes(`fake-agent args ${JSON.stringify(['--resume', session, '--permission-mode', 'acceptEdits', '--allowedTools', 'mcp__agent-bus', '--', 'go on'])}`));
}));

test('without tmux on PATH: one line, exit 1, naming it and the PATH searched; the exit record and the log are kept', withTmux(async (bus) => {
  const repo = repoIn(bus);
  // A PATH with node and nothing else.
  const bin = join(bus.dir, 'bin');
  mkdirSync(bin);
  symlinkSync(process.execPath, join(bin, 'node'));
  const result = runCli(['spawn', 'claude', '--tmux', '--prompt', 'hello', '--label', 'nowhere'], { env: agentEnv(bus, 'exit:0', { PATH: bin }), cwd: repo });
  assert.equal(result.code, 1);
  const lines = result.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, result.stderr);
  assert.match(lines[0] as string, new RegExp(`^agent-bus: spawn: cannot start claude in tmux: no executable 'tmux' on PATH \\(${bin}\\); its log is /.+\\.log$`));
  const record = spawned(bus, 'shop/claude-nowhere');
  assert.deepEqual([record.state, record.exit_category], ['exited', 'start-failed']);
  assert.match(readFileSync(record.log, 'utf8'), /could not start: no executable 'tmux' on PATH/);
  assert.deepEqual(windows(bus), [], 'no window was made');
}));

test('--tmux is refused with one line and exit 2 through a hub, and with --on; nothing is asked for', withTmux(async (bus) => {
  const repo = repoIn(bus);
  const hub = { ...agentEnv(bus, 'exit:0'), AGENT_BUS_URL: 'http://127.0.0.1:9', AGENT_BUS_TOKEN: 'a-token' };
  const overHub = runCli(['spawn', 'claude', '--tmux', '--prompt', 'x'], { env: hub, cwd: repo });
  assert.equal(overHub.code, 2);
  assert.equal(overHub.stderr, 'agent-bus: spawn: --tmux opens a tmux window on this machine, and this machine spawns through the hub at http://127.0.0.1:9: spawn without --tmux\n');
  const on = runCli(['spawn', 'claude', '--tmux', '--on', 'build-box', '--prompt', 'x'], { env: hub, cwd: repo });
  assert.equal(on.code, 2);
  assert.equal(on.stderr, 'agent-bus: spawn: --tmux opens a tmux window on this machine: it does not go with --on\n');
  assert.equal(json<unknown[]>(runCli(['agents', '--json'], { env: bus.env })).length, 0, 'nothing was kept');
  assert.deepEqual(windows(bus), []);
}));

test("a pane's client that cannot start: one printable line naming it quoted, and its failure kept for the supervisor", withTempBus((bus) => {
  const exitFile = join(bus.dir, 'pane.exit');
  const executable = 'no-such-client\u001b[31m\u202e\r\nforged line';
  const result = runCli(['tmux-pane', exitFile, '--', executable, 'a prompt'], { env: bus.env });
  assert.equal(result.code, 1);
  const lines = result.stderr.split('\n').filter((line) => line !== '');
  assert.equal(lines.length, 1, result.stderr);
  assert.match(lines[0] as string, /^agent-bus: could not start 'no-such-client\\u001b\[31m\\u202e\\u000d\\u000aforged line': /);
  for (const raw of ['\u001b', '\u202e', '\r']) assert.ok(!result.stderr.includes(raw), `no raw ${JSON.stringify(raw)} on stderr`);
  const ending = JSON.parse(readFileSync(exitFile, 'utf8')) as { code: number | null; error: string | null };
  assert.equal(ending.code, null);
  assert.match(ending.error ?? '', /ENOENT/);
}));
