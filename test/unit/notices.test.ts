/** The notice rules as pure functions: validation, subscriptions, order, eviction and the caps on one hook's output. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidInputError } from '../../src/model/errors.js';
import {
  CUT_MARKER,
  DEFAULT_PRIORITY,
  DEFAULT_TTL_SECONDS,
  MAX_TTL_SECONDS,
  compareNotices,
  cutToBytes,
  evictionVictims,
  parseChannel,
  parsePriority,
  parseSeverity,
  parseTtl,
  selectNotices,
  type NoticeCandidate,
  type Severity,
} from '../../src/core/notices.js';
import { parseSubscriptions, receives } from '../../src/core/subscriptions.js';
import { noticeBlock, renderNotice } from '../../src/hooks/notice-text.js';

/** selectNotices keeps this many bytes of the budget for the block's heading, hint and held-back line (HEADER_ALLOWANCE in notices.ts). */
const HEADER_ALLOWANCE = 400;

let counter = 0;
function notice(fields: Partial<NoticeCandidate> = {}): NoticeCandidate {
  counter += 1;
  return {
    noticeId: `n${String(counter).padStart(3, '0')}`,
    channel: 'ops',
    severity: 'info',
    title: null,
    body: 'body',
    source: 'tester',
    priority: DEFAULT_PRIORITY,
    contentHash: `hash${counter}`,
    createdAt: '2026-01-01T00:00:00.000000Z',
    expiresAt: '2026-01-02T00:00:00.000000Z',
    deliveredAt: null,
    ...fields,
  };
}

const due = (critical: number, alert: number, info: number): Record<Severity, number> => ({ critical, alert, info });
const ids = (notices: Array<{ noticeId: string }>): string[] => notices.map((item) => item.noticeId);

test('parseTtl: units, plain seconds and numbers', () => {
  const cases: Array<[string | number, number]> = [
    ['45s', 45],
    ['30m', 1800],
    ['4h', 14_400],
    ['1d', 86_400],
    ['90', 90],
    [' 2H ', 7200],
    ['30d', MAX_TTL_SECONDS],
    [90, 90],
    [MAX_TTL_SECONDS, MAX_TTL_SECONDS],
  ];
  for (const [raw, seconds] of cases) assert.equal(parseTtl(raw, 'info'), seconds, `ttl ${JSON.stringify(raw)}`);
});

test('parseTtl: no TTL gives the severity default', () => {
  assert.deepEqual(DEFAULT_TTL_SECONDS, { critical: 1800, alert: 3600, info: 14_400 });
  for (const empty of [undefined, null, '', '   ']) {
    assert.equal(parseTtl(empty, 'critical'), 1800, `critical ${JSON.stringify(empty)}`);
    assert.equal(parseTtl(empty, 'alert'), 3600, `alert ${JSON.stringify(empty)}`);
    assert.equal(parseTtl(empty, 'info'), 14_400, `info ${JSON.stringify(empty)}`);
  }
  assert.equal(parseTtl('10m', 'critical'), 600, 'a given TTL wins over the default');
});

test('parseTtl: bad TTLs throw InvalidInputError naming the value', () => {
  const format = /^bad TTL '.*' \(.*\): use seconds \(90\), or numbers with s, m, h, d or w, largest first \(30s, 5m, 12h, 90d, 1h30m\)$/;
  const positive = /^bad TTL '.*': it must be (a positive whole number of seconds|more than nothing)$/;
  const tooLong = /^bad TTL '.*': the longest is 30d$/;
  const cases: Array<[string | number, RegExp]> = [
    ['5x', format],
    ['-1', format],
    ['1.5', format],
    ['m', format],
    ['0', positive],
    ['0s', positive],
    [0, positive],
    [-1, positive],
    [1.5, positive],
    [Number.NaN, positive],
    ['31d', tooLong],
    ['720h1', format],
    [String(MAX_TTL_SECONDS + 1), tooLong],
    [MAX_TTL_SECONDS + 1, tooLong],
  ];
  for (const [raw, message] of cases) {
    assert.throws(() => parseTtl(raw, 'info'), (error: unknown) => error instanceof InvalidInputError && message.test(error.message), `ttl ${String(raw)}`);
  }
  assert.throws(() => parseTtl('5x', 'info'), { message: "bad TTL '5x' ('x' is no unit): use seconds (90), or numbers with s, m, h, d or w, largest first (30s, 5m, 12h, 90d, 1h30m)" });
  assert.equal(parseTtl('1h30m', 'info'), 5400, 'units combined, as every duration');
});

