/**
 * Claude Code interactive, driven in tmux: a session wired by our init finishes
 * its turn and sits idle; mail sent to it then wakes it through the background
 * hook-watch hook, and the next model request carries that mail.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli } from '../helpers/bus-env.js';
import { agentEnv, register } from '../helpers/agents.js';
import { sleep, waitUntil } from '../helpers/wait.js';
import { claude, claudeOffline } from './drivers.js';
import { assertReceiptsHonest, CLIENT_BIN, mailBody, modelSaw, wiredRepo } from './harness.js';

const CLAUDE = join(CLIENT_BIN, 'claude');
const hasTmux = spawnSync('tmux', ['-V'], { encoding: 'utf8' }).status === 0;
const skip = hasTmux && claude.skip === false ? false : 'needs tmux and Claude Code in clients/ (npm run test:clients installs it)';

const until = (check: () => boolean, what: string, ms: number): Promise<void> => waitUntil(check, what, ms, 100);

test('an idle interactive session is woken by mail, and the next model request carries it', { skip, timeout: 120_000 }, async () => {
  const s = wiredRepo('claude');
  const home = s.bus.env.HOME as string;
  // What a user's first runs leave behind: the workspace trusted, onboarding done, the API key accepted.
  writeFileSync(
    join(home, '.claude.json'),
    JSON.stringify({ hasCompletedOnboarding: true, customApiKeyResponses: { approved: ['dummy'], rejected: [] }, projects: { [s.repo]: { hasTrustDialogAccepted: true } } }),
  );
  mkdirSync(join(home, '.claude'), { recursive: true });
  writeFileSync(join(home, '.claude', 'settings.json'), JSON.stringify({ skipDangerousModePermissionPrompt: true }));
  // Register the session's client address so mail to it is accepted.
  register(agentEnv(s.bus, 'shop/claude', s.repo));
  const model = await claude.startModel(() => ({ text: 'noted' }));
  const socket = join(s.bus.dir, 'tmux');
  mkdirSync(socket, { recursive: true });
  const tmux = (...args: string[]) => spawnSync('tmux', ['-L', 'agent-bus-test', ...args], { env: { ...process.env, TMUX_TMPDIR: socket, HOME: home }, encoding: 'utf8' });
  const start = join(s.bus.dir, 'start-claude.sh');
  const exports = Object.entries({ ...s.bus.env, ...claudeOffline(model.url), IS_SANDBOX: '1', TERM: 'xterm-256color' })
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => `export ${key}='${String(value).replace(/'/g, `'\\''`)}'`);
  writeFileSync(start, `#!/bin/sh\n${exports.join('\n')}\ncd '${s.repo}'\nexec '${CLAUDE}' --dangerously-skip-permissions\n`);
  chmodSync(start, 0o755);
  const pane = (): string => tmux('capture-pane', '-p', '-t', 'wake').stdout ?? '';
  /** End the session: the pane runs Claude Code itself (the script execs it), then the terminal. */
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    const panePid = Number((tmux('display-message', '-p', '-t', 'wake', '#{pane_pid}').stdout ?? '').trim());
    if (panePid > 0) {
      try {
        process.kill(panePid, 'SIGTERM');
      } catch {
        // Already gone.
      }
    }
    tmux('kill-server');
    // Claude Code and its hooks take a moment to go after their terminal does.
    await sleep(1000);
  };
  const mail = mailBody('WAKE-MARKER please check');
  try {
    assert.equal(tmux('new-session', '-d', '-s', 'wake', '-x', '200', '-y', '50', start).status, 0);
    await until(() => /^❯/m.test(pane()), 'the input prompt', 60_000);
    tmux('send-keys', '-t', 'wake', '-l', 'hello, first prompt');
    tmux('send-keys', '-t', 'wake', 'Enter');
    await until(() => model.requests.length >= 1 && pane().includes('noted'), 'the first turn', 60_000);
    // The turn is over and the session idle: its watcher waits.
    await until(() => readFileSync(s.bus.audit, 'utf8').length > 0 && spawnSync('pgrep', ['-f', 'hook-watch --client claude']).status === 0, 'a watcher', 20_000);
    const before = model.requests.length;
    assert.equal(runCli(['send', mail, '--to', 'shop/claude'], { env: s.bus.env }).code, 0);
    await until(() => modelSaw(mail, model.requests.slice(before)), 'a new turn carrying the mail', 30_000);
    const audit = readFileSync(s.bus.audit, 'utf8');
    assert.match(audit, /"op":"wake".*"wake_driver":"watch","wake_status":"woke"/);
    // Once the session has ended, every receipt is what it will stay.
    await stop();
    assertReceiptsHonest(s.bus, 'shop/claude', model.requests, { delivered: [{ body: mail, via: 'hook-watch', readVia: 'hook-watch' }] });
  } finally {
    await stop();
    await model.close();
    try {
      s.bus.cleanup();
    } catch {
      // A straggler still writing: the temp folder goes with the machine's.
    }
  }
});
