import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatStamp } from '../../src/model/clock.js';
import { localDateTime, stampMillis, when, whenText } from '../../src/model/when.js';

const now = new Date(2026, 11, 7, 12, 0, 0).getTime();
const at = (seconds: number): number => now + seconds * 1000;

test('a moment within a day reads relative to now, past and future', () => {
  const table: [number, string][] = [
    [0, 'just now'],
    [-3, 'just now'],
    [-42, '42 s ago'],
    [-180, '3 min ago'],
    [-3599, '1 h ago'],
    [-(59 * 60 + 10), '59 min ago'],
    [-2 * 3600 - 5, '2 h ago'],
    [-(23 * 3600 + 60), '23 h ago'],
    [0.5, 'now'],
    [30, 'in 30 s'],
    [125, 'in 2 min'],
    [2 * 3600, 'in 2 h'],
  ];
  for (const [seconds, text] of table) assert.equal(whenText(at(seconds), now), text, `${seconds} s from now`);
});

test('a moment a day or more away reads as the local date and time, with the year only when it differs', () => {
  assert.equal(whenText(new Date(2026, 10, 30, 14, 5, 59).getTime(), now), '30 Nov 14:05');
  assert.equal(whenText(new Date(2026, 11, 9, 8, 0).getTime(), now), '9 Dec 08:00');
  assert.equal(whenText(new Date(2025, 0, 2, 3, 4).getTime(), now), '2 Jan 2025 03:04');
  assert.equal(localDateTime(new Date(2027, 0, 1, 0, 0).getTime(), now), '1 Jan 2027 00:00');
});

test('stored stamps, with microseconds and a zone, and without either, read as UTC', () => {
  const millis = Date.UTC(2026, 4, 13, 10, 0, 0, 123);
  assert.equal(stampMillis(formatStamp(millis * 1000 + 456)), millis);
  assert.equal(stampMillis('2026-05-13T10:00:00'), Date.UTC(2026, 4, 13, 10, 0, 0));
  assert.equal(stampMillis('2026-05-13T10:00:00.123Z'), millis);
  assert.equal(when(formatStamp((now - 120_000) * 1000), now), '2 min ago');
  assert.equal(when(null, now), 'never');
  assert.equal(when('not a time', now), 'never');
});