test('parseSeverity: case-insensitive, info by default, unknown refused', () => {
  assert.equal(parseSeverity('critical'), 'critical');
  assert.equal(parseSeverity('ALERT'), 'alert');
  assert.equal(parseSeverity(' Info '), 'info');
  for (const empty of [undefined, null, '', '  ']) assert.equal(parseSeverity(empty), 'info', JSON.stringify(empty));
  assert.throws(() => parseSeverity('loud'), { name: 'InvalidInputError', message: "unknown severity 'loud': use info, alert or critical" });
  assert.throws(() => parseSeverity('warning'), InvalidInputError);
});

test('parseChannel: null for empty, names kept, bad names refused', () => {
  for (const empty of [undefined, null, '', '   ']) assert.equal(parseChannel(empty), null, JSON.stringify(empty));
  for (const name of ['ops', 'brain.hot-arcs_2', '9lives', 'A']) assert.equal(parseChannel(name), name);
  assert.equal(parseChannel('  deploy  '), 'deploy', 'trimmed');
  assert.equal(parseChannel('a'.repeat(64)), 'a'.repeat(64), '64 characters is the limit');
  for (const bad of ['two words', '*', '.hidden', '-dash', '_under', 'a/b', 'a'.repeat(65), 'émoji']) {
    assert.throws(
      () => parseChannel(bad),
      (error: unknown) => error instanceof InvalidInputError && error.message.startsWith(`bad channel '${bad}': use up to 64 letters`),
      bad,
    );
  }
});

test('parsePriority: default 5, whole numbers from -1000 to 1000', () => {
  for (const empty of [undefined, null, '']) assert.equal(parsePriority(empty), DEFAULT_PRIORITY);
  assert.equal(DEFAULT_PRIORITY, 5);
  assert.equal(parsePriority('10'), 10);
  assert.equal(parsePriority(' -3 '), -3);
  assert.equal(parsePriority(0), 0);
  assert.equal(parsePriority(1000), 1000);
  assert.equal(parsePriority('-1000'), -1000);
  for (const bad of ['1001', -1001, '1.5', 2.5, 'high', Number.NaN]) {
    assert.throws(() => parsePriority(bad), (error: unknown) => error instanceof InvalidInputError && error.message === `bad priority '${bad}': use a whole number from -1000 to 1000`, String(bad));
  }
});

test('parseSubscriptions: trimmed, de-duplicated, in order', () => {
  assert.deepEqual(parseSubscriptions({ AGENT_BUS_CHANNELS: ' alpha, beta ,alpha,gamma' }), { channels: ['alpha', 'beta', 'gamma'], all: false });
  assert.deepEqual(parseSubscriptions({ AGENT_BUS_CHANNELS: ',, ,' }), { channels: [], all: false });
  assert.deepEqual(parseSubscriptions({}), { channels: [], all: false }, 'unset: global notices only');
});

test('parseSubscriptions: AGENTIHOOKS_BASE_CHANNELS only when AGENT_BUS_CHANNELS is unset', () => {
  assert.deepEqual(parseSubscriptions({ AGENTIHOOKS_BASE_CHANNELS: 'brain,amygdala' }).channels, ['brain', 'amygdala']);
  assert.deepEqual(parseSubscriptions({ AGENT_BUS_CHANNELS: 'ops', AGENTIHOOKS_BASE_CHANNELS: 'brain' }).channels, ['ops']);
  assert.deepEqual(parseSubscriptions({ AGENT_BUS_CHANNELS: '', AGENTIHOOKS_BASE_CHANNELS: 'brain' }), { channels: [], all: false }, 'set but empty is an answer');
  assert.deepEqual(parseSubscriptions({ AGENT_BUS_CHANNELS: undefined, AGENTIHOOKS_BASE_CHANNELS: 'brain' }).channels, ['brain']);
});

