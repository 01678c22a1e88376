/**
 * The reservations port, on both engines: grants, conflicts and overlap, all or none, renewal,
 * release, expiry by the clock, a session's end, edits and collisions, and a race for one path.
 */
import assert from 'node:assert/strict';
import { formatStamp, nowMicros } from '../../../src/model/clock.js';
import { ReservationConflictError, type ReserveRequest } from '../../../src/core/reservation-ops.js';
import { coversFile } from '../../../src/core/reservation-paths.js';
import { readAudit } from '../../helpers/bus-env.js';
import { conformance, endedServers, fakeLiveness, startSession, type CoreBus } from './harness.js';

const ROOT = '/repos/shop';

function request(holder: string, paths: string[], extra: Partial<ReserveRequest> = {}): ReserveRequest {
  return { holder, repo: 'shop', repoRoot: ROOT, paths, sessionBound: false, ...extra };
}

async function refusal(work: Promise<unknown>): Promise<ReservationConflictError> {
  try {
    await work;
  } catch (error) {
    if (error instanceof ReservationConflictError) return error;
    throw error;
  }
  assert.fail('the reservation was granted');
}

function auditOf(ctx: CoreBus, ops: string[]): Array<Record<string, unknown>> {
  return readAudit(ctx.paths.audit).filter((row) => ops.includes(String(row.op)));
}

conformance('reservations: an exclusive hold refuses another holder whose paths overlap, naming holder, path, until and reason; shared ones share', async (ctx) => {
  const [granted] = await ctx.bus.reservations.reserve(request('shop/claude-1', ['src/auth.ts'], { reason: 'rewriting login' }));
  assert.equal(granted?.path, 'src/auth.ts');
  assert.equal(granted?.mode, 'exclusive');
  const refused = await refusal(ctx.bus.reservations.reserve(request('shop/codex', ['src/*.ts'])));
  assert.equal(refused.holder, 'shop/claude-1');
  assert.equal(refused.path, 'src/auth.ts');
  assert.match(refused.message, new RegExp(`^'src/auth\\.ts' is reserved by shop/claude-1 for another \\d+ (?:min|h) \\(rewriting login\\), which overlaps 'src/\\*\\.ts': nothing was reserved$`));
  // Not overlapping: granted. Another repo: untouched by this one's.
  await ctx.bus.reservations.reserve(request('shop/codex', ['src/*.md']));
  await ctx.bus.reservations.reserve({ ...request('docs/codex', ['src/auth.ts']), repo: 'docs', repoRoot: '/repos/docs' });
  // Shared with shared: fine; shared against exclusive: refused either way.
  await ctx.bus.reservations.reserve(request('shop/claude-1', ['package.json'], { shared: true }));
  await ctx.bus.reservations.reserve(request('shop/codex', ['package.json'], { shared: true }));
  await refusal(ctx.bus.reservations.reserve(request('shop/opencode', ['package.json'])));
  await refusal(ctx.bus.reservations.reserve(request('shop/opencode', ['src/auth.ts'], { shared: true })));
  const listed = await ctx.bus.reservations.list('shop');
  assert.deepEqual(
    listed.map((row) => [row.holder, row.path, row.mode]),
    [
      ['shop/claude-1', 'src/auth.ts', 'exclusive'],
      ['shop/codex', 'src/*.md', 'exclusive'],
      ['shop/claude-1', 'package.json', 'shared'],
      ['shop/codex', 'package.json', 'shared'],
    ],
  );
  assert.equal((await ctx.bus.reservations.list()).length, 5, 'every repo');
  assert.deepEqual(
    auditOf(ctx, ['reserve']).map((row) => [row.actor, row.body_preview, row.mode]),
    listed.slice(0, 2).map((row) => [row.holder, row.path, row.mode]).concat([['docs/codex', 'src/auth.ts', 'exclusive']], listed.slice(2).map((row) => [row.holder, row.path, row.mode])),
  );
});

