/** Several real processes on one database: no lost or duplicated mail, and claims decided exactly once. */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { json, readAudit, runCli, runCliAsync, tempBus, ROOT } from '../helpers/bus-env.js';

function runWriter(env: NodeJS.ProcessEnv, from: string, to: string, count: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, 'test', 'helpers', 'writer.mjs'), from, to, String(count)], {
      env,
      cwd: env.HOME,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(out) as string[]) : reject(new Error(`writer ${from} exited ${code}: ${err}`))));
  });
}

test('4 writer processes × 200 sends to one agent: nothing lost, no duplicate id', async () => {
  const bus = tempBus();
  try {
    assert.equal(runCli(['send', 'hello', '--to', '*', '--name', 'sink'], { env: bus.env }).code, 0);
    const batches = await Promise.all(['w1', 'w2', 'w3', 'w4'].map((from) => runWriter(bus.env, from, 'sink', 200)));
    const ids = batches.flat();
    assert.equal(ids.length, 800);
    assert.equal(new Set(ids).size, 800);
    const inbox = json<Array<{ message_id: string; from: string; body: string }>>(
      runCli(['inbox', '--name', 'sink', '--limit', '1000', '--json'], { env: bus.env }),
    );
    assert.equal(inbox.length, 800);
    assert.deepEqual(new Set(inbox.map((message) => message.message_id)), new Set(ids));
    for (const writer of ['w1', 'w2', 'w3', 'w4']) {
      const bodies = inbox.filter((message) => message.from === writer).map((message) => message.body);
      assert.deepEqual(bodies, Array.from({ length: 200 }, (_, index) => `${writer} #${index}`), `${writer} in order`);
    }
    const sends = readAudit(bus.audit).filter((row) => row.op === 'send' && row.to === 'sink');
    assert.equal(sends.length, 800, 'one whole audit line per send');
    // Four processes appended at once, and every row still chains from the one before it.
    const verified = runCli(['audit', 'verify', '--json'], { env: bus.env });
    assert.equal(verified.code, 0, verified.stdout);
    assert.deepEqual(json<{ problems: unknown[] }>(verified).problems, []);
  } finally {
    bus.cleanup();
  }
});

test('two processes racing to read a repo-wide message: exactly one claims it', async () => {
  const bus = tempBus();
  try {
    for (const name of ['repo-a/claude', 'repo-a/codex']) {
      assert.equal(runCli(['send', 'joining', '--to', '*', '--name', name], { env: { ...bus.env, AGENT_BUS_NAME: name, AGENT_BUS_REPO: '/repos/a' } }).code, 0);
    }
    for (const name of ['repo-a/claude', 'repo-a/codex']) runCli(['inbox', '--name', name], { env: bus.env });
    const rounds = 8;
    for (let round = 0; round < rounds; round++) {
      assert.equal(runCli(['send', `task ${round}`, '--to', 'repo-a', '--name', 'human'], { env: bus.env }).code, 0);
      const [claude, codex] = await Promise.all(
        ['repo-a/claude', 'repo-a/codex'].map((name) => runCliAsync(['inbox', '--name', name, '--json'], { env: bus.env })),
      );
      const seen = [claude, codex].map((result) => json<Array<{ body: string; claimed_by: string }>>(result!));
      for (const messages of seen) assert.deepEqual(messages.map((message) => message.body), [`task ${round}`]);
      const claimers = new Set(seen.map((messages) => messages[0]?.claimed_by));
      assert.equal(claimers.size, 1, `round ${round}: both copies name one claimer`);
    }
    const rows = bus.rows<{ copies: number; claimers: number; unclaimed: number }>(
      "SELECT fanout_id, COUNT(*) AS copies, COUNT(DISTINCT claimed_by) AS claimers, SUM(CASE WHEN claimed_by IS NULL THEN 1 ELSE 0 END) AS unclaimed FROM messages WHERE addressed_to = 'repo-a' GROUP BY fanout_id",
    );
    assert.equal(rows.length, rounds);
    for (const row of rows) assert.deepEqual([row.copies, row.claimers, row.unclaimed], [2, 1, 0]);
    assert.equal(readAudit(bus.audit).filter((row) => row.op === 'claim').length, rounds);
  } finally {
    bus.cleanup();
  }
});