test("parseSubscriptions: '*' subscribes to every channel", () => {
  assert.equal(parseSubscriptions({ AGENT_BUS_CHANNELS: 'ops, *' }).all, true);
  assert.equal(parseSubscriptions({ AGENTIHOOKS_BASE_CHANNELS: '*' }).all, true);
  assert.equal(parseSubscriptions({ AGENT_BUS_CHANNELS: 'ops,**' }).all, false, "only a bare '*'");
});

test('receives: global always, channels by subscription, everything with *', () => {
  const ops = parseSubscriptions({ AGENT_BUS_CHANNELS: 'ops' });
  const none = parseSubscriptions({});
  const every = parseSubscriptions({ AGENT_BUS_CHANNELS: '*' });
  assert.equal(receives(none, null), true);
  assert.equal(receives(none, 'ops'), false);
  assert.equal(receives(ops, 'ops'), true);
  assert.equal(receives(ops, 'brain'), false);
  assert.equal(receives(ops, null), true);
  assert.equal(receives(every, 'anything'), true);
  assert.equal(receives(every, null), true);
});

test('compareNotices: severity, then higher priority, then older first', () => {
  const infoHigh = notice({ severity: 'info', priority: 100 });
  const alertOld = notice({ severity: 'alert', priority: 1, createdAt: '2026-01-01T00:00:01.000000Z' });
  const alertNew = notice({ severity: 'alert', priority: 1, createdAt: '2026-01-01T00:00:02.000000Z' });
  const alertHigh = notice({ severity: 'alert', priority: 9, createdAt: '2026-01-01T00:00:03.000000Z' });
  const critical = notice({ severity: 'critical', priority: -5, createdAt: '2026-01-01T00:00:09.000000Z' });
  const sorted = [infoHigh, alertNew, alertOld, critical, alertHigh].sort(compareNotices);
  assert.deepEqual(ids(sorted), ids([critical, alertHigh, alertOld, alertNew, infoHigh]));
  assert.ok(compareNotices(alertOld, alertNew) < 0);
  assert.ok(compareNotices(alertNew, alertOld) > 0);
  assert.equal(compareNotices(alertOld, alertOld), 0);
});

test('evictionVictims: nothing under or at the cap', () => {
  const live = [notice(), notice(), notice()];
  assert.deepEqual(evictionVictims(live, 3, '2026-01-01T12:00:00.000000Z'), []);
  assert.deepEqual(evictionVictims(live, 10, '2026-01-01T12:00:00.000000Z'), []);
});

test('evictionVictims: expired first, then lowest severity, lowest priority, oldest', () => {
  const now = '2026-01-01T12:00:00.000000Z';
  const expiredCritical = notice({ severity: 'critical', priority: 100, expiresAt: '2026-01-01T11:00:00.000000Z' });
  const critical = notice({ severity: 'critical', priority: -100, createdAt: '2025-12-01T00:00:00.000000Z' });
  const alertLow = notice({ severity: 'alert', priority: 0 });
  const alertHigh = notice({ severity: 'alert', priority: 9 });
  const infoOld = notice({ severity: 'info', priority: 5, createdAt: '2026-01-01T00:00:01.000000Z' });
  const infoNew = notice({ severity: 'info', priority: 5, createdAt: '2026-01-01T00:00:02.000000Z' });
  const infoLow = notice({ severity: 'info', priority: 1, createdAt: '2026-01-01T00:00:03.000000Z' });
  const live = [critical, infoNew, alertHigh, expiredCritical, infoLow, alertLow, infoOld];
  const expected = [expiredCritical, infoLow, infoOld, infoNew, alertLow, alertHigh, critical];
  for (let excess = 1; excess <= live.length; excess++) {
    assert.deepEqual(ids(evictionVictims(live, live.length - excess, now)), ids(expected.slice(0, excess)), `excess ${excess}`);
  }
  const atNow = notice({ severity: 'critical', expiresAt: now });
  assert.deepEqual(ids(evictionVictims([infoLow, atNow], 1, now)), ids([atNow]), 'expiring exactly now counts as expired');
});

