/**
 * Qwen Code interactive on Node.js 22, driven in tmux: a session wired by our init finishes its turn
 * and sits idle; mail sent to it then wakes it. Qwen Code gives the processes it starts its session's
 * inbox socket and the token that makes a post its own: the session's MCP server posts a nudge there,
 * and no process of ours waits beside it. The turn a post starts runs no prompt hook: the stop hook
 * holds it for the mail, and the model's next request carries it.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { runCli, type TempBus } from '../helpers/bus-env.js';
import { sleep, waitUntil } from '../helpers/wait.js';
import { prepareQwenHome, qwen, qwenOffline } from './drivers.js';
import { assertReceiptsHonest, endInteractive, mailBody, modelSaw, wiredRepo } from './harness.js';
import { startInTmux, type InteractiveClaude } from './interactive.js';
import { qwenNode, QWEN_ENTRY } from './qwen-node.js';

const until = (check: () => boolean, what: string, ms: number): Promise<void> => waitUntil(check, what, ms, 25);
const hasTmux = spawnSync('tmux', ['-V'], { encoding: 'utf8' }).status === 0;

/** How the session's watcher rows say it is woken. */
function wakeWays(bus: TempBus): string[] {
  return bus.rows<{ way: string }>("SELECT COALESCE(way, 'watch') AS way FROM watchers ORDER BY session").map((row) => row.way);
}

test('Qwen Code interactive, idle: mail sent to it wakes it through its inbox socket (a nudge its MCP server posts), and the turn that starts carries the mail, twice', { skip: qwen.skip || (hasTmux ? false : 'needs tmux'), timeout: 240_000 }, async () => {
  const s = wiredRepo('qwen');
  const model = await qwen.startModel(() => ({ text: 'noted' }));
  let session: InteractiveClaude | undefined;
  try {
    prepareQwenHome(s.bus.env.HOME as string);
    const env = { ...s.bus.env, ...qwenOffline(model.url), TERM: 'xterm-256color' };
    session = await startInTmux(s, 'qwen', env, `'${qwenNode() ?? 'node'}' '${QWEN_ENTRY}' --yolo`, /Type your message/);
    session.type('hello, first prompt');
    const { pane } = session;
    await until(() => model.requests.length >= 1 && pane().includes('noted'), 'the first turn', 60_000);
    await until(() => wakeWays(s.bus).join() === 'socket', 'the server to watch the session through its socket', 20_000);
    const bodies = [mailBody('QWEN-SOCKET-WAKE first'), mailBody('QWEN-SOCKET-WAKE second')];
    for (const body of bodies) {
      await until(() => s.bus.rows("SELECT name FROM presence WHERE state = 'idle'").length > 0, 'the session idle', 30_000);
      await sleep(1500);
      const before = model.requests.length;
      assert.equal(runCli(['send', body, '--to', 'shop/qwen', '--name', 'shop/codex'], { env: s.bus.env }).code, 0);
      await until(() => modelSaw(body, model.requests.slice(before)), `a new turn carrying the mail; the screen shows:\n${pane()}`, 30_000);
    }
    const audit = readFileSync(s.bus.audit, 'utf8');
    assert.match(audit, /"op":"wake".*"wake_driver":"socket","wake_status":"posted"/);
    assert.doesNotMatch(audit, /given up/);
    await session.stop();
    assertReceiptsHonest(s.bus, 'shop/qwen', model.requests, { delivered: bodies.map((body) => ({ body, via: 'hook-stop' as const, readVia: 'hook-stop' as const })) });
  } finally {
    await endInteractive(s, session, model);
  }
});
