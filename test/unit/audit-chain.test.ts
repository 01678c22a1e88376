import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { splitChained } from '../../src/audit/chain.js';
import { AuditLog, tailAudit } from '../../src/audit/log.js';
import { messageRow } from '../../src/audit/record.js';
import { verifyChain } from '../../src/audit/verify.js';
import { sqliteFileLock } from '../../src/store/sqlite/file-lock.js';

function scratch(): { dir: string; path: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'agent-bus-chain-'));
  return { dir, path: join(dir, 'audit.log'), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

function row(index: number): ReturnType<typeof messageRow> {
  return messageRow('send', '2026-01-01T00:00:00.000000Z', 'alpha', { messageId: `m-${index}`, fromAgent: 'alpha', toAgent: 'beta', addressedTo: 'beta', threadId: 't', body: `body ${index}` });
}

/** A log of `count` sends, written one write each. */
function writeLog(path: string, count: number, maxBytes = 0): void {
  const log = new AuditLog(path, { maxBytes });
  for (let index = 0; index < count; index++) {
    log.append([row(index)]);
    log.flush();
  }
  log.close();
}

function lines(path: string): string[] {
  return readFileSync(path, 'utf8').split('\n').slice(0, -1);
}

function rewrite(path: string, change: (lines: string[]) => string[]): void {
  writeFileSync(path, `${change(lines(path)).join('\n')}\n`);
}

test('a log begins with a genesis and every row carries seq and chain; an intact log verifies', () => {
  const { path, cleanup } = scratch();
  try {
    writeLog(path, 5);
    const all = lines(path);
    assert.equal(all.length, 6);
    assert.match(all[0] as string, /"op":"audit".*"event":"genesis".*"seq":0,"chain":"[0-9a-f]{64}"\}$/);
    assert.deepEqual(all.map((line) => splitChained(line)?.seq), [0, 1, 2, 3, 4, 5]);
    const report = verifyChain(path);
    assert.deepEqual(report.problems, []);
    assert.equal(report.startsWith, 'genesis');
    assert.equal(report.head?.seq, 5);
    // tail shows the bus's rows, not the chain's own.
    assert.deepEqual(tailAudit(path, 10).map((entry) => entry.message_id), ['m-0', 'm-1', 'm-2', 'm-3', 'm-4']);
  } finally {
    cleanup();
  }
});

test('verify names the first bad line and what is wrong: edited, deleted, inserted, reordered, duplicated', () => {
  const cases: Array<{ name: string; change: (lines: string[]) => string[]; line: number; kind: string }> = [
    { name: 'edited body', change: (all) => all.map((line, index) => (index === 3 ? line.replace('body 2', 'body X') : line)), line: 4, kind: 'edited' },
    { name: 'edited seq', change: (all) => all.map((line, index) => (index === 3 ? line.replace('"seq":3', '"seq":9') : line)), line: 4, kind: 'edited' },
    { name: 'deleted', change: (all) => all.filter((_, index) => index !== 2), line: 3, kind: 'missing' },
    { name: 'inserted row without chain', change: (all) => [...all.slice(0, 3), JSON.stringify({ ts: 'x', op: 'send' }), ...all.slice(3)], line: 4, kind: 'inserted' },
    { name: 'inserted forged row', change: (all) => [...all.slice(0, 3), (all[3] as string).replace('body 2', 'forged'), ...all.slice(3)], line: 4, kind: 'inserted' },
    { name: 'inserted junk', change: (all) => [...all.slice(0, 3), 'not json at all', ...all.slice(3)], line: 4, kind: 'inserted' },
    { name: 'reordered', change: (all) => [...all.slice(0, 2), all[3] as string, all[2] as string, ...all.slice(4)], line: 3, kind: 'reordered' },
    { name: 'duplicated', change: (all) => [...all.slice(0, 3), all[2] as string, ...all.slice(3)], line: 4, kind: 'inserted' },
    { name: 'chain value wiped', change: (all) => all.map((line, index) => (index === 3 ? line.replace(/,"chain":"[0-9a-f]+"/, '') : line)), line: 4, kind: 'edited' },
    { name: 'start removed', change: (all) => all.slice(2), line: 1, kind: 'start-missing' },
  ];
  for (const { name, change, line, kind } of cases) {
    const { path, cleanup } = scratch();
    try {
      writeLog(path, 6);
      rewrite(path, change);
      const report = verifyChain(path);
      assert.ok(report.problems.length > 0, `${name}: found`);
      const first = report.problems[0];
      assert.equal(first?.line, line, `${name}: line (${JSON.stringify(report.problems)})`);
      assert.equal(first?.kind, kind, `${name}: kind (${JSON.stringify(report.problems)})`);
      assert.equal(first?.file, path);
      // One change is one problem: the check takes the chain up again after it.
      assert.equal(report.problems.length, 1, `${name}: ${JSON.stringify(report.problems)}`);
    } finally {
      cleanup();
    }
  }
});