test('selectNotices: the per-turn cap', () => {
  const render = (item: NoticeCandidate): string => item.body;
  const notices = [notice({ severity: 'critical' }), notice({ severity: 'alert' }), notice({ severity: 'info' }), notice({ severity: 'info' })];
  const three = selectNotices(notices, due(1, 1, 2), { perTurn: 3, maxBytes: 9000 }, 0, render);
  assert.deepEqual(ids(three.shown), ids(notices.slice(0, 3)));
  assert.deepEqual(three.heldBack, { critical: 0, alert: 0, info: 1 });
  const all = selectNotices(notices, due(1, 1, 2), { perTurn: 4, maxBytes: 9000 }, 0, render);
  assert.equal(all.shown.length, 4);
  assert.deepEqual(all.heldBack, { critical: 0, alert: 0, info: 0 });
  const one = selectNotices(notices, due(1, 1, 2), { perTurn: 1, maxBytes: 9000 }, 0, render);
  assert.deepEqual(ids(one.shown), ids(notices.slice(0, 1)));
  assert.deepEqual(one.heldBack, { critical: 0, alert: 1, info: 2 });
});

test('selectNotices: the byte budget, to the byte', () => {
  // Each notice renders to 99 bytes and takes 100 with its line break.
  const render = (item: NoticeCandidate): string => item.body;
  const notices = [0, 1, 2, 3].map(() => notice({ severity: 'alert', body: 'x'.repeat(99) }));
  const caps = (maxBytes: number) => ({ perTurn: 10, maxBytes });
  assert.equal(selectNotices(notices, due(0, 4, 0), caps(HEADER_ALLOWANCE + 300), 0, render).shown.length, 3, 'exactly three fit');
  assert.equal(selectNotices(notices, due(0, 4, 0), caps(HEADER_ALLOWANCE + 299), 0, render).shown.length, 2, 'one byte short: two');
  assert.equal(selectNotices(notices, due(0, 4, 0), caps(HEADER_ALLOWANCE + 400), 0, render).shown.length, 4);
  // Bytes already used by the hook's mail come off the same budget.
  assert.equal(selectNotices(notices, due(0, 4, 0), caps(HEADER_ALLOWANCE + 400), 100, render).shown.length, 3);
  assert.equal(selectNotices(notices, due(0, 4, 0), caps(HEADER_ALLOWANCE + 400), 101, render).shown.length, 2);
  // Multi-byte characters count as bytes, not characters: 33 × 'é' is 66 bytes, 67 with the break.
  const accented = [notice({ body: 'é'.repeat(33) }), notice({ body: 'é'.repeat(33) })];
  assert.equal(selectNotices(accented, due(0, 0, 2), caps(HEADER_ALLOWANCE + 134), 0, render).shown.length, 2);
  assert.equal(selectNotices(accented, due(0, 0, 2), caps(HEADER_ALLOWANCE + 133), 0, render).shown.length, 1);
});

test('selectNotices: a notice that does not fit stops the block (no skipping ahead to smaller ones)', () => {
  const render = (item: NoticeCandidate): string => item.body;
  const small = notice({ severity: 'critical', body: 'x'.repeat(99) });
  const big = notice({ severity: 'alert', body: 'y'.repeat(500) });
  const tiny = notice({ severity: 'info', body: 'z' });
  const selection = selectNotices([small, big, tiny], due(1, 1, 1), { perTurn: 10, maxBytes: HEADER_ALLOWANCE + 300 }, 0, render);
  assert.deepEqual(ids(selection.shown), ids([small]));
  assert.equal(selection.truncated.size, 0, 'only a lone first notice is cut');
  assert.deepEqual(selection.heldBack, { critical: 0, alert: 1, info: 1 });
});

