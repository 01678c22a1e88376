import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  composeName,
  clientAddressOf,
  MAX_NAME_LENGTH,
  nameProblem,
  normaliseLabel,
  parseName,
  parseNameLenient,
  slugify,
} from '../../src/core/names.js';
import { InvalidNameError } from '../../src/model/errors.js';

test('slugify follows the documented examples', () => {
  const cases: Array<[string, string]> = [
    ['acme.dev', 'acme-dev'],
    ['My Cool Thing', 'my-cool-thing'],
    ['a_b_c', 'a-b-c'],
    ['UPPER', 'upper'],
    ['a---b', 'a-b'],
    ['___', 'repo'],
    ['repo.with.lots.of.dots', 'repo-with-lots-of-dots'],
    ['é-tienne!', 'tienne'],
    ['My_Repo.dev', 'my-repo-dev'],
    ['My Repo.dev', 'my-repo-dev'],
    ['my_thing', 'my-thing'],
  ];
  for (const [input, expected] of cases) assert.equal(slugify(input), expected, input);
});

test('a slug is at most 40 characters and never ends in a dash', () => {
  assert.equal(slugify('a'.repeat(200)).length, 40);
  const cut = slugify(`${'a'.repeat(39)}-bbbb`);
  assert.ok(cut.length <= 40);
  assert.ok(!cut.endsWith('-'));
  assert.ok(!slugify('x/y').includes('/'));
});

test('valid names parse into their parts', () => {
  assert.deepEqual(parseName('repo-a/claude-1'), { name: 'repo-a/claude-1', repo: 'repo-a', client: 'claude', handle: '1' });
  assert.deepEqual(parseName('repo-a/claude'), { name: 'repo-a/claude', repo: 'repo-a', client: 'claude', handle: null });
  assert.deepEqual(parseName('human'), { name: 'human', repo: 'human', client: null, handle: null });
  for (const name of ['repo-a/claude-99', 'repo-a/claude-frontend', 'repo-a/claude-release-notes', 'repo-a/codex-v2']) {
    assert.equal(nameProblem(name), null, name);
  }
});

test('invalid names are refused with the rule they broke', () => {
  const cases: Array<[string, RegExp]> = [
    ['', /cannot be empty/],
    ['/claude', /no repo/],
    ['repo-a/', /no client/],
    ['repo-a/claude/2', /more than one '\/'/],
    ['repo-a/Claude', /client id is lowercase/],
    ['repo-a/claude-0', /session number is 1 to 99/],
    ['repo-a/claude-01', /without leading zeros/],
    ['repo-a/claude-100', /session number/],
    ['repo-a/claude-2fa', /session label/],
    ['repo-a/claude-Frontend', /session label/],
    ['repo-a/claude-ai--spend', /single dashes/],
    ['repo-a/claude-ai-', /session label/],
    ['repo-a/claude-', /handle cannot be empty/],
    ['repo-a/claude-a_b', /session label/],
    [`repo-a/claude-${'x'.repeat(25)}`, /at most 24/],
    [`repo-a/${'c'.repeat(13)}`, /at most 12/],
    ['two words', /whitespace/],
    ['*', /everyone/],
  ];
  for (const [name, rule] of cases) {
    const problem = nameProblem(name);
    assert.ok(problem !== null, `expected '${name}' to be refused`);
    assert.match(problem, rule, name);
    assert.throws(() => parseName(name), InvalidNameError);
    assert.equal(parseNameLenient(name), null);
  }
});

test('the longest valid name parses and round-trips', () => {
  const name = `${'r'.repeat(40)}/${'c'.repeat(12)}-${'l'.repeat(24)}`;
  assert.equal(name.length, MAX_NAME_LENGTH);
  const parsed = parseName(name);
  assert.equal(composeName(parsed.repo, parsed.client, parsed.handle), name);
});

test('client addresses and composition', () => {
  assert.equal(clientAddressOf('repo-a/claude-3'), 'repo-a/claude');
  assert.equal(clientAddressOf('repo-a/claude'), 'repo-a/claude');
  assert.equal(clientAddressOf('human'), null);
  assert.equal(composeName('repo-a', 'claude', 1), 'repo-a/claude-1');
  assert.throws(() => composeName('repo-a', 'claude', 100), InvalidNameError);
  assert.throws(() => composeName('repo/a', 'claude'), InvalidNameError);
});

test('labels are normalised or refused', () => {
  assert.equal(normaliseLabel('Release Notes'), 'release-notes');
  assert.equal(normaliseLabel('api_v2.schema'), 'api-v2-schema');
  assert.equal(normaliseLabel('  --Frontend--  '), 'frontend');
  assert.equal(normaliseLabel('x'.repeat(30)), 'x'.repeat(24));
  for (const bad of ['', '   ', '2fa', '-', '42']) assert.throws(() => normaliseLabel(bad), InvalidNameError, bad);
});
