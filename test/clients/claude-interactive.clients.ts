/**
 * Claude Code interactive, driven in tmux: a session wired by our init finishes
 * its turn and sits idle; mail sent to it then wakes it through the background
 * hook-watch hook, and the next model request carries that mail.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { runCli } from '../helpers/bus-env.js';
import { waitUntil } from '../helpers/wait.js';
import { claude } from './drivers.js';
import { assertReceiptsHonest, mailBody, modelSaw, wiredRepo } from './harness.js';
import { interactiveSkip, startInteractiveClaude, type InteractiveClaude } from './interactive.js';

const until = (check: () => boolean, what: string, ms: number): Promise<void> => waitUntil(check, what, ms, 100);

test('an idle interactive session is woken by mail, and the next model request carries it', { skip: interactiveSkip, timeout: 120_000 }, async () => {
  const s = wiredRepo('claude');
  const model = await claude.startModel(() => ({ text: 'noted' }));
  const mail = mailBody('WAKE-MARKER please check');
  let session: InteractiveClaude | undefined;
  try {
    session = await startInteractiveClaude(s, model.url);
    session.type('hello, first prompt');
    const { pane } = session;
    await until(() => model.requests.length >= 1 && pane().includes('noted'), 'the first turn', 60_000);
    // The turn is over and the session idle: its watcher waits.
    await until(() => readFileSync(s.bus.audit, 'utf8').length > 0 && spawnSync('pgrep', ['-f', 'hook-watch --client claude']).status === 0, 'a watcher', 20_000);
    const before = model.requests.length;
    assert.equal(runCli(['send', mail, '--to', 'shop/claude'], { env: s.bus.env }).code, 0);
    await until(() => modelSaw(mail, model.requests.slice(before)), 'a new turn carrying the mail', 30_000);
    const audit = readFileSync(s.bus.audit, 'utf8');
    assert.match(audit, /"op":"wake".*"wake_driver":"watch","wake_status":"woke"/);
    // Once the session has ended, every receipt is what it will stay.
    await session.stop();
    assertReceiptsHonest(s.bus, 'shop/claude', model.requests, { delivered: [{ body: mail, via: 'hook-watch', readVia: 'hook-watch' }] });
  } finally {
    await session?.stop();
    await model.close();
    try {
      s.bus.cleanup();
    } catch {
      // A straggler still writing: the temp folder goes with the machine's.
    }
  }
});