test('selectNotices: held back counts by severity include due notices not passed in', () => {
  const render = (item: NoticeCandidate): string => item.body;
  const shown = [notice({ severity: 'critical' }), notice({ severity: 'info' })];
  const selection = selectNotices(shown, due(3, 2, 5), { perTurn: 8, maxBytes: 9000 }, 0, render);
  assert.deepEqual(selection.heldBack, { critical: 2, alert: 2, info: 4 });
});

test('selectNotices: receipts only for the info notices shown', () => {
  const render = (item: NoticeCandidate): string => item.body;
  const critical = notice({ severity: 'critical' });
  const alert = notice({ severity: 'alert' });
  const infoA = notice({ severity: 'info' });
  const infoB = notice({ severity: 'info' });
  const infoHeld = notice({ severity: 'info' });
  const selection = selectNotices([critical, alert, infoA, infoB, infoHeld], due(1, 1, 3), { perTurn: 4, maxBytes: 9000 }, 0, render);
  assert.deepEqual(selection.receipts, ids([infoA, infoB]));
  const none = selectNotices([critical, alert], due(1, 1, 0), { perTurn: 4, maxBytes: 9000 }, 0, render);
  assert.deepEqual(none.receipts, []);
  const empty = selectNotices([], due(0, 0, 0), { perTurn: 4, maxBytes: 9000 }, 0, render);
  assert.deepEqual([empty.shown, empty.receipts, empty.heldBack], [[], [], { critical: 0, alert: 0, info: 0 }]);
});

/** What a renderer does with a body limit: cut the body to it and mark the cut. */
function cut(body: string, max: number | undefined): string {
  return max === undefined ? body : `${cutToBytes(body, max)}${CUT_MARKER}`;
}

test('selectNotices: one notice bigger than the whole budget is shown cut, with its body limit', () => {
  // The frame is what the notice renders to with an empty body: 'X:' (2 bytes), plus the cut marker and a line break.
  const render = (item: NoticeCandidate, max?: number): string => `X:${cut(item.body, max)}`;
  const markerBytes = Buffer.byteLength(CUT_MARKER, 'utf8');
  assert.equal(markerBytes, 15);
  const huge = notice({ severity: 'alert', body: 'y'.repeat(5000) });
  const next = notice({ severity: 'alert', body: 'z' });
  const selection = selectNotices([huge, next], due(0, 2, 0), { perTurn: 8, maxBytes: HEADER_ALLOWANCE + 1000 }, 0, render);
  assert.deepEqual(ids(selection.shown), ids([huge]));
  assert.deepEqual([...selection.truncated], [[huge.noticeId, 1000 - (2 + markerBytes + 1)]]);
  assert.deepEqual(selection.heldBack, { critical: 0, alert: 1, info: 0 }, 'the budget is spent: the next waits');
  assert.deepEqual(selection.receipts, []);
  const info = notice({ severity: 'info', body: 'y'.repeat(5000) });
  assert.deepEqual(selectNotices([info], due(0, 0, 1), { perTurn: 8, maxBytes: HEADER_ALLOWANCE + 1000 }, 0, render).receipts, [info.noticeId], 'a cut info notice still gets its receipt');
});

