/**
 * Codex interactive, driven in tmux: a session wired by our init finishes its turn and sits idle;
 * mail sent to it then wakes it. Codex's hooks record the session's thread, executable and process;
 * the sender runs `codex queue --thread <id>` for the idle session, and Codex starts the queued turn
 * without anyone typing. The model's wake turn reads its inbox.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli, type TempBus } from '../helpers/bus-env.js';
import { sleep, waitUntil } from '../helpers/wait.js';
import { codex } from './drivers.js';
import { CLIENT_BIN, endInteractive, mailBody, modelSaw, wiredRepo } from './harness.js';
import { startInTmux, type InteractiveClaude } from './interactive.js';

const until = (check: () => boolean, what: string | (() => string), ms: number): Promise<void> => waitUntil(check, what, ms, 50);
const hasTmux = spawnSync('tmux', ['-V'], { encoding: 'utf8' }).status === 0;
const WAKE_TEXT = 'agent-bus: new mail';

/** The Codex session's turn state as its hooks recorded it. */
function turnStates(bus: TempBus): string[] {
  return bus.rows<{ turn_state: string }>('SELECT turn_state FROM client_routes').map((row) => row.turn_state);
}

/** The audit's wake rows. */
function wakeRows(bus: TempBus): string[] {
  return readFileSync(bus.audit, 'utf8').split('\n').filter((line) => line.includes('"op":"wake"'));
}

/** Whether the copy of `body` to shop/codex is marked read in the store. */
function readInStore(bus: TempBus, body: string): boolean {
  return bus.rows<{ body: string; read_at: string | null }>("SELECT body, read_at FROM messages WHERE to_agent = 'shop/codex'").some((m) => m.body === body && m.read_at !== null);
}

test('Codex interactive, idle: mail sent to it wakes it through `codex queue`, and the queued turn reads the mail, twice', { skip: codex.skip || (hasTmux ? false : 'needs tmux'), timeout: 240_000 }, async () => {
  const s = wiredRepo('codex');
  let woke = 0;
  // Before the first mail the model only answers; after it, a turn's first request calls read_inbox.
  let mailSent = false;
  const model = await codex.startModel(({ afterTool }) => {
    if (!mailSent) return { text: 'noted' };
    if (afterTool) return { text: 'read it' };
    woke += 1;
    return { call: 'read_inbox', input: {} };
  });
  let session: InteractiveClaude | undefined;
  try {
    // Codex's state in the bus's HOME (~/.codex), where the sender's `codex queue` finds the session's thread too.
    const env = { ...s.bus.env, OPENAI_API_KEY: 'dummy', TERM: 'xterm-256color' };
    const config = [
      '-c model=fake-model', '-c model_provider=fake',
      `-c 'model_providers.fake={name="fake",base_url="${model.url}/v1",env_key="OPENAI_API_KEY",wire_api="responses"}'`,
    ].join(' ');
    session = await startInTmux(s, 'codex', env, `'${join(CLIENT_BIN, 'codex')}' --dangerously-bypass-hook-trust --dangerously-bypass-approvals-and-sandbox ${config}`, /›|Ask Codex|To get started/);
    const { pane } = session;
    // The folder is trusted the way a user does it, once, at Codex's first run there (its dialog may come a moment after the prompt).
    let answered = 0;
    await until(() => {
      if (pane().includes('Trust this folder')) {
        session?.type('');
        answered += 1;
        return false;
      }
      return answered > 0 && /›/.test(pane());
    }, () => `the trust prompt answered; the screen shows:\n${pane()}`, 30_000);
    await sleep(1500);
    session.type('hello, first prompt');
    // Codex takes typed text arriving at once as a paste, and the Enter with it as part of it: a second Enter sends it.
    await sleep(1000);
    if (model.requests.length === 0) session.type('');
    await until(() => model.requests.length >= 1 && pane().includes('noted'), () => `the first turn; the screen shows:\n${pane()}`, 60_000);
    const bodies = [mailBody('CODEX-QUEUE-WAKE first'), mailBody('CODEX-QUEUE-WAKE second')];
    for (const [n, body] of bodies.entries()) {
      await until(() => turnStates(s.bus).join() === 'idle', () => `the session idle (${turnStates(s.bus).join()}); the screen shows:\n${pane()}`, 30_000);
      await sleep(1000);
      const before = model.requests.length;
      mailSent = true;
      assert.equal(runCli(['send', body, '--to', 'shop/codex', '--name', 'shop/claude'], { env: s.bus.env }).code, 0);
      await until(() => modelSaw(body, model.requests.slice(before)), () => `a queued turn carrying the mail; routes ${JSON.stringify(s.bus.rows('SELECT * FROM client_routes'))}; wakes ${wakeRows(s.bus).join('\n')}; the screen shows:\n${pane()}`, 60_000);
      assert.ok(model.requests.slice(before).some((raw) => raw.includes(WAKE_TEXT)), 'the turn is the one the sender queued (its message is the wake text)');
      await until(() => woke === n + 1 && readInStore(s.bus, body), () => `the model to call read_inbox and the mail to be read; the screen shows:\n${pane()}`, 30_000);
    }
    const pushes = wakeRows(s.bus).filter((line) => line.includes('"wake_driver":"push"'));
    assert.equal(pushes.length, 2, `one queued turn per mail: ${pushes.join('\n')}`);
    assert.ok(pushes.every((line) => line.includes('"wake_status":"fired:OK"')), pushes.join('\n'));
  } finally {
    await endInteractive(s, session, model);
  }
});
