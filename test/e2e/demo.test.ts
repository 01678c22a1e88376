/** `agent-bus demo`: the tour a newcomer's first command runs, on a scratch bus it removes. */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { readAudit, runCli, withTempBus } from '../helpers/bus-env.js';

test('demo shows mail sent, waiting, read and audited, and leaves nothing behind', withTempBus((bus) => {
  const tmp = join(bus.dir, 'tmp');
  mkdirSync(tmp);
  const result = runCli(['demo'], { env: { ...bus.env, TMPDIR: tmp } });
  assert.equal(result.code, 0, result.stderr);
  assert.equal(result.stderr, '');
  const out = result.stdout;
  // Each step, as typed, then what it printed.
  const send = out.indexOf("$ agent-bus send 'hello from ");
  const agents = out.indexOf('$ agent-bus agents');
  const inbox = out.indexOf('$ agent-bus inbox --name demo/claude');
  const tail = out.indexOf('$ agent-bus tail');
  assert.ok(send >= 0 && agents > send && inbox > agents && tail > inbox, out);
  assert.match(out.slice(send, agents), /^sent [0-9a-f]{12} {2}human +→ demo\/claude +hello from \S+ {2}\(thread [0-9a-f]{12}\)$/m, 'the send line');
  assert.match(out.slice(agents, inbox), /^ {2}demo\/claude +seen just now {2}pending=1$/m, 'the mail waits in its inbox');
  assert.match(out.slice(agents, inbox), /^human +repo=~ {2}seen just now {2}pending=0$/m, 'the human has no repo');
  assert.match(out.slice(inbox, tail), /^just now {2}human → demo\/claude {2}[0-9a-f]{12} {2}\(thread [0-9a-f]{12}\)\n {4}hello from \S+$/m, 'the inbox shows the body');
  assert.match(out.slice(tail), /^just now {6}send +human +→ demo\/claude +hello from /m, 'the audit log has the send');
  assert.match(out.slice(tail), /^just now {6}read +human +→ demo\/claude +hello from /m, 'and the read');
  assert.doesNotMatch(out, /dropped|nobody/);
  assert.deepEqual(readdirSync(tmp), [], 'the scratch bus is gone');
  assert.equal(existsSync(bus.db), false, 'the bus of the environment was never opened');
  assert.equal(existsSync(join(bus.env.HOME as string, '.claude-agent-bus')), false);
}));

test('demo --keep keeps the scratch bus and says how to explore it', withTempBus((bus) => {
  const tmp = join(bus.dir, 'tmp');
  mkdirSync(tmp);
  const result = runCli(['demo', '--keep'], { env: { ...bus.env, TMPDIR: tmp } });
  assert.equal(result.code, 0, result.stderr);
  const exported = /export AGENT_BUS_DB=(\S+) AGENT_BUS_AUDIT_LOG=(\S+)$/m.exec(result.stdout);
  assert.ok(exported, result.stdout);
  const [, db, audit] = exported as unknown as [string, string, string];
  assert.ok(db.startsWith(tmp) && existsSync(db), 'the kept bus is in the scratch folder');
  assert.deepEqual(readAudit(audit).filter((row) => row.op !== 'audit').map((row) => [row.op, row.to]), [['send', 'demo/claude'], ['read', 'demo/claude']]);
  const inbox = runCli(['agents', '--json'], { env: { ...bus.env, AGENT_BUS_DB: db, AGENT_BUS_AUDIT_LOG: audit } });
  assert.match(inbox.stdout, /"name":"demo\/claude"/);
}));

test('a step that fails stops the tour: its own error, then which step, exit 1, and the scratch bus removed', withTempBus((bus) => {
  const tmp = join(bus.dir, 'tmp');
  mkdirSync(tmp);
  const result = runCli(['demo'], { env: { ...bus.env, TMPDIR: tmp, AGENT_BUS_MAX_BODY_BYTES: '5' } });
  assert.equal(result.code, 1);
  assert.match(result.stderr, /^agent-bus: body is \d+ bytes; the limit is 5 bytes .*Nothing was sent\.\nagent-bus: demo: 'agent-bus send' failed \(exit 1\); the tour stops here\n$/);
  assert.doesNotMatch(result.stdout, /\$ agent-bus agents/);
  assert.deepEqual(readdirSync(tmp), []);
}));