conformance('reservations: several paths are all or none; reserving again renews; release by path, all, or a person by holder', async (ctx) => {
  await ctx.bus.reservations.reserve(request('shop/claude-1', ['src/auth.ts']));
  await refusal(ctx.bus.reservations.reserve(request('shop/codex', ['README.md', 'src/**'])));
  assert.deepEqual((await ctx.bus.reservations.list('shop')).map((row) => row.path), ['src/auth.ts'], 'README.md was not reserved either');
  const first = (await ctx.bus.reservations.list('shop'))[0];
  ctx.clock.advance(60_000);
  const [renewed] = await ctx.bus.reservations.reserve(request('shop/claude-1', [`${ROOT}/src/auth.ts`], { ttlMs: 7_200_000 }));
  assert.equal(renewed?.id, first?.id, 'the same reservation, renewed');
  assert.ok((renewed?.until ?? '') > (first?.until ?? ''), 'until later');
  assert.equal((await ctx.bus.reservations.list('shop')).length, 1);
  await ctx.bus.reservations.reserve(request('shop/claude-1', ['docs/', 'lib/a.ts']));
  const released = await ctx.bus.reservations.release({ holder: 'shop/claude-1', repo: 'shop', paths: ['docs/'], repoRoot: ROOT, actor: 'shop/claude-1' });
  assert.deepEqual(released.map((row) => row.path), ['docs/**']);
  const byPerson = await ctx.bus.reservations.release({ holder: 'shop/claude-1', paths: null, actor: 'human' });
  assert.deepEqual(byPerson.map((row) => row.path).sort(), ['lib/a.ts', 'src/auth.ts']);
  assert.deepEqual(await ctx.bus.reservations.list(), []);
  assert.deepEqual(await ctx.bus.reservations.release({ holder: 'shop/claude-1', paths: null, actor: 'human' }), [], 'nothing left to release');
  const releases = auditOf(ctx, ['release']);
  assert.deepEqual(releases.map((row) => [row.actor, row.from, row.body_preview]).sort(), [
    ['human', 'shop/claude-1', 'lib/a.ts'],
    ['human', 'shop/claude-1', 'src/auth.ts'],
    ['shop/claude-1', 'shop/claude-1', 'docs/**'],
  ]);
});

conformance('reservations: a bad path, no path, or a time to live past 24 hours is refused and nothing is reserved', async (ctx) => {
  await assert.rejects(ctx.bus.reservations.reserve(request('shop/codex', ['src/a.ts', '../etc/passwd'])), /leaves the repo/);
  await assert.rejects(ctx.bus.reservations.reserve(request('shop/codex', ['/etc/passwd'])), /outside the repo/);
  await assert.rejects(ctx.bus.reservations.reserve(request('shop/codex', [])), /at least one path/);
  await assert.rejects(ctx.bus.reservations.reserve(request('shop/codex', ['a.ts'], { ttlMs: 25 * 3_600_000 })), /24 hours at the most/);
  assert.deepEqual(await ctx.bus.reservations.list(), []);
});

conformance('reservations: expire when the clock passes their end, audited once, and no longer refuse', async (ctx) => {
  await ctx.bus.reservations.reserve(request('shop/claude-1', ['src/auth.ts'], { ttlMs: 60_000 }));
  ctx.clock.advance(59_000);
  await refusal(ctx.bus.reservations.reserve(request('shop/codex', ['src/auth.ts'])));
  ctx.clock.advance(2_000);
  assert.deepEqual(await ctx.bus.reservations.heldByOthers('shop/codex', 'shop', ['src/auth.ts']), [], 'an expired hold holds nothing');
  const [mine] = await ctx.bus.reservations.reserve(request('shop/codex', ['src/auth.ts']));
  assert.equal(mine?.holder, 'shop/codex');
  assert.deepEqual(auditOf(ctx, ['expire']).map((row) => [row.from, row.body_preview]), [['shop/claude-1', 'src/auth.ts']]);
  await ctx.bus.reservations.list();
  assert.equal(auditOf(ctx, ['expire']).length, 1, 'ended once');
});


conformance(
  "reservations: a session's hold ends when its process is gone; a person's lives until released or expired",
  async (ctx) => {
    const session = await startSession(ctx, 'shop/claude');
    await ctx.bus.reservations.reserve(request(session.name, ['src/auth.ts'], { sessionBound: true }));
    await ctx.bus.reservations.reserve(request('human', ['README.md']));
    assert.deepEqual((await ctx.bus.reservations.heldByOthers('shop/codex', 'shop', ['src/auth.ts'])).map((held) => held.holder), [session.name]);
    endedServers.add(session.pid);
    assert.deepEqual(await ctx.bus.reservations.heldByOthers('shop/codex', 'shop', ['src/auth.ts']), [], 'a crashed session holds nothing');
    await ctx.bus.reservations.reserve(request('shop/codex', ['src/auth.ts']));
    assert.deepEqual((await ctx.bus.reservations.list('shop')).map((row) => row.holder), ['human', 'shop/codex']);
    assert.deepEqual(auditOf(ctx, ['expire']).map((row) => [row.from, row.body_preview]), [[session.name, 'src/auth.ts']]);
  },
  {},
  fakeLiveness,
);

