/**
 * Reliability: 8 writer processes × 500 mixed sends (direct, repo-wide, everyone) while reader
 * processes read and claim. Nothing lost, duplicated or misdelivered; each fan-out claimed once
 * per repo; one audit send row per stored row; the audit chain verifies.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { readAudit, ROOT, runCli, tempBus } from '../helpers/bus-env.js';
import { figure, seedFor } from './report.js';

const WRITERS = 8;
const SENDS = 500;
const REPOS = ['alpha', 'beta', 'gamma'];
const CLIENTS = ['claude', 'codex'];

interface Sent {
  body: string;
  to: string;
  kind: string;
  ids: string[];
  recipients: string[];
}

function runNode(script: string, args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, 'test', 'reliability', script), ...args], { env, cwd: env.HOME, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`${script} exited ${code}: ${err}`))));
  });
}

test(`${WRITERS} writers × ${SENDS} mixed sends with concurrent readers: 0 lost, 0 duplicated, 0 misdelivered`, { timeout: 300_000 }, async () => {
  const seed = seedFor('concurrency');
  const bus = tempBus();
  try {
    const sessions = REPOS.flatMap((repo) => CLIENTS.map((client) => `${repo}/${client}`));
    const people = ['ana', 'ben'];
    const writers = Array.from({ length: WRITERS }, (_, index) => `writer-${index}`);
    for (const name of [...sessions, ...people, ...writers]) {
      const joined = runCli(['send', 'joining', '--to', name, '--name', name], { env: bus.env });
      assert.equal(joined.code, 0, joined.stderr);
    }
    const everyone = [...sessions, ...people, ...writers];
    for (const name of everyone) runCli(['inbox', '--name', name], { env: bus.env });
    const stopFile = join(bus.dir, 'writers-done');
    const started = process.hrtime.bigint();
    const readerGroups = [sessions.slice(0, 3), sessions.slice(3), [...people, ...writers.slice(0, 4)], writers.slice(4)];
    const readers = readerGroups.map((names) => runNode('inbox-reader.mjs', [JSON.stringify(names), stopFile], bus.env));
    const targets = JSON.stringify({ direct: [...sessions, ...people], repos: REPOS });
    const sent = (await Promise.all(writers.map((name, index) => runNode('mixed-writer.mjs', [name, String(SENDS), String(seed + index), targets], bus.env)))).map(
      (out) => JSON.parse(out) as Sent[],
    );
    writeFileSync(stopFile, '');
    const read = Object.assign({}, ...(await Promise.all(readers)).map((out) => JSON.parse(out) as Record<string, Array<{ id: string }>>)) as Record<string, Array<{ id: string }>>;
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;

    const rows = bus.rows<{ message_id: string; to_agent: string; body: string; read_at: string | null; fanout_id: string | null; to_group: string | null; claimed_by: string | null }>(
      "SELECT message_id, to_agent, body, read_at, fanout_id, to_group, claimed_by FROM messages WHERE body <> 'joining'",
    );
    const byId = new Map(rows.map((row) => [row.message_id, row]));
    const sends = sent.flat();
    assert.equal(sends.length, WRITERS * SENDS);
    let lost = 0;
    let misaddressed = 0;
    const expectedIds = new Set<string>();
    for (const send of sends) {
      assert.equal(send.ids.length, send.recipients.length);
      send.ids.forEach((id, index) => {
        expectedIds.add(id);
        const row = byId.get(id);
        if (row === undefined) lost += 1;
        else if (row.to_agent !== send.recipients[index] || row.body !== send.body) misaddressed += 1;
      });
    }
    const duplicated = rows.length - expectedIds.size + [...byId.keys()].filter((id) => !expectedIds.has(id)).length;
    let misdelivered = 0;
    let unreadLeft = 0;
    for (const [name, messages] of Object.entries(read)) for (const message of messages) if (byId.get(message.id)?.to_agent !== name) misdelivered += 1;
    for (const row of rows) if (row.read_at === null) unreadLeft += 1;
    // Each repo's copies of a fan-out: all claimed, and by one claimer.
    const claims = new Map<string, Set<string | null>>();
    for (const row of rows) {
      if (row.fanout_id === null || row.to_group === null) continue;
      const key = `${row.fanout_id}|${row.to_group}`;
      if (!claims.has(key)) claims.set(key, new Set());
      claims.get(key)?.add(row.claimed_by);
    }
    const badClaims = [...claims.values()].filter((claimers) => claimers.size !== 1 || claimers.has(null)).length;
    const sendRows = readAudit(bus.audit).filter((row) => row.op === 'send' && row.body_preview !== 'joining');
    const sendRowIds = new Set(sendRows.map((row) => String(row.message_id)));
    const verify = runCli(['audit', 'verify', '--json'], { env: bus.env, timeoutMs: 120_000 });
    figure('concurrency', {
      seed,
      writers: WRITERS,
      sends: sends.length,
      stored_rows: rows.length,
      sends_per_second: Math.round(sends.length / seconds),
      lost,
      duplicated,
      misaddressed,
      misdelivered,
      unread_left: unreadLeft,
      fanouts_claimed_once_per_repo: claims.size - badClaims,
      bad_claims: badClaims,
      audit_send_rows: sendRows.length,
      verify_exit: verify.code,
    });
    assert.equal(lost, 0, 'lost');
    assert.equal(duplicated, 0, 'duplicated');
    assert.equal(misaddressed, 0, 'stored for someone else');
    assert.equal(misdelivered, 0, 'misdelivered');
    assert.equal(unreadLeft, 0, 'every message read by the end');
    assert.ok(claims.size > 0 && badClaims === 0, 'every fan-out claimed exactly once per repo');
    assert.equal(sendRows.length, rows.length, 'one send row per stored row');
    assert.equal(sendRowIds.size, rows.length);
    assert.equal(verify.code, 0, verify.stdout);
  } finally {
    bus.cleanup();
  }
});
