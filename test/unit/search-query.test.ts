/** The search query language (src/core/search-query.ts): words, "phrases", prefix*, and its errors. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseSearchQuery, snippet } from '../../src/core/search-query.js';
import { InvalidInputError } from '../../src/model/errors.js';

test('words, phrases and prefixes, lower-cased; anything but letters and digits separates words', () => {
  assert.deepEqual(
    parseSearchQuery('Deploy "login FORM" review*').map((term) => JSON.stringify(term)).sort(),
    [{ kind: 'word', word: 'deploy' }, { kind: 'phrase', words: ['login', 'form'] }, { kind: 'prefix', word: 'review' }].map((term) => JSON.stringify(term)).sort(),
  );
  assert.deepEqual(parseSearchQuery('login-form v2*'), [
    { kind: 'word', word: 'login' },
    { kind: 'word', word: 'form' },
    { kind: 'prefix', word: 'v2' },
  ]);
  assert.deepEqual(parseSearchQuery('"single"'), [{ kind: 'word', word: 'single' }]);
  assert.deepEqual(parseSearchQuery('Überprüfung café'), [
    { kind: 'word', word: 'überprüfung' },
    { kind: 'word', word: 'café' },
  ]);
  // Operators of either engine are only words here.
  assert.deepEqual(parseSearchQuery('a OR b AND NOT c & | ! :'), ['a', 'or', 'b', 'and', 'not', 'c'].map((word) => ({ kind: 'word', word })));
});

test('a bad query is a one-line error', () => {
  for (const [query, message] of [
    ['"login form', /unbalanced quote/],
    ['', /say what to search for/],
    ['  & | ! ', /say what to search for/],
    ['*', /a prefix needs letters before its \*/],
    ['x'.repeat(1001), /longer than 1000 characters/],
    [Array.from({ length: 33 }, (_, index) => `w${index}`).join(' '), /more than 32 words/],
  ] as const) {
    assert.throws(() => parseSearchQuery(query), (error: unknown) => error instanceof InvalidInputError && message.test(error.message) && !error.message.includes('\n'), query.slice(0, 40));
  }
});

test('a snippet shows the body around its first match with the matched words marked', () => {
  const terms = parseSearchQuery('deploy review*');
  const body = `${'lorem ipsum '.repeat(30)}please Review the deploy plan, then reviewing again.`;
  const parts = snippet(body, terms, 60);
  assert.ok(parts[0]?.text === '…', 'cut at the start');
  assert.deepEqual(parts.filter((part) => part.match).map((part) => part.text), ['Review', 'deploy', 'reviewing']);
  assert.ok(parts.map((part) => part.text).join('').length <= 62);
  assert.deepEqual(snippet('short body', parseSearchQuery('nothing'), 60), [{ text: 'short body', match: false }]);
});
