/**
 * docs/clients.md's table of what each client gets is test/clients/claims.json, and the test runner
 * holds each `yes` to the tests it names (scripts/client-claims.mjs): these check both halves.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { checkClaims, claimProblems, fillClaims, loadClaims, testsIn, type Claims } from '../../scripts/client-claims.mjs';
import { PROFILES } from '../../src/clients/registry/profiles.js';

const DOCS = new URL('../../docs/clients.md', import.meta.url);

test('the claims have one verdict per client and column, each yes naming its tests; docs/clients.md shows them as they are (npm run docs:clients)', () => {
  const claims = loadClaims();
  assert.deepEqual(claimProblems(claims), []);
  const text = readFileSync(DOCS, 'utf8');
  assert.equal(fillClaims(text, claims), text, 'docs/clients.md differs from test/clients/claims.json: run npm run docs:clients');
});

test('every client agent-bus wires has a row in the table', () => {
  const rows = new Set(loadClaims().rows.map((row) => row.client));
  assert.deepEqual(Object.keys(PROFILES).filter((id) => !rows.has(id)), []);
});

test('a shape the table cannot show is named: a cell with no verdict, a yes with no test, a no with no reason, a pattern that does not compile', () => {
  const claims: Claims = {
    columns: [{ id: 'mcp', title: 'MCP tools' }, { id: 'wake', title: 'woken when idle' }, { id: 'hub', title: 'over a hub' }],
    rows: [{ client: 'x', title: 'X', versions: '1.0', cells: { mcp: { yes: [] }, wake: { no: '' }, hub: { yes: [{ suite: 'clients', title: '(' }] } } }],
  };
  const problems = claimProblems(claims);
  assert.equal(problems.length, 3, problems.join('\n'));
  assert.match(problems.join('\n'), /mcp: a yes names its tests/);
  assert.match(problems.join('\n'), /wake: a no says why/);
  assert.match(problems.join('\n'), /hub: Invalid regular expression/);
  assert.match(claimProblems({ ...claims, rows: [{ ...claims.rows[0]!, cells: {} }] }).join('\n'), /mcp: needs exactly one of yes, no or untested/);
});

test("a whole run holds each yes to its tests: one that passed proves it, one that skipped leaves it unverified, none fails it; another suite's proofs wait for their own run", () => {
  const claims: Claims = {
    columns: [{ id: 'mcp', title: 'MCP tools' }, { id: 'hub', title: 'over a hub' }, { id: 'doctor', title: 'doctor' }],
    rows: [
      {
        client: 'x',
        title: 'X',
        versions: '1.0',
        cells: {
          mcp: { yes: [{ suite: 'clients', title: '^X starts our MCP server' }] },
          hub: { yes: [{ suite: 'clients', title: '^X wired by init --remote' }] },
          doctor: { yes: [{ suite: 'main', title: '^doctor names X' }] },
        },
      },
      { client: 'y', title: 'Y', versions: '2.0', cells: { mcp: { yes: [{ suite: 'clients', title: '^Y starts our MCP server' }] }, hub: { untested: true }, doctor: { no: 'none' } } },
    ],
  };
  const tap = [
    'TAP version 13',
    '# Subtest: X starts our MCP server \\# 1',
    'ok 1 - X starts our MCP server \\# 1',
    'ok 2 - Y starts our MCP server # SKIP Y is not installed',
    'not ok 3 - X wired by init --remote',
    '1..3',
  ].join('\n');
  assert.deepEqual(testsIn(tap), { passed: new Set(['X starts our MCP server # 1']), skipped: new Set(['Y starts our MCP server']) });
  const { failures, unverified } = checkClaims(claims, 'clients', tap);
  assert.deepEqual(failures, ['docs/clients.md says X has "over a hub", but no test matching /^X wired by init --remote/ passed (test/clients/claims.json)']);
  assert.deepEqual(unverified, ['docs/clients.md says Y has "MCP tools": its test /^Y starts our MCP server/ skipped']);
  assert.deepEqual(checkClaims(claims, 'main', 'ok 1 - doctor names X\n'), { failures: [], unverified: [] });
  assert.equal(checkClaims(claims, 'main', 'ok 1 - something else\n').failures.length, 1);
});
