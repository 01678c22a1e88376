/**
 * Claude Code spawned interactive in tmux (`spawn --tmux`) in a repo wired by our init, against a
 * scripted model, on a tmux server of the test's own (TMUX_TMPDIR in its temp folder, killed after):
 * the window is named after the agent, its first turn carries the prompt, and once the session is
 * idle, mail sent to the agent wakes it as any interactive session is woken (its MCP server posts to
 * the session's inbox socket) and the next model request carries the mail. `stop` then ends it: the
 * exit recorded as stopped, and the window gone. The same when an agent's Claude Code session spawns
 * it from inside a person's tmux session: the window is in that session, and the client in it starts
 * with the new agent's name and none of its spawner's session variables.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli, type TempBus } from '../helpers/bus-env.js';
import { spawnedOf } from '../helpers/fleet.js';
import { sleep, waitUntil } from '../helpers/wait.js';
import { claude, claudeOffline } from './drivers.js';
import { assertReceiptsHonest, CLIENT_BIN, endInteractive, mailBody, modelSaw, wiredRepo, type WiredRepo } from './harness.js';
import { firstRunsDone, interactiveSkip } from './interactive.js';

interface Spawned {
  state: string;
  pid: number | null;
  exit_code: number | null;
  exit_signal: string | null;
  exit_category: string | null;
  tmux: { socket: string | null; session: string | null; window: string | null; pane: string | null } | null;
}

const AGENT = 'shop/claude-pane';

/** The test's own tmux server's folder: tmux takes TMUX_TMPDIR only where that folder is. */
function tmuxFolder(bus: TempBus): string {
  const folder = join(bus.dir, 'tmux');
  mkdirSync(folder, { recursive: true });
  return folder;
}

/** The test's tmux server, asked directly. */
function tmux(bus: TempBus, ...args: string[]): { code: number | null; out: string } {
  const result = spawnSync('tmux', args, { env: { PATH: bus.env.PATH, HOME: bus.env.HOME, TMUX_TMPDIR: tmuxFolder(bus) }, encoding: 'utf8' });
  return { code: result.status, out: result.stdout ?? '' };
}

/** Every window of the test's server: `<window id> <session name> <window name>`; none when no server runs. */
function windows(bus: TempBus): string[] {
  const listed = tmux(bus, 'list-windows', '-a', '-F', '#{window_id} #{session_name} #{window_name}');
  return listed.code === 0 ? listed.out.split('\n').filter(Boolean) : [];
}

/** The environment the client was started with: that of the one child of the pane's process (`agent-bus tmux-pane`). */
function clientEnvironment(panePid: number): Map<string, string> {
  const children = spawnSync('pgrep', ['-P', String(panePid)], { encoding: 'utf8' }).stdout.split('\n').filter((pid) => pid.trim() !== '');
  assert.equal(children.length, 1, `the pane's process ${panePid} runs the client: children ${children.join(' ') || 'none'}`);
  const variables = new Map<string, string>();
  for (const entry of readFileSync(`/proc/${(children[0] as string).trim()}/environ`, 'utf8').split('\0')) {
    const at = entry.indexOf('=');
    if (at > 0) variables.set(entry.slice(0, at), entry.slice(at + 1));
  }
  return variables;
}

/** The agent's session in the presence table: 'busy', 'idle', or null before its hooks said anything. */
function presenceOf(bus: TempBus): string | null {
  return bus.rows<{ state: string }>(`SELECT state FROM presence WHERE name = '${AGENT}'`)[0]?.state ?? null;
}

/** How the agent's session is watched, by its watcher rows: 'socket', 'watch' or 'refused'. */
function wakeWays(bus: TempBus): string[] {
  return bus.rows<{ way: string }>(`SELECT COALESCE(way, 'watch') AS way FROM watchers WHERE agent = '${AGENT}' ORDER BY session`).map((row) => row.way);
}

/**
 * What a Claude Code session's Bash tool gives the commands it runs, and the variables it gives its hooks and
 * servers: an agent that spawns another from its own session has them in its environment.
 */
