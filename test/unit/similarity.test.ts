import assert from 'node:assert/strict';
import { test } from 'node:test';
import { closeMatches, similarity } from '../../src/core/similarity.js';

test('similarity is the Ratcliff/Obershelp ratio', () => {
  assert.equal(similarity('abcd', 'abcd'), 1);
  assert.equal(similarity('abcd', 'wxyz'), 0);
  // difflib.SequenceMatcher(None, 'repo-a/cluade', 'repo-a/claude').ratio() == 0.9230769...
  assert.ok(Math.abs(similarity('repo-a/cluade', 'repo-a/claude') - 12 / 13) < 1e-9);
});

test('close matches are ranked and cut off', () => {
  assert.deepEqual(closeMatches('alhpa', ['alpha', 'beta', 'gamma']), ['alpha']);
  assert.deepEqual(closeMatches('zzz', ['alpha', 'beta']), []);
  assert.equal(closeMatches('web', ['web-a', 'web-b', 'web-c', 'web-d']).length, 3);
});