test('selectNotices: no cut when too little budget is left', () => {
  const render = (item: NoticeCandidate, max?: number): string => `X:${cut(item.body, max)}`;
  const huge = notice({ severity: 'alert', body: 'y'.repeat(5000) });
  // Cutting needs more than 200 bytes of budget.
  const starved = selectNotices([huge], due(0, 1, 0), { perTurn: 8, maxBytes: HEADER_ALLOWANCE + 200 }, 0, render);
  assert.deepEqual([starved.shown.length, starved.truncated.size, starved.heldBack.alert], [0, 0, 1]);
  const enough = selectNotices([huge], due(0, 1, 0), { perTurn: 8, maxBytes: HEADER_ALLOWANCE + 201 }, 0, render);
  assert.deepEqual([enough.shown.length, enough.truncated.get(huge.noticeId)], [1, 201 - 18]);
  // ...and more than 100 bytes of body must survive the frame.
  const wideFrame = (item: NoticeCandidate, max?: number): string => `${'F'.repeat(100)}${cut(item.body, max)}`;
  const noRoom = selectNotices([huge], due(0, 1, 0), { perTurn: 8, maxBytes: HEADER_ALLOWANCE + 216 }, 0, wideFrame);
  assert.equal(noRoom.shown.length, 0, '216 - (100 + 15 + 1) = 100 body bytes is not enough');
  const room = selectNotices([huge], due(0, 1, 0), { perTurn: 8, maxBytes: HEADER_ALLOWANCE + 217 }, 0, wideFrame);
  assert.equal(room.truncated.get(huge.noticeId), 101);
});

test('a cut notice, rendered as the hooks render it, keeps the block within the byte cap', () => {
  const caps = { perTurn: 8, maxBytes: 9000 };
  const huge = notice({ severity: 'alert', body: 'x'.repeat(16_000) });
  const selection = selectNotices([huge], due(0, 1, 0), caps, 0, renderNotice);
  assert.ok(selection.truncated.has(huge.noticeId));
  const block = noticeBlock(selection, 'prompt') ?? '';
  assert.match(block, /…truncated\]$/);
  assert.ok(Buffer.byteLength(block, 'utf8') <= caps.maxBytes, `${Buffer.byteLength(block, 'utf8')} bytes`);
});

// renderNotice indents every continuation line by two spaces: a many-line body
// must be cut by what it renders to, not by its own length.
test('a cut many-line notice keeps the block within the byte cap', () => {
  const caps = { perTurn: 8, maxBytes: 9000 };
  const huge = notice({ severity: 'alert', body: 'x\n'.repeat(8000) });
  const selection = selectNotices([huge], due(0, 1, 0), caps, 0, renderNotice);
  assert.ok(selection.truncated.has(huge.noticeId));
  const block = noticeBlock(selection, 'prompt') ?? '';
  assert.ok(Buffer.byteLength(block, 'utf8') <= caps.maxBytes, `${Buffer.byteLength(block, 'utf8')} bytes`);
});

test('cutToBytes: never splits a character', () => {
  assert.equal(cutToBytes('hello', 10), 'hello');
  assert.equal(cutToBytes('hello', 5), 'hello');
  assert.equal(cutToBytes('hello', 3), 'hel');
  assert.equal(cutToBytes('hello', 0), '');
  assert.equal(cutToBytes('aé', 2), 'a', 'é is two bytes');
  assert.equal(cutToBytes('aé', 3), 'aé');
  assert.equal(cutToBytes('a€b', 3), 'a', '€ is three bytes');
  assert.equal(cutToBytes('a€b', 4), 'a€');
  for (let max = 0; max <= 9; max++) {
    const cut = cutToBytes('a😀b😀', max);
    assert.ok(Buffer.byteLength(cut, 'utf8') <= max, `at most ${max} bytes`);
    assert.ok(!/[\uD800-\uDBFF]$/.test(cut), `no lone high surrogate at ${max}`);
    assert.ok(Buffer.from(cut, 'utf8').toString('utf8') === cut && !cut.includes('\uFFFD'), `valid UTF-8 at ${max}`);
  }
  assert.equal(cutToBytes('a😀b😀', 4), 'a', 'the emoji is four bytes');
  assert.equal(cutToBytes('a😀b😀', 5), 'a😀');
  assert.equal(cutToBytes('a😀b😀', 9), 'a😀b', 'one byte short of the whole');
});