function parentSession(s: WiredRepo): NodeJS.ProcessEnv {
  return {
    CLAUDECODE: '1',
    CLAUDE_CODE_ENTRYPOINT: 'cli',
    CLAUDE_CODE_SESSION_ID: '00000000-0000-4000-8000-000000000000',
    CLAUDE_PROJECT_DIR: s.repo,
    CLAUDE_CODE_MESSAGING_SOCKET: join(s.bus.dir, 'parent-session.sock'),
    CLAUDE_CODE_MESSAGING_TOKEN: 'the-parent-sessions-token',
    AGENT_BUS_NAME: 'shop/claude',
  };
}

/**
 * Where `spawn` runs: from a plain shell outside tmux (the window in a session `agent-bus` of a server it
 * starts), or from a Claude Code session's Bash tool inside a person's tmux session, on a server started
 * where that session's variables were set (its window there, on the server's environment).
 */
type From = 'outside' | 'agent-in-tmux';

async function spawnedInTmux(from: From): Promise<void> {
  const s = wiredRepo('claude');
  firstRunsDone(s);
  const model = await claude.startModel(() => ({ text: 'noted' }));
  const prompt = `FLEET-TMUX-PROMPT-${Date.now().toString(36)} look around the repo`;
  const mail = mailBody('FLEET-TMUX-WAKE-MARKER please check');
  const env: NodeJS.ProcessEnv = { ...s.bus.env, ...claudeOffline(model.url), AGENT_BUS_CLAUDE_BIN: join(CLIENT_BIN, 'claude'), TMUX_TMPDIR: tmuxFolder(s.bus) };
  // The session its window goes in, and the windows there beside it (the person's own).
  let where = { session: 'agent-bus', others: 0 };
  const pane = (): string => {
    const window = spawnedOf<Spawned>(s.bus, AGENT).tmux?.window ?? '';
    return window === '' ? '' : tmux(s.bus, 'capture-pane', '-p', '-t', window).out;
  };
  const seen = (): string => `\nthe pane shows:\n${pane()}\nits log:\n${runCli(['logs', AGENT, '--lines', '40'], { env: s.bus.env }).stdout}`;
  try {
    if (from === 'agent-in-tmux') {
      const server = spawnSync('tmux', ['new-session', '-d', '-s', 'mine', '--', 'sleep', '600'], { env: { PATH: s.bus.env.PATH, HOME: s.bus.env.HOME, TMUX_TMPDIR: tmuxFolder(s.bus), ...parentSession(s) } });
      assert.equal(server.status, 0, String(server.stderr));
      const personPane = tmux(s.bus, 'display-message', '-p', '-t', 'mine', '#{pane_id}').out.trim();
      const socket = tmux(s.bus, 'display-message', '-p', '-t', 'mine', '#{socket_path}').out.trim();
      Object.assign(env, parentSession(s), { TMUX: `${socket},1,0`, TMUX_PANE: personPane });
      where = { session: 'mine', others: 1 };
    }
    const spawned = runCli(['spawn', 'claude', '--tmux', '--prompt', prompt, '--label', 'pane'], { env, cwd: s.repo });
    assert.equal(spawned.code, 0, spawned.stderr);
    assert.equal(spawned.stdout, `${AGENT}\n`);
    const running = spawnedOf<Spawned>(s.bus, AGENT);
    assert.equal(running.state, 'running');
    const window = running.tmux?.window;
    assert.ok(window, `agents --json shows its window: ${JSON.stringify(running.tmux)}`);
    const listed = windows(s.bus);
    assert.deepEqual(listed.filter((line) => line.startsWith(`${window} `)), [`${window} ${where.session} ${AGENT}`], `its window, named after the agent: ${listed.join(' | ')}`);
    assert.equal(listed.length, 1 + where.others, `no other window was made: ${listed.join(' | ')}`);

    // Its first turn: the prompt reaches the model, the answer is on the screen, and the session goes idle, watched through its socket.
    await waitUntil(() => modelSaw(prompt, model.requests), () => `a model request carrying the prompt (${model.requests.length} so far)${seen()}`, 60_000, 100);
    // The client started with the agent's name, and nothing of a session of its spawner's.
    const started = clientEnvironment(running.pid ?? 0);
    assert.equal(started.get('AGENT_BUS_NAME'), AGENT);
    const parents = Object.keys(parentSession(s)).filter((name) => name !== 'AGENT_BUS_NAME' && (started.get(name) ?? '') !== '');
    assert.deepEqual(parents, [], 'the client has none of its spawner\'s session variables');
    await waitUntil(() => pane().includes('noted'), () => `the answer on the screen${seen()}`, 30_000, 100);
    await waitUntil(() => presenceOf(s.bus) === 'idle', () => `the session idle (presence: ${presenceOf(s.bus) ?? 'none'})${seen()}`, 30_000, 100);
    await waitUntil(() => wakeWays(s.bus).join() === 'socket', () => `its server watching the session through its socket (watchers: ${wakeWays(s.bus).join() || 'none'})${seen()}`, 20_000, 100);
    // Its stop hook says idle a moment before the turn has ended: mail sent then is the stop hook's to hand over.
    await sleep(1500);

    const before = model.requests.length;
    assert.ok(!modelSaw(mail, model.requests), 'no request carried the mail before it was sent');
    const sent = runCli(['send', mail, '--to', AGENT], { env: s.bus.env });
    assert.equal(sent.code, 0, sent.stderr);
    await waitUntil(() => modelSaw(mail, model.requests.slice(before)), () => `a new turn carrying the mail${seen()}`, 30_000, 100);
    const audit = readFileSync(s.bus.audit, 'utf8');
    assert.match(audit, /"op":"wake".*"wake_driver":"socket","wake_status":"posted"/, 'woken through its inbox socket');
    assert.doesNotMatch(audit, /"wake_driver":"watch"/, 'no background watcher woke it');
    await waitUntil(() => presenceOf(s.bus) === 'idle', () => `the session idle again${seen()}`, 30_000, 100);

    const stopped = runCli(['stop', AGENT], { env: s.bus.env });
    assert.equal(stopped.code, 0, stopped.stderr);
    assert.match(stopped.stdout, new RegExp(`^stopped ${AGENT}: .* \\(stopped\\) after \\d+\\.\\ds\\n$`));
    const after = spawnedOf<Spawned>(s.bus, AGENT);
    assert.deepEqual([after.state, after.exit_category], ['exited', 'stopped'], JSON.stringify(after));
    await waitUntil(() => !windows(s.bus).some((line) => line.startsWith(`${window} `)), () => `its window closed: ${windows(s.bus).join(' | ')}`, 15_000, 100);
    assert.match(runCli(['agents'], { env: s.bus.env }).stdout, new RegExp(`${AGENT} +claude +stopped`));

    assertReceiptsHonest(s.bus, AGENT, model.requests, { delivered: [{ body: mail, via: 'hook-user-prompt', readVia: 'hook-user-prompt' }] });
  } finally {
    // Whatever happened: the agent stopped (a no-op once it has ended), then the server.
    runCli(['stop', AGENT], { env: s.bus.env });
    tmux(s.bus, 'kill-server');
    // Claude Code and its hooks take a moment to go after their terminal does.
    await endInteractive(s, { stop: () => sleep(1000) }, model);
  }
}

test('spawn --tmux: Claude Code in a window named after the agent runs its prompt, goes idle, is woken by mail through its inbox socket, and stop ends it', { skip: interactiveSkip, timeout: 150_000 }, () => spawnedInTmux('outside'));

test('the same spawned by a Claude Code session inside a person\'s tmux session: the window is the new agent\'s, not a second copy of its parent\'s session', { skip: interactiveSkip, timeout: 150_000 }, () => spawnedInTmux('agent-in-tmux'));
