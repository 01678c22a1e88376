/**
 * Claude Code interactive, driven in tmux: a session wired by our init finishes its turn and sits
 * idle; mail sent to it then wakes it, and the next model request carries that mail. Claude Code
 * gives its MCP server the session's inbox socket: the server posts a nudge there and no process of
 * ours waits beside it. Where the server has no socket, the background hook-watch hook wakes it.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli, tempBus, type TempBus } from '../helpers/bus-env.js';
import { createToken, startHub } from '../helpers/hub.js';
import { sleep, waitUntil } from '../helpers/wait.js';
import { claude } from './drivers.js';
import { assertReceiptsHonest, CLIENT_BIN, endInteractive, mailBody, modelSaw, serverEnv, wiredRepo } from './harness.js';
import { interactiveSkip, startInteractiveClaude, type InteractiveClaude } from './interactive.js';

const until = (check: () => boolean, what: string, ms: number): Promise<void> => waitUntil(check, what, ms, 25);

/**
 * This test's hook-watch processes running now: those whose environment names its bus. Others on the
 * machine (another suite's, run beside this one) are not its business.
 */
function watchers(bus: TempBus): string {
  const pids = spawnSync('pgrep', ['-f', 'hook-watch --client claude'], { encoding: 'utf8' }).stdout.split('\n').filter((pid) => pid.trim() !== '');
  const ours = `AGENT_BUS_DB=${bus.env.AGENT_BUS_DB ?? ''}`;
  return pids
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid.trim()}/environ`, 'utf8').split('\0').includes(ours);
      } catch {
        return false; // Gone since pgrep saw it, or not ours to read.
      }
    })
    .join(' ');
}

/** How the session's watcher row says it is woken: 'socket', 'watch' or 'refused' (none: null). */
function wakeWays(bus: TempBus): string[] {
  return bus.rows<{ way: string }>("SELECT COALESCE(way, 'watch') AS way FROM watchers ORDER BY session").map((row) => row.way);
}

async function socketWake(bypass: boolean): Promise<void> {
  const s = wiredRepo('claude');
  const model = await claude.startModel(() => ({ text: 'noted' }));
  const mail = mailBody('SOCKET-WAKE-MARKER please check');
  let session: InteractiveClaude | undefined;
  try {
    session = await startInteractiveClaude(s, model.url, {}, { bypass });
    session.type('hello, first prompt');
    const { pane } = session;
    await until(() => model.requests.length >= 1 && pane().includes('noted'), 'the first turn', 60_000);
    // Idle: its server watches through the socket, and the watcher its Stop hook started has stepped aside.
    await until(() => wakeWays(s.bus).join() === 'socket', 'the server to watch the session through its socket', 20_000);
    await until(() => watchers(s.bus) === '', 'no hook-watch process', 20_000);
    await sleep(1500);
    assert.equal(watchers(s.bus), '', 'no hook-watch process runs while the session is idle');
    // Twice: each nudge in words of its own (Claude Code drops a post that repeats the one before).
    const again = mailBody('SOCKET-WAKE-MARKER second');
    for (const body of [mail, again]) {
      await until(() => s.bus.rows("SELECT name FROM presence WHERE state = 'idle'").length > 0, 'the session idle', 30_000);
      // Its stop hook says idle a moment before the turn has ended: mail sent then is the stop hook's to hand over.
      await sleep(1500);
      const before = model.requests.length;
      assert.equal(runCli(['send', body, '--to', 'shop/claude', '--name', 'shop/codex'], { env: s.bus.env }).code, 0);
      await until(() => modelSaw(body, model.requests.slice(before)), 'a new turn carrying the mail', 30_000);
    }
    // How fast is the benchmark's to hold (p50 over five wakes, beside the watcher's); here, that it came through the socket.
    const audit = readFileSync(s.bus.audit, 'utf8');
    assert.match(audit, /"op":"wake".*"wake_driver":"socket","wake_status":"posted"/);
    assert.doesNotMatch(audit, /"wake_driver":"watch"/);
    await session.stop();
    assertReceiptsHonest(s.bus, 'shop/claude', model.requests, {
      delivered: [mail, again].map((body) => ({ body, via: 'hook-user-prompt' as const, readVia: 'hook-user-prompt' as const })),
    });
  } finally {
    await endInteractive(s, session, model);
  }
}

test('an idle session is woken through its inbox socket by its MCP server: no watcher process, the mail delivered by the prompt hook', { skip: interactiveSkip, timeout: 120_000 }, () => socketWake(false));

test('the same in bypass-permissions mode (--dangerously-skip-permissions): the post comes from a child of Claude Code', { skip: interactiveSkip, timeout: 120_000 }, () => socketWake(true));

test('without the socket in its server\'s environment, the background watcher wakes the session as before', { skip: interactiveSkip, timeout: 120_000 }, async () => {
  const s = wiredRepo('claude');
  serverEnv(s, { CLAUDE_CODE_MESSAGING_SOCKET: '' });
  const model = await claude.startModel(() => ({ text: 'noted' }));
  const mail = mailBody('WAKE-MARKER please check');
  let session: InteractiveClaude | undefined;
  try {
    session = await startInteractiveClaude(s, model.url);
    session.type('hello, first prompt');
    const { pane } = session;
    await until(() => model.requests.length >= 1 && pane().includes('noted'), 'the first turn', 60_000);
    // The turn is over and the session idle: its watcher waits.
    await until(() => readFileSync(s.bus.audit, 'utf8').length > 0 && watchers(s.bus) !== '', 'a watcher', 20_000);
    assert.deepEqual(wakeWays(s.bus), ['watch']);
    const before = model.requests.length;
    assert.equal(runCli(['send', mail, '--to', 'shop/claude'], { env: s.bus.env }).code, 0);
    await until(() => modelSaw(mail, model.requests.slice(before)), 'a new turn carrying the mail', 30_000);
    const audit = readFileSync(s.bus.audit, 'utf8');
    assert.match(audit, /"op":"wake".*"wake_driver":"watch","wake_status":"woke"/);
    // Once the session has ended, every receipt is what it will stay.
    await session.stop();
    assertReceiptsHonest(s.bus, 'shop/claude', model.requests, { delivered: [{ body: mail, via: 'hook-watch', readVia: 'hook-watch' }] });
  } finally {
    await endInteractive(s, session, model);
  }
});

test('over a hub: the session\'s MCP server is a relay on its machine that wakes it through its socket, asking the hub; no watcher process waits', { skip: interactiveSkip, timeout: 150_000 }, async () => {
  const hubBus = tempBus();
  const hub = await startHub(hubBus, { AGENT_BUS_WATCH_POLL_SECONDS: '0.2' });
  const { token } = createToken(hubBus, 'shop/claude');
  assert.equal(runCli(['send', 'joining', '--to', 'human'], { env: hubBus.env }).code, 0);
  // The agent's machine: its repo wired to the hub by init --remote (over the local wiring, which it replaces), the token in Claude Code's environment.
  const s = wiredRepo('claude');
  const init = runCli(['init', '--clients', 'claude', '--remote', hub.url], { env: { ...s.bus.env, AGENT_BUS_CLAUDE_BIN: join(CLIENT_BIN, 'claude') }, cwd: s.repo });
  assert.equal(init.code, 0, init.stderr);
  const model = await claude.startModel(() => ({ text: 'noted' }));
  const mail = mailBody('HUB-SOCKET-WAKE-MARKER please check');
  let session: InteractiveClaude | undefined;
  try {
    session = await startInteractiveClaude(s, model.url, { AGENT_BUS_URL: hub.url, AGENT_BUS_TOKEN: token });
    session.type('hello, first prompt');
    const { pane } = session;
    await until(() => model.requests.length >= 1 && pane().includes('noted'), 'the first turn', 60_000);
    // Idle: its relay watches through the socket (its row at the hub), and the watcher its Stop hook started has stepped aside.
    await until(() => wakeWays(hubBus).join() === 'socket', 'the relay to watch the session through its socket', 20_000);
    await until(() => watchers(s.bus) === '', 'no hook-watch process', 20_000);
    await until(() => hubBus.rows("SELECT name FROM presence WHERE state = 'idle'").length > 0, 'the session idle at the hub', 30_000);
    await sleep(1500);
    assert.equal(watchers(s.bus), '', 'no hook-watch process runs while the session is idle');
    const before = model.requests.length;
    assert.equal(runCli(['send', mail, '--to', 'shop/claude', '--name', 'human'], { env: hubBus.env }).code, 0);
    await until(() => modelSaw(mail, model.requests.slice(before)), 'a new turn carrying the mail', 30_000);
    const audit = readFileSync(hubBus.audit, 'utf8');
    assert.match(audit, /"op":"wake".*"wake_driver":"socket","wake_status":"posted"/);
    assert.doesNotMatch(audit, /"wake_driver":"watch"/);
    assert.deepEqual(s.bus.rows("SELECT message_id FROM messages WHERE body = '" + mail.replace(/'/g, "''") + "'"), [], 'the mail is the hub\'s alone: nothing went through the machine\'s own bus');
    assert.deepEqual(hubBus.rows("SELECT delivered_via FROM messages WHERE body = '" + mail.replace(/'/g, "''") + "'"), [{ delivered_via: 'hook-user-prompt' }]);
  } finally {
    await endInteractive(s, session, model);
    await hub.stop();
    hubBus.cleanup();
  }
});
