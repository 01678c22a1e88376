import assert from 'node:assert/strict';
import { test } from 'node:test';
import { durationText, isDuration, parseDuration } from '../../src/model/duration.js';
import { InvalidInputError } from '../../src/model/errors.js';

test('every form of a duration, alone and combined, largest unit first', () => {
  const table: Array<[string, number]> = [
    ['90', 90],
    ['45s', 45],
    ['5m', 300],
    ['12h', 43_200],
    ['90d', 7_776_000],
    ['2w', 1_209_600],
    ['1h30m', 5400],
    ['1m30s', 90],
    ['2d12h', 216_000],
    ['1w2d3h4m5s', 604_800 + 172_800 + 10_800 + 240 + 5],
    ['1H30M', 5400],
    [' 1h 30m ', 5400],
    ['0h5m', 300],
  ];
  for (const [text, seconds] of table) {
    assert.equal(parseDuration(text), seconds * 1000, text);
    assert.ok(isDuration(text), text);
  }
});

test('what is not a duration is refused with exit code 2, naming the forms it takes', () => {
  for (const text of ['', 'soon', '1.5h', '-5m', '5x', 'h', '30m1h', '1h1h', '1h30', '5 minutes', '0', '0s', '1e3', '11000d']) {
    assert.throws(
      () => parseDuration(text),
      (error: unknown) => error instanceof InvalidInputError && error.exitCode === 2 && error.usage && /^bad duration '/.test(error.message) && (/1h30m/.test(error.message) || /more than nothing|longest/.test(error.message)),
      JSON.stringify(text),
    );
  }
  assert.equal(isDuration('2026-11-30'), false, 'a date is no duration');
  assert.throws(() => parseDuration('2h', { what: '--ttl', longestMs: 3_600_000 }), /^InvalidInputError: bad --ttl '2h': the longest is 1h$/);
});

test('a duration written back reads as it would be typed, and parses to itself', () => {
  const table: Array<[number, string]> = [
    [90_000, '1m30s'],
    [3_600_000, '1h'],
    [5_400_000, '1h30m'],
    [30 * 86_400_000, '30d'],
    [45_000, '45s'],
  ];
  for (const [ms, text] of table) {
    assert.equal(durationText(ms), text);
    assert.equal(parseDuration(text), ms);
  }
});
