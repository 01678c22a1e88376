import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatStamp, nowStamp, stampToMillis } from '../../src/model/clock.js';
import { displayWidth, fitWidth, oneLine, pad, shortIdText, wrap } from '../../src/render/format.js';
import { bodyPreview, bodySha256 } from '../../src/audit/record.js';
import { createHash } from 'node:crypto';

test('stamps are UTC with six fractional digits and strictly increase', () => {
  assert.equal(formatStamp(Date.UTC(2026, 4, 13, 10, 0, 0, 123) * 1000 + 456), '2026-05-13T10:00:00.123456Z');
  let previous = nowStamp();
  for (let index = 0; index < 5000; index++) {
    const next = nowStamp();
    assert.ok(next > previous, `${next} after ${previous}`);
    previous = next;
  }
  assert.equal(stampToMillis('2026-05-13T10:00:00.123456Z'), Date.UTC(2026, 4, 13, 10, 0, 0, 123));
});

test('a stamp is the ISO 8601 form of its moment, at every second across the years', () => {
  // Seconds spread from 1970 to 2199, leap days and year ends among them.
  const moments = [0, Date.UTC(2000, 1, 29, 23, 59, 59), Date.UTC(2024, 11, 31, 23, 59, 59), Date.UTC(2100, 2, 1), ...Array.from({ length: 2000 }, (_, index) => index * 3_617_897_411)];
  for (const millis of moments) {
    const micros = millis * 1000 + 7;
    assert.equal(formatStamp(micros), `${new Date(millis).toISOString().slice(0, 19)}.${String(micros % 1_000_000).padStart(6, '0')}Z`);
  }
});

test('previews, one-liners and wrapping', () => {
  const body = `${'é'.repeat(150)}${'😀'.repeat(100)}`;
  const preview = bodyPreview(body);
  assert.equal(Array.from(preview).length, 200);
  assert.ok(!preview.endsWith('\ud83d'), 'never splits a surrogate pair');
  assert.equal(bodySha256('héllo'), createHash('sha256').update(Buffer.from('héllo', 'utf8')).digest('hex'));
  assert.equal(oneLine('a\nb\r\n  c'), 'a b c');
  assert.equal(Array.from(oneLine('x'.repeat(100))).length, 72);
  assert.ok(oneLine('x'.repeat(100)).endsWith('…'));
  assert.equal(shortIdText('c7a3b2f0-1111-4222-9333-444455556666'), 'c7a3b2f01111', 'a random id: its first twelve hex digits');
  assert.equal(shortIdText('0193a1b2-7c4d-7e5f-8a9b-0c1d2e3f4a5b'), '0c1d2e3f4a5b', 'a time-ordered id: its random last twelve');
  const wrapped = wrap(`${'word '.repeat(40)}\n\nhttps://example.com/${'p'.repeat(120)}`, 40);
  for (const line of wrapped.split('\n')) if (!line.includes('https')) assert.ok(line.length <= 40, line);
  assert.ok(wrapped.includes(`https://example.com/${'p'.repeat(120)}`), 'long words are never broken');
  assert.ok(wrapped.includes('\n\n'), 'blank lines are kept');
});

test('stamps follow the wall clock', async () => {
  const { nowMicros } = await import('../../src/model/clock.js');
  assert.ok(Math.abs(nowMicros() / 1000 - Date.now()) < 1000);
});

test('padding counts terminal columns: wide characters two, combining marks none', () => {
  assert.equal(pad('日本', 6), '日本  ');
  assert.equal(pad('e\u0301t\u00e9', 6), 'e\u0301t\u00e9   ');
  assert.equal(displayWidth('👩‍👩‍👧'), 2);
  assert.equal(fitWidth('日本語名前', 6), '日本…');
  assert.equal(fitWidth('short', 6), 'short');
});