conformance('edits: a second agent writing a file within the window is a collision, once per pair and file per window', async (ctx) => {
  assert.deepEqual(await ctx.bus.reservations.recordWrite('shop/claude-1', 'shop', 'src/auth.ts'), []);
  assert.deepEqual(await ctx.bus.reservations.recordWrite('shop/claude-1', 'shop', 'src/auth.ts'), [], 'one agent writing again is no collision');
  ctx.clock.advance(10_000);
  const [collision] = await ctx.bus.reservations.recordWrite('shop/codex', 'shop', 'src/auth.ts');
  assert.equal(collision?.other, 'shop/claude-1');
  assert.equal(collision?.path, 'src/auth.ts');
  ctx.clock.advance(10_000);
  assert.deepEqual(await ctx.bus.reservations.recordWrite('shop/claude-1', 'shop', 'src/auth.ts'), [], 'the pair was alerted for this file in this window');
  assert.deepEqual(await ctx.bus.reservations.recordWrite('shop/codex', 'docs', 'src/auth.ts'), [], 'another repo');
  assert.deepEqual(await ctx.bus.reservations.recordWrite('shop/codex', 'shop', 'src/other.ts'), [], 'another file');
  ctx.clock.advance(6 * 60_000);
  assert.deepEqual(await ctx.bus.reservations.recordWrite('shop/opencode', 'shop', 'src/auth.ts'), [], 'the others wrote it longer ago than the window');
  ctx.clock.advance(30_000);
  assert.deepEqual((await ctx.bus.reservations.recordWrite('shop/codex', 'shop', 'src/auth.ts')).map((one) => one.other), ['shop/opencode'], 'a new window, a new pair');
  assert.deepEqual(
    auditOf(ctx, ['collision']).map((row) => [row.actor, row.to, row.body_preview]),
    [
      ['shop/codex', 'shop/claude-1', 'src/auth.ts'],
      ['shop/codex', 'shop/opencode', 'src/auth.ts'],
    ],
  );
  assert.equal(await ctx.store.pruneEdits(formatStamp(ctx.clock.nowMicros() + 3_600_000_000)), 5 + 2, 'retention removes the edits and the collisions noted');
});

conformance('reservations: 16 holders racing for one path: exactly one is granted', async (ctx) => {
  const holders = Array.from({ length: 16 }, (_, index) => `shop/agent-${index + 1}`);
  const outcomes = await Promise.allSettled(holders.map((holder) => ctx.bus.reservations.reserve(request(holder, ['src/contested.ts']))));
  assert.equal(outcomes.filter((outcome) => outcome.status === 'fulfilled').length, 1);
  assert.ok(outcomes.every((outcome) => outcome.status === 'fulfilled' || outcome.reason instanceof ReservationConflictError));
  assert.equal((await ctx.bus.reservations.list('shop')).length, 1);
});

