/** The chat's status line text: right-aligned, the hint dropped before the identity is cut. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { statusText } from '../../src/tui/status-line.js';

const shown = (identity: string, columns: number): string => {
  const status = statusText(identity, columns);
  return `${' '.repeat(status.padding)}${status.text}${status.hint}`;
};

test('the status line is right-aligned one column short of the edge', () => {
  assert.equal(shown('alex → *', 40), `${' '.repeat(15)}alex → *   /help · /quit`);
  assert.equal(shown('alex → *', 40).length, 39);
});

test('a narrow terminal drops the hint first, then cuts the identity', () => {
  assert.equal(shown('alex → repo-a/claude-1', 30), `${' '.repeat(7)}alex → repo-a/claude-1`);
  assert.equal(shown('alex → repo-a/claude-1', 12), 'alex → rep…', 'eleven characters in twelve columns');
  assert.equal(shown('alex → *', 1), '');
  assert.equal(shown('alex → *', 0), '');
});

test('wide characters count two columns', () => {
  assert.equal(shown('日本語 → *', 40), `${' '.repeat(13)}日本語 → *   /help · /quit`, 'three wide characters: 6 columns, not 3');
  assert.equal(shown('日本語名前 → *', 10), '日本語名…', 'cut to 9 columns');
  assert.equal(shown('日本語名前 → *', 9), ' 日本語…', 'never half a character: the odd column is padding');
});
