/** `agent-bus audit verify`: the hash chain through the real CLI, gaps against the store, repair, rotation. */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { send, waitPastInFlightGrace } from '../helpers/agents.js';
import { readAudit, runCli, runCliAsync, tempBus, type TempBus, messageLines } from '../helpers/bus-env.js';

interface VerifyReport {
  ok: boolean;
  rows: number;
  head: { seq: number } | null;
  problems: Array<{ file: string; line: number; kind: string; message: string }>;
  store: { messages: number; missing_send_rows: Array<{ message_id: string }>; unknown_messages: Array<{ message_id: string; line: number }>; pruned_rows: number };
  repaired: number;
}

function verify(bus: TempBus, ...extra: string[]): { code: number | null; report: VerifyReport; stdout: string; stderr: string } {
  const result = runCli(['audit', 'verify', '--json', ...extra], { env: bus.env });
  return { code: result.code, report: JSON.parse(result.stdout) as VerifyReport, stdout: result.stdout, stderr: result.stderr };
}


/** A bus with two repos of two clients each, and mail of every kind: direct, client, repo-wide, everyone. */
function busWithMail(): TempBus {
  const bus = tempBus();
  for (const name of ['shop/claude', 'shop/codex', 'web/claude', 'web/codex']) send(bus, 'joining', '*', { from: name });
  send(bus, 'direct', 'shop/claude', { from: 'web/codex' });
  send(bus, 'repo-wide', 'web', { from: 'shop/claude' });
  send(bus, 'everyone', '*', { from: 'human' });
  return bus;
}

test('audit verify: an intact log exits 0 and says so; every stored message has its send row', () => {
  const bus = busWithMail();
  try {
    const { code, report } = verify(bus);
    assert.equal(code, 0);
    assert.equal(report.ok, true);
    assert.deepEqual(report.problems, []);
    const sends = readAudit(bus.audit).filter((row) => row.op === 'send');
    assert.equal(report.store.messages, sends.length, 'one send row per stored row');
    assert.ok(report.store.messages >= 10);
    assert.equal(report.head?.seq, readAudit(bus.audit).length - 1, 'the chain runs over every line');
    const text = runCli(['audit', 'verify'], { env: bus.env });
    assert.equal(text.code, 0);
    assert.match(text.stdout, /chain: intact from its genesis to seq \d+/);
    assert.match(text.stdout, /every message has its send row/);
  } finally {
    bus.cleanup();
  }
});

test('audit verify: an edited, removed, inserted or moved line exits 1 naming the file and line', () => {
  const bus = busWithMail();
  try {
    const original = readFileSync(bus.audit, 'utf8');
    const lines = original.split('\n').slice(0, -1);
    const edits: Array<[string, string[], number, RegExp]> = [
      ['edited', lines.map((line, index) => (index === 5 ? line.replace('"actor":"', '"actor":"x') : line)), 6, /changed after it was written/],
      ['removed', lines.filter((_, index) => index !== 5), 6, /before it (is|are) gone/],
      ['inserted', [...lines.slice(0, 5), lines[5]!.replace(/"seq":\d+/, '"seq":1').replace('"actor":"', '"actor":"y'), ...lines.slice(5)], 6, /put in here|changed after/],
      ['moved', [...lines.slice(0, 5), lines[6]!, lines[5]!, ...lines.slice(7)], 6, /out of order/],
    ];
    for (const [name, changed, line, what] of edits) {
      writeFileSync(bus.audit, `${changed.join('\n')}\n`);
      const { code, report } = verify(bus);
      assert.equal(code, 1, name);
      assert.equal(report.ok, false, name);
      assert.equal(report.problems[0]?.line, line, `${name}: ${JSON.stringify(report.problems)}`);
      assert.match(report.problems[0]?.message ?? '', what, name);
      const text = runCli(['audit', 'verify'], { env: bus.env });
      assert.equal(text.code, 1);
      assert.match(text.stdout, new RegExp(`chain: BROKEN at audit\\.log:${line}: `), `${name}: ${text.stdout}`);
    }
    writeFileSync(bus.audit, original);
    assert.equal(verify(bus).code, 0, 'restored, it verifies again');
  } finally {
    bus.cleanup();
  }
});

