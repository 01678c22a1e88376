import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { followLines } from '../../src/audit/follow.js';
import { AuditLog, tailAudit } from '../../src/audit/log.js';
import { messageRow } from '../../src/audit/record.js';
import { verifyChain } from '../../src/audit/verify.js';
import { waitUntil } from '../helpers/wait.js';

function scratch(): { dir: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'agent-bus-audit-'));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

function row(index: number): ReturnType<typeof messageRow> {
  return messageRow('send', `2026-01-01T00:00:${String(index % 60).padStart(2, '0')}.000000Z`, 'alpha', {
    messageId: `m-${index}`,
    fromAgent: 'alpha',
    toAgent: 'beta',
    addressedTo: 'beta',
    threadId: 't',
    body: `body ${index}`,
  });
}

test('append creates a private file in a private folder, one line per row', () => {
  const { dir, cleanup } = scratch();
  try {
    const path = join(dir, 'nested', 'audit.log');
    const log = new AuditLog(path);
    log.append([row(1), row(2)]);
    log.append([]);
    log.append([row(3)]);
    log.close();
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.equal(statSync(join(dir, 'nested')).mode & 0o777, 0o700);
    assert.deepEqual(tailAudit(path, 10).map((entry) => entry.message_id), ['m-1', 'm-2', 'm-3']);
  } finally {
    cleanup();
  }
});

test('tail returns the last rows oldest first and skips malformed lines', () => {
  const { dir, cleanup } = scratch();
  try {
    const path = join(dir, 'audit.log');
    const log = new AuditLog(path);
    for (let index = 0; index < 2000; index++) log.append([row(index)]);
    log.close();
    appendFileSync(path, 'not json\n\n[1,2]\n');
    log.append([row(2000)]);
    log.close();
    assert.deepEqual(tailAudit(path, 3).map((entry) => entry.message_id), ['m-1998', 'm-1999', 'm-2000']);
    assert.equal(tailAudit(path, 5000).length, 2001);
    assert.deepEqual(tailAudit(path, 0), []);
    assert.deepEqual(tailAudit(join(dir, 'missing.log'), 5), []);
  } finally {
    cleanup();
  }
});

test('tail seeks from the end: a huge log costs no more than a small one', () => {
  const { dir, cleanup } = scratch();
  try {
    const path = join(dir, 'audit.log');
    writeFileSync(path, '');
    // A 3 GiB sparse prefix: reading the whole file would fail (Node cannot buffer it) or take minutes.
    truncateSync(path, 3 * 1024 ** 3);
    appendFileSync(path, '\n');
    const log = new AuditLog(path);
    for (let index = 0; index < 5; index++) log.append([row(index)]);
    log.close();
    assert.deepEqual(tailAudit(path, 5).map((entry) => entry.message_id), ['m-0', 'm-1', 'm-2', 'm-3', 'm-4']);
  } finally {
    cleanup();
  }
});

test('an overlong line is skipped without buffering it', () => {
  const { dir, cleanup } = scratch();
  try {
    const path = join(dir, 'audit.log');
    const log = new AuditLog(path);
    log.append([row(1)]);
    log.close();
    appendFileSync(path, `${'x'.repeat(3 * 1024 * 1024)}\n`);
    log.append([row(2)]);
    log.close();
    assert.deepEqual(tailAudit(path, 10).map((entry) => entry.message_id), ['m-1', 'm-2']);
  } finally {
    cleanup();
  }
});

const waitFor = (check: () => boolean, what: string): Promise<void> => waitUntil(check, what, 5000, 10);

test('following sees appends, a truncation and a rotated file', async () => {
  const { dir, cleanup } = scratch();
  const path = join(dir, 'audit.log');
  writeFileSync(path, 'old line\n');
  const lines: string[] = [];
  const follower = followLines(path, (line) => lines.push(line), { pollMs: 5000 });
  try {
    appendFileSync(path, 'one\ntw');
    await waitFor(() => lines.includes('one'), 'an appended line');
    appendFileSync(path, 'o\n');
    await waitFor(() => lines.includes('two'), 'a line completed by a second write');
    assert.ok(!lines.includes('old line'), 'starts at the end');
    truncateSync(path, 0);
    appendFileSync(path, 'after truncation\n');
    await waitFor(() => lines.includes('after truncation'), 'a line after truncation');
    renameSync(path, `${path}.1`);
    writeFileSync(path, 'rotated\n');
    await waitFor(() => lines.includes('rotated'), 'a line in the rotated file');
    assert.deepEqual(lines, ['one', 'two', 'after truncation', 'rotated']);
  } finally {
    follower.close();
    cleanup();
  }
});

test('a follower closed from inside its own line handler reads no further, whatever is left to read', async () => {
  const { dir, cleanup } = scratch();
  const path = join(dir, 'audit.log');
  writeFileSync(path, '');
  const lines: string[] = [];
  // `tail -f | head -1`: the first line written fails (the reader went), and the follower is closed mid-chunk.
  const follower = followLines(path, (line) => {
    lines.push(line);
    follower.close();
  }, { pollMs: 5000 });
  try {
    appendFileSync(path, 'one\ntwo\nthree\n');
    await waitFor(() => lines.length > 0, 'the first line');
    appendFileSync(path, 'four\n');
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.deepEqual(lines, ['one'], 'nothing after the close');
  } finally {
    follower.close();
    cleanup();
  }
});

test('following a log that does not exist yet picks it up when it appears', async () => {
  const { dir, cleanup } = scratch();
  const path = join(dir, 'later.log');
  const lines: string[] = [];
  const follower = followLines(path, (line) => lines.push(line), { pollMs: 5000 });
  try {
    writeFileSync(path, 'first\n');
    await waitFor(() => lines.includes('first'), 'the first line of a new file');
  } finally {
    follower.close();
    cleanup();
  }
});

test('a long-running writer follows a rotated log to its new file', () => {
  const { dir, cleanup } = scratch();
  try {
    const path = join(dir, 'audit.log');
    const log = new AuditLog(path);
    log.append([row(1)]);
    log.flush();
    renameSync(path, `${path}.1`);
    log.append([row(2)]);
    log.flush();
    log.close();
    // The new file carries the chain on from the one moved aside; tail reads both.
    assert.deepEqual(tailAudit(path, 5).map((entry) => entry.message_id), ['m-1', 'm-2']);
    assert.deepEqual(tailAudit(`${path}.1`, 5).map((entry) => entry.message_id), ['m-1']);
    assert.deepEqual(verifyChain(path).problems, []);
    assert.match(readFileSync(path, 'utf8').split('\n')[0] ?? '', /"event":"continue"/);
  } finally {
    cleanup();
  }
});

test('a write that fails is reported, not thrown', () => {
  const { dir, cleanup } = scratch();
  try {
    const reports: string[] = [];
    const log = new AuditLog(dir, { onError: (message) => reports.push(message) });
    log.append([row(1)]);
    assert.doesNotThrow(() => log.flush());
    assert.match(reports[0] ?? '', /could not write 1 row\(s\) to the audit log at .*EISDIR/);
  } finally {
    cleanup();
  }
});
