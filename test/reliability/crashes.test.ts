/**
 * Reliability: processes killed with SIGKILL in the middle of fan-outs and of claims. The store
 * stays whole (integrity check), no fan-out is half-written, no copy is claimed twice; `audit
 * verify` finds every send the kills left without its row, and `--repair` closes each gap.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { readFileSync } from 'node:fs';
import { waitPastInFlightGrace } from '../helpers/agents.js';
import { ROOT, runCli, tempBus, ON_POSTGRES, type TempBus } from '../helpers/bus-env.js';
import { figure, randomFrom, seedFor } from './report.js';

const REPOS = Array.from({ length: 8 }, (_, index) => `repo${index}`);
const CLIENTS = ['claude', 'codex', 'opencode'];
const FANOUT_KILLS = 24;
const CLAIM_KILLS = 20;

/** Start a worker, wait until it is working, let it run `ms`, kill it; whether the kill hit it running. */
function killMidway(bus: TempBus, args: string[], ms: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, 'test', 'reliability', 'crash-worker.mjs'), ...args], { env: bus.env, cwd: bus.env.HOME, stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.stdout.once('data', () => setTimeout(() => child.kill('SIGKILL'), ms));
    child.on('error', reject);
    child.on('close', (code, signal) => (signal === 'SIGKILL' ? resolve(true) : code === 0 ? resolve(false) : reject(new Error(`worker exited ${code}: ${err}`))));
  });
}

test(`${FANOUT_KILLS + CLAIM_KILLS} kill -9s during fan-outs and claims: the store stays whole, verify finds every gap, repair closes it`, { timeout: 300_000 }, async () => {
  const seed = seedFor('crashes');
  const random = randomFrom(seed);
  const bus = tempBus();
  try {
    const agents = REPOS.flatMap((repo) => CLIENTS.map((client) => `${repo}/${client}`));
    for (const name of [...agents, 'crasher']) assert.equal(runCli(['send', 'joining', '--to', name, '--name', name], { env: bus.env }).code, 0);
    // Repo-wide mail waiting to be claimed.
    for (let round = 0; round < 6; round++) for (const repo of REPOS) assert.equal(runCli(['send', `task ${round}`, '--to', repo, '--name', 'crasher'], { env: bus.env }).code, 0);
    let kills = 0;
    for (let index = 0; index < FANOUT_KILLS; index++) if (await killMidway(bus, ['fanout'], 5 + Math.floor(random() * 120))) kills += 1;
    for (let index = 0; index < CLAIM_KILLS; index++) {
      const names = agents.filter(() => random() < 0.5);
      if (await killMidway(bus, ['claim', JSON.stringify(names)], 5 + Math.floor(random() * 60))) kills += 1;
    }
    assert.ok(kills >= 40, `${kills} kills hit a running process`);

    const integrity = ON_POSTGRES ? 'ok' : String(bus.rows<{ integrity_check: string }>('PRAGMA integrity_check')[0]?.integrity_check);
    const everyone = bus.rows<{ fanout_id: string; copies: number | string }>("SELECT fanout_id, COUNT(*) AS copies FROM messages WHERE addressed_to = '*' GROUP BY fanout_id");
    const recipients = agents.length;
    const partial = everyone.filter((row) => Number(row.copies) !== recipients).length;
    const claims = bus.rows<{ claimers: number | string }>('SELECT COUNT(DISTINCT claimed_by) AS claimers FROM messages WHERE to_group IS NOT NULL AND fanout_id IS NOT NULL GROUP BY fanout_id, to_group');
    const doubleClaims = claims.filter((row) => Number(row.claimers) > 1).length;
    const stored = new Set(bus.rows<{ message_id: string }>('SELECT message_id FROM messages').map((row) => row.message_id));
    // A process killed mid-write can leave the start of a row: read what parses.
    const logged = new Set(
      readFileSync(bus.audit, 'utf8')
        .split('\n')
        .flatMap((line) => {
          try {
            const row = JSON.parse(line) as { op?: string; message_id?: string };
            return row.op === 'send' ? [String(row.message_id)] : [];
          } catch {
            return [];
          }
        }),
    );
    const gaps = [...stored].filter((id) => !logged.has(id)).length;
    await waitPastInFlightGrace(bus);
    const found = runCli(['audit', 'verify', '--json'], { env: bus.env, timeoutMs: 120_000 });
    const report = JSON.parse(found.stdout) as { problems: unknown[]; torn_lines: unknown[]; store: { missing_send_rows: unknown[]; unknown_messages: unknown[] } };
    const repaired = runCli(['audit', 'verify', '--repair', '--json'], { env: bus.env, timeoutMs: 120_000 });
    const after = runCli(['audit', 'verify', '--json'], { env: bus.env, timeoutMs: 120_000 });
    figure('crashes', {
      seed,
      kills,
      fanouts: everyone.length,
      integrity,
      partial_fanouts: partial,
      double_claims: doubleClaims,
      torn_lines: report.torn_lines.length,
      gaps,
      gaps_found: report.store.missing_send_rows.length,
      repaired: (JSON.parse(repaired.stdout) as { repaired: number }).repaired,
      verify_after_repair: after.code,
    });
    assert.equal(integrity, 'ok');
    assert.ok(everyone.length >= FANOUT_KILLS, 'fan-outs were under way');
    assert.equal(partial, 0, 'no fan-out half-written');
    assert.equal(doubleClaims, 0, 'no copy claimed twice');
    assert.deepEqual(report.problems, [], 'the chain is whole');
    assert.equal(report.store.missing_send_rows.length, gaps, 'verify names every gap');
    assert.deepEqual(report.store.unknown_messages, []);
    assert.equal(found.code, gaps === 0 ? 0 : 1);
    assert.equal(repaired.code, 0, repaired.stdout);
    assert.equal(after.code, 0, after.stdout);
  } finally {
    bus.cleanup();
  }
});