conformance("reservations: the look for those that may cover a file returns every one coversFile says covers it, and spares most others", async (ctx) => {
  // Patterns of every shape (literal, folder, *, **, ?, braces, sets, extglobs, dots, `%` and `_`, which
  // LIKE reads), each held by its own holder; files of as many shapes.
  const segments = ['src', 'lib', 'a.ts', 'b_c.ts', '*.ts', '**', '?.ts', '*', '.env', 'x*', '*y', '{a,b}.ts', '[ab].ts', '@(a|b).ts', 'dir', '100%', 'a_b'];
  const patterns = new Set<string>();
  for (const first of segments) {
    patterns.add(first);
    for (const second of segments) {
      patterns.add(`${first}/${second}`);
      for (const third of ['a.ts', '**', 'deep']) patterns.add(`${first}/${second}/${third}`);
    }
  }
  const held = [...patterns].filter((pattern) => pattern !== '**' && !pattern.startsWith('**/**'));
  const now = formatStamp(nowMicros());
  const until = formatStamp(nowMicros() + 3_600_000_000);
  const rows = held.map((pattern, index) => ({ reservationId: `r-${index}`, repo: 'shop', holder: `shop/agent-${index}`, pattern, mode: 'exclusive' as const, reason: null, createdAt: now, expiresAt: until, sessionBound: false }));
  await ctx.store.reserve({ repo: 'shop', now, decide: () => ({ grant: rows, renew: [], drop: [], refused: null }) });
  const names = ['src', 'lib', 'a.ts', 'b.ts', 'b_c.ts', 'x.md', '.env', 'dir', 'xy', 'deep', '100%', 'a_b', 'bxc.ts'];
  const files = new Set<string>();
  for (const first of names) {
    files.add(first);
    for (const second of names) {
      files.add(`${first}/${second}`);
      files.add(`${first}/${second}/a.ts`);
    }
  }
  let returned = 0;
  let covering = 0;
  for (const file of files) {
    const found = new Set((await ctx.store.reservationsCovering({ repo: 'shop', now, files: [file], foldCase: false })).map((row) => row.pattern));
    const covers = held.filter((pattern) => coversFile(pattern, file, { nocase: false }));
    for (const pattern of covers) assert.ok(found.has(pattern), `${pattern} covers ${file} and was not returned`);
    returned += found.size;
    covering += covers.length;
  }
  assert.ok(covering > 1000, `the cases exercise coverage (${covering})`);
  assert.ok(returned < files.size * held.length * 0.5, `most reservations are spared (${returned} of ${files.size * held.length})`);
  // Several files at once, another repo, expired: as the one-file looks.
  const two = await ctx.store.reservationsCovering({ repo: 'shop', now, files: ['src/a.ts', 'lib/b.ts'], foldCase: false });
  assert.ok(two.some((row) => row.pattern === 'src/a.ts') && two.some((row) => row.pattern === 'lib/*'));
  assert.deepEqual(await ctx.store.reservationsCovering({ repo: 'docs', now, files: ['src/a.ts'], foldCase: false }), []);
  assert.deepEqual(await ctx.store.reservationsCovering({ repo: 'shop', now: formatStamp(nowMicros() + 7_200_000_000), files: ['src/a.ts'], foldCase: false }), []);
  // Folding case: every live one of the repo (the core decides).
  assert.equal((await ctx.store.reservationsCovering({ repo: 'shop', now, files: ['SRC/A.TS'], foldCase: true })).length, held.length);
});

conformance('reservations: each is anchored at the literal folders its pattern starts with, the look for those that may cover a file goes by the anchor, and a row an older agent-bus wrote without one is still found', async (ctx) => {
  const now = formatStamp(nowMicros());
  const until = formatStamp(nowMicros() + 3_600_000_000);
  const patterns = ['src/app/*.ts', 'docs/**', 'lib/x.ts', '**/*.md', 'pkg/{a,b}/c.ts'];
  const rows = patterns.map((pattern, index) => ({ reservationId: `r-${index}`, repo: 'shop', holder: `shop/agent-${index}`, pattern, mode: 'exclusive' as const, reason: null, createdAt: now, expiresAt: until, sessionBound: false }));
  await ctx.store.reserve({ repo: 'shop', now, decide: () => ({ grant: rows, renew: [], drop: [], refused: null }) });
  const anchors = ctx.paths.rows<{ pattern: string; anchor: string }>('SELECT pattern, anchor FROM reservations ORDER BY pattern');
  assert.deepEqual(
    anchors.map((row) => [row.pattern, row.anchor]),
    [['**/*.md', ''], ['docs/**', 'docs'], ['lib/x.ts', 'lib/x.ts'], ['pkg/{a,b}/c.ts', 'pkg'], ['src/app/*.ts', 'src/app']],
  );
  const covering = async (file: string): Promise<string[]> => (await ctx.store.reservationsCovering({ repo: 'shop', now, files: [file], foldCase: false })).map((row) => row.pattern).sort();
  assert.deepEqual(await covering('docs/guide/intro.md'), ['**/*.md', 'docs/**']);
  assert.deepEqual(await covering('lib/x.ts/inner.ts'), ['lib/x.ts']);
  // The anchor decides what is read: a row anchored elsewhere is not.
  ctx.paths.sql("UPDATE reservations SET anchor = 'elsewhere' WHERE pattern = 'docs/**'");
  assert.deepEqual(await covering('docs/guide/intro.md'), ['**/*.md']);
  // An older agent-bus writes no anchor: its rows are always read.
  ctx.paths.sql("UPDATE reservations SET anchor = NULL WHERE pattern IN ('docs/**', 'src/app/*.ts')");
  assert.deepEqual(await covering('docs/guide/intro.md'), ['**/*.md', 'docs/**']);
  assert.deepEqual(await covering('src/app/main.ts'), ['src/app/*.ts']);
});
