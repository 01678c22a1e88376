/**
 * The chat on a machine set to use a hub: the seat is the token's agent, its
 * greeting is the hub's roster and sends, mail sent anywhere on the bus
 * arrives on screen as the hub's change feed moves, and what is typed is sent
 * through the hub.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli, tempBus } from '../helpers/bus-env.js';
import { exit, openChat, skip, until } from '../helpers/chat-pane.js';
import { createToken, startHub } from '../helpers/hub.js';

test('a chat over the hub: the token\'s agent takes the seat, mail from anywhere arrives at once, typed mail goes through the hub', { skip }, async () => {
  const bus = tempBus();
  // A one-minute fallback poll: only the change feed can bring mail at once.
  const hub = await startHub(bus, { AGENT_BUS_WATCH_POLL_SECONDS: '60' });
  const machine = tempBus();
  try {
    const { token } = createToken(bus, 'ops/alex');
    createToken(bus, 'shop/claude');
    assert.equal(runCli(['send', 'an older note', '--to', 'shop/claude'], { env: bus.env }).code, 0);
    const env = { PATH: process.env.PATH, HOME: join(machine.dir, 'home'), NO_COLOR: '1', AGENT_BUS_URL: hub.url, AGENT_BUS_TOKEN: token };
    const pane = openChat({ ...machine, env });
    try {
      const screen = await until(pane, /^\[ops\/alex → \*\] $/m, 'the prompt as the token\'s agent');
      assert.match(screen, /connected as 'ops\/alex'/);
      assert.match(screen, /^ +shop\/claude +seen/m, 'the hub\'s roster');
      assert.match(screen, /human → shop\/claude +an older note/, 'the hub\'s recent sends');
      const sentAt = Date.now();
      assert.equal(runCli(['send', 'hello over there', '--to', 'ops/alex', '--name', 'shop/claude'], { env: bus.env }).code, 0);
      await until(pane, /shop\/claude → ops\/alex.*hello over there|hello over there/, 'the mail on screen');
      assert.ok(Date.now() - sentAt < 5_000, 'brought by the hub\'s change feed, not the one-minute poll');
      assert.deepEqual(bus.rows("SELECT delivered_via, read_via FROM messages WHERE body = 'hello over there'"), [{ delivered_via: 'chat', read_via: 'chat' }], 'a person saw it in the chat, not a model');
      pane.keys('@shop/claude thanks, on it');
      pane.enter();
      await until(pane, /\[chat\] sent → shop\/claude \(id [0-9a-f]{12}\) ✓/, 'the send feedback, ticked');
      // Read on the hub's machine: the tick comes through the hub.
      assert.equal(runCli(['inbox', '--name', 'shop/claude'], { env: bus.env }).code, 0);
      await until(pane, /^\[chat\] ✓✓ read → shop\/claude \(id [0-9a-f]{12}\)$/m, 'the read tick over the hub');
      assert.deepEqual(bus.rows("SELECT from_agent, to_agent FROM messages WHERE body = 'thanks, on it'"), [{ from_agent: 'ops/alex', to_agent: 'shop/claude' }]);
      pane.keys('/exit');
      pane.enter();
      await exit(pane, '/exit');
    } finally {
      pane.close();
    }
    assert.ok(!existsSync(join(machine.dir, 'home', '.claude-agent-bus', 'bus.db')), 'no database on the chat\'s machine');
  } finally {
    await hub.stop();
    machine.cleanup();
    bus.cleanup();
  }
});