test('a line cut short by a killed write is reported as torn, not as tampering; the chain goes on past it', () => {
  const { path, cleanup } = scratch();
  try {
    writeLog(path, 4);
    // A process killed mid-write leaves the start of a row with no newline; the next writer
    // ends that line and chains from the last whole row.
    const whole = lines(path);
    writeFileSync(path, `${whole.join('\n')}\n${(whole[2] as string).slice(0, 70)}`);
    const log = new AuditLog(path);
    log.append([row(10)]);
    log.close();
    const middle = verifyChain(path);
    assert.deepEqual(middle.problems, []);
    assert.deepEqual(middle.torn.map((place) => place.line), [6]);
    assert.equal(middle.head?.seq, 5);
    // Torn at the very end, with nothing written after it.
    writeFileSync(path, `${lines(path).join('\n')}\n${(whole[1] as string).slice(0, 40)}`);
    const end = verifyChain(path);
    assert.deepEqual(end.problems, []);
    assert.deepEqual(end.torn.map((place) => place.line), [6, 8]);
  } finally {
    cleanup();
  }
});

test('a log written before the chain began gets a genesis on the next write; its old rows count as legacy', () => {
  const { path, cleanup } = scratch();
  try {
    writeFileSync(path, `${JSON.stringify(row(100))}\n${JSON.stringify(row(101))}`); // the last line without its newline
    writeLog(path, 2);
    const report = verifyChain(path);
    assert.deepEqual(report.problems, []);
    assert.equal(report.legacyRows, 2);
    assert.equal(report.head?.seq, 2);
    assert.equal(tailAudit(path, 10).length, 4);
  } finally {
    cleanup();
  }
});

test('AGENT_BUS_AUDIT_MAX_BYTES: the log rotates to .1, .2 …, the chain carried across; tail and verify read them all', () => {
  const { path, cleanup } = scratch();
  try {
    writeLog(path, 40, 2_000);
    assert.ok(existsSync(`${path}.1`) && existsSync(`${path}.2`), 'rotated files');
    for (const file of [path, `${path}.1`, `${path}.2`]) {
      assert.ok(statSync(file).size <= 2_000, `${file} within the limit`);
      assert.equal(statSync(file).mode & 0o777, 0o600, `${file} private`);
    }
    const report = verifyChain(path);
    assert.deepEqual(report.problems, []);
    assert.equal(report.startsWith, 'genesis');
    assert.ok(report.files.length >= 3);
    assert.match(lines(path)[0] as string, /"event":"continue"/);
    assert.deepEqual(tailAudit(path, 100).map((entry) => entry.message_id), Array.from({ length: 40 }, (_, index) => `m-${index}`));
    // With the oldest files deleted, what is left still verifies from the row that carries the chain on.
    const oldest = report.files[0]?.path as string;
    rmSync(oldest);
    const rest = verifyChain(path);
    assert.deepEqual(rest.problems, []);
    assert.equal(rest.startsWith, 'continue');
    // A row removed at a file's boundary is found.
    rewrite(`${path}.1`, (all) => all.slice(0, -1));
    const cut = verifyChain(path);
    assert.equal(cut.problems[0]?.kind, 'missing');
    assert.equal(cut.problems[0]?.file, path);
    assert.equal(cut.problems[0]?.line, 1);
  } finally {
    cleanup();
  }
});

test('the append lock is a private SQLite file that stays one page and leaves no journal', () => {
  const { dir, cleanup } = scratch();
  try {
    const lockPath = join(dir, 'audit.log.lock');
    const first = sqliteFileLock(lockPath);
    const order: string[] = [];
    for (let index = 0; index < 100; index++) first.hold(() => order.push(`held ${index}`));
    assert.equal(order.length, 100);
    assert.equal(statSync(lockPath).mode & 0o777, 0o600);
    assert.ok(statSync(lockPath).size <= 4096, "no more than SQLite's header page");
    assert.equal(existsSync(`${lockPath}-journal`), false);
    first.close();
  } finally {
    cleanup();
  }
});
