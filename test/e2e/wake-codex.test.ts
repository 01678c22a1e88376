/**
 * Native wake for Codex: its hooks record how to reach each session (thread
 * id, executable, process, whether a turn is running); a sender runs
 * `codex queue --thread <id>` for an idle one, once until its next turn starts.
 * A stand-in codex records the arguments it was run with.
 */
import assert from 'node:assert/strict';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { spawn } from 'node:child_process';
import { agentEnv, auditRows, register, waitForWatcher } from '../helpers/agents.js';
import { CLI, runCli, withTempBus, type TempBus } from '../helpers/bus-env.js';
import { waitUntil } from '../helpers/wait.js';

function standIn(bus: TempBus): { bin: string; calls(): string[] } {
  const log = join(bus.dir, 'codex-calls.log');
  const bin = join(bus.dir, 'codex');
  writeFileSync(bin, `#!/bin/sh\nprintf '%s|' "$@" >> ${log}\necho >> ${log}\n`);
  chmodSync(bin, 0o755);
  return { bin, calls: () => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : []) };
}

/** The Codex agent these tests wake, working in the test's folder. */
const codexEnv = (bus: TempBus): NodeJS.ProcessEnv => agentEnv(bus, 'shop/codex', bus.dir);

function hook(bus: TempBus, kind: 'hook-user-prompt' | 'hook-stop', thread: string): void {
  const env = codexEnv(bus);
  const run = runCli([kind, '--client', 'codex'], { env, input: JSON.stringify({ session_id: thread, cwd: bus.dir, hook_event_name: kind === 'hook-stop' ? 'Stop' : 'UserPromptSubmit' }) });
  assert.equal(run.code, 0, run.stderr);
}

/**
 * The sender's native wakes: it appends a row for every `codex queue` it runs before it exits, so
 * once a send has returned, these say whether it queued a turn (the stand-in's log may lag).
 */
const pushRows = (bus: TempBus) => auditRows(bus, 'wake').filter((row) => row.wake_driver === 'push');

test('a sender queues a turn for an idle Codex session, once until that turn starts; never for a busy one', withTempBus(async (bus) => {
  const codex = standIn(bus);
  const env = { ...bus.env, AGENT_BUS_CODEX_BIN: codex.bin };
  register(codexEnv(bus));
  hook(bus, 'hook-user-prompt', 'thread-1'); // A turn is running: busy.
  assert.equal(runCli(['send', 'while busy', '--to', 'shop/codex'], { env }).code, 0);
  assert.deepEqual(pushRows(bus), [], 'the sender queued nothing');
  assert.deepEqual(codex.calls(), [], 'a busy session is never queued to');
  hook(bus, 'hook-user-prompt', 'thread-1');
  hook(bus, 'hook-stop', 'thread-1'); // The turn ended (nothing left to act on): idle.
  assert.equal(runCli(['send', 'now idle', '--to', 'shop/codex'], { env }).code, 0);
  await waitUntil(() => codex.calls().length === 1, 'codex queue ran');
  assert.equal(codex.calls()[0], 'queue|--thread|thread-1|--message|agent-bus: new mail|', 'the body is never on its command line');
  assert.equal(runCli(['send', 'again', '--to', 'shop/codex'], { env }).code, 0);
  assert.equal(pushRows(bus).length, 1, 'the second sender queued nothing');
  assert.equal(codex.calls().length, 1, 'queued once until the turn starts');
  hook(bus, 'hook-user-prompt', 'thread-1'); // The queued turn started (and read the mail).
  hook(bus, 'hook-stop', 'thread-1');
  assert.equal(runCli(['send', 'later', '--to', 'shop/codex'], { env }).code, 0);
  await waitUntil(() => codex.calls().length === 2, 'queued again after the next turn');
  assert.deepEqual(pushRows(bus).map((row) => row.wake_status), ['fired:OK', 'fired:OK']);
}));

test('wake.json wins over native wake, and AGENT_BUS_NATIVE_WAKE=0 queues nothing', withTempBus(async (bus) => {
  const codex = standIn(bus);
  register(codexEnv(bus));
  hook(bus, 'hook-user-prompt', 'thread-2');
  hook(bus, 'hook-stop', 'thread-2');
  assert.equal(runCli(['send', 'native off', '--to', 'shop/codex'], { env: { ...bus.env, AGENT_BUS_CODEX_BIN: codex.bin, AGENT_BUS_NATIVE_WAKE: '0' } }).code, 0);
  writeFileSync(join(bus.dir, 'bus', 'wake.json'), JSON.stringify({ shop: false }));
  assert.equal(runCli(['send', 'repo says no', '--to', 'shop/codex'], { env: { ...bus.env, AGENT_BUS_CODEX_BIN: codex.bin } }).code, 0);
  assert.deepEqual(pushRows(bus), []);
  assert.deepEqual(codex.calls(), []);
}));

test('a repo-wide message wakes one agent per repo: a watching session takes it, so Codex is not queued', withTempBus(async (bus) => {
  const codex = standIn(bus);
  const env = { ...bus.env, AGENT_BUS_CODEX_BIN: codex.bin };
  register(codexEnv(bus));
  const claude = agentEnv(bus, 'shop/claude', bus.dir);
  register(claude);
  hook(bus, 'hook-user-prompt', 'thread-3');
  hook(bus, 'hook-stop', 'thread-3');
  // A Claude Code session of the repo is watching.
  const watcher = spawn(process.execPath, [CLI, 'hook-watch', '--client', 'claude', '--max-seconds', '20'], {
    env: { ...claude, CLAUDE_CODE_ENTRYPOINT: 'cli' },
    cwd: bus.dir,
    stdio: ['pipe', 'ignore', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => watcher.on('close', resolve));
  watcher.stdin.end(JSON.stringify({ session_id: 'claude-session' }));
  // The row a sender asks to learn that the repo is watched.
  await waitForWatcher(bus, watcher.pid as number);
  assert.equal(runCli(['send', 'for the repo', '--to', 'shop'], { env }).code, 0);
  assert.equal(await exited, 10, 'the watcher took it');
  assert.deepEqual(pushRows(bus), [], 'the sender queued nothing');
  assert.deepEqual(codex.calls(), [], 'Codex was not queued as well');
  // Nobody watching: the sender queues the idle Codex session.
  assert.equal(runCli(['send', 'for the repo again', '--to', 'shop'], { env }).code, 0);
  await waitUntil(() => codex.calls().length === 1, 'codex queued');
}));