test('a message stored with no send row is reported; --repair appends it marked recovered and changes no line', async () => {
  const bus = busWithMail();
  try {
    // A send whose row went elsewhere stands for a send killed between its commit and its append.
    send(bus, 'lost row', 'shop/codex', { from: 'web/claude', env: { AGENT_BUS_AUDIT_LOG: join(bus.dir, 'elsewhere.log') } });
    await waitPastInFlightGrace(bus);
    const before = readFileSync(bus.audit, 'utf8');
    const found = verify(bus);
    assert.equal(found.code, 1);
    assert.deepEqual(found.report.problems, [], 'the chain itself is whole');
    assert.equal(found.report.store.missing_send_rows.length, 1);
    const text = runCli(['audit', 'verify'], { env: bus.env });
    assert.match(text.stdout, /1 message with no send row.*--repair/);
    const repaired = verify(bus, '--repair');
    assert.equal(repaired.code, 0, repaired.stdout);
    assert.equal(repaired.report.repaired, 1);
    const after = readFileSync(bus.audit, 'utf8');
    assert.ok(after.startsWith(before), 'every line written before is as it was');
    const recovered = readAudit(bus.audit).filter((row) => row.recovered === true);
    assert.equal(recovered.length, 1);
    assert.equal(recovered[0]?.op, 'send');
    assert.equal(recovered[0]?.message_id, found.report.store.missing_send_rows[0]?.message_id);
    assert.equal(recovered[0]?.body_preview, 'lost row');
    const again = verify(bus);
    assert.equal(again.code, 0);
    assert.deepEqual(again.report.store.missing_send_rows, []);
    assert.equal(verify(bus, '--repair').report.repaired, 0, 'a second repair has nothing to do');
  } finally {
    bus.cleanup();
  }
});

test('a send row naming a message the store does not have is reported with its line', async () => {
  const bus = busWithMail();
  try {
    const other = tempBus({ AGENT_BUS_AUDIT_LOG: bus.audit });
    try {
      const result = runCli(['send', 'stored elsewhere', '--to', 'someone', '--name', 'someone'], { env: other.env });
      assert.equal(result.code, 0, result.stderr);
    } finally {
      other.cleanup();
    }
    await waitPastInFlightGrace(bus);
    const { code, report } = verify(bus);
    assert.equal(code, 1);
    assert.equal(report.store.unknown_messages.length, 1);
    assert.equal(report.store.unknown_messages[0]?.line, readAudit(bus.audit).length);
    assert.match(runCli(['audit', 'verify'], { env: bus.env }).stdout, /1 send row naming a message the store does not have:\n {4}audit\.log:\d+ /);
  } finally {
    bus.cleanup();
  }
});

test('AGENT_BUS_AUDIT_MAX_BYTES rotates the log; tail and verify read across the files', () => {
  const bus = tempBus({ AGENT_BUS_AUDIT_MAX_BYTES: '3K' });
  try {
    for (let index = 0; index < 20; index++) send(bus, `message ${index}`, 'sink', { from: 'sink' });
    assert.ok(existsSync(`${bus.audit}.1`) && existsSync(`${bus.audit}.2`));
    for (const file of [bus.audit, `${bus.audit}.1`, `${bus.audit}.2`]) {
      assert.ok(statSync(file).size <= 3 * 1024, file);
      assert.equal(statSync(file).mode & 0o777, 0o600, `${file} is private`);
    }
    const tail = runCli(['tail', '--json', '--limit', '100'], { env: bus.env });
    const rows = tail.stdout.trim().split('\n').map((line) => JSON.parse(line) as { body_preview: string; op: string });
    assert.deepEqual(rows.map((row) => row.body_preview), Array.from({ length: 20 }, (_, index) => `message ${index}`));
    const { code, report } = verify(bus);
    assert.equal(code, 0, JSON.stringify(report.problems));
    assert.equal(report.store.messages, 20);
  } finally {
    bus.cleanup();
  }
});

test('eight processes appending at once keep one unbroken chain', async () => {
  const bus = tempBus();
  try {
    // Each speaks to itself, so all eight begin on an empty log at once: they race for its genesis.
    const writers = Array.from({ length: 8 }, (_, writer) =>
      (async () => {
        for (let index = 0; index < 6; index++) {
          const result = await runCliAsync(['send', `w${writer} #${index}`, '--to', `w${writer}`, '--name', `w${writer}`], { env: bus.env });
          assert.equal(result.code, 0, result.stderr);
        }
      })(),
    );
    await Promise.all(writers);
    const { code, report } = verify(bus);
    assert.equal(code, 0, JSON.stringify(report.problems));
    assert.equal(report.store.messages, 48);
    assert.equal(readAudit(bus.audit).filter((row) => row.op === 'audit').length, 1, 'one genesis, however many processes began at once');
  } finally {
    bus.cleanup();
  }
});

test('audit: a wrong action or argument is a one-line usage error', () => {
  const bus = tempBus();
  try {
    const wrong = runCli(['audit', 'check'], { env: bus.env });
    assert.equal(wrong.code, 2);
    assert.match(wrong.stderr, /^agent-bus: audit: expected verify, got 'check'/);
    const extra = runCli(['audit', 'verify', 'more'], { env: bus.env });
    assert.equal(extra.code, 2);
    assert.equal(messageLines(extra.stderr).length, 1);
  } finally {
    bus.cleanup();
  }
});
