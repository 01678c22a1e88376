// What each client gets, as docs/clients.md's table says it, and the tests that prove each claim
// (test/clients/claims.json). The test runner checks a whole run of a suite against the claims it
// backs: a `yes` whose tests did not pass in that run fails the run, so the table cannot say more
// than the suites show. `npm run docs:clients` writes the table from the same data.
import { readFileSync } from 'node:fs';

export const CLAIMS_PATH = new URL('../test/clients/claims.json', import.meta.url);
export const TABLE_START = '<!-- client-claims: written by npm run docs:clients from test/clients/claims.json -->';
export const TABLE_END = '<!-- /client-claims -->';
const SUITES = ['clients', 'main'];

export function loadClaims(path = CLAIMS_PATH) {
  return JSON.parse(readFileSync(path, 'utf8'));
}

/** What is wrong with the claims' shape, a line each: every row has one verdict per column, every `yes` its tests. */
export function claimProblems(claims) {
  const problems = [];
  const columns = claims.columns.map((column) => column.id);
  for (const row of claims.rows) {
    const where = `${row.title} (${row.client})`;
    if (typeof row.versions !== 'string' || row.versions === '') problems.push(`${where}: no versions tested`);
    for (const id of Object.keys(row.cells)) if (!columns.includes(id)) problems.push(`${where}: no column '${id}'`);
    for (const id of columns) {
      const cell = row.cells[id];
      const verdicts = cell === undefined ? [] : ['yes', 'no', 'untested'].filter((verdict) => verdict in cell);
      if (verdicts.length !== 1) {
        problems.push(`${where}, ${id}: needs exactly one of yes, no or untested`);
        continue;
      }
      if ('no' in cell && (typeof cell.no !== 'string' || cell.no === '')) problems.push(`${where}, ${id}: a no says why`);
      if (!('yes' in cell)) continue;
      if (!Array.isArray(cell.yes) || cell.yes.length === 0) problems.push(`${where}, ${id}: a yes names its tests`);
      for (const proof of cell.yes ?? []) {
        if (!SUITES.includes(proof.suite)) problems.push(`${where}, ${id}: suite '${proof.suite}' is none of ${SUITES.join(', ')}`);
        try {
          new RegExp(proof.title);
        } catch (error) {
          problems.push(`${where}, ${id}: ${error.message}`);
        }
      }
    }
  }
  return problems;
}

const verdictOf = (cell) => ('yes' in cell ? 'yes' : 'no' in cell ? 'no' : 'untested');

/** The table and the reasons of its `no`s, in Markdown. */
export function renderClaims(claims) {
  const header = ['client (versions tested)', ...claims.columns.map((column) => column.title)];
  const lines = [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`];
  const reasons = [];
  for (const row of claims.rows) {
    const cells = claims.columns.map((column) => {
      const cell = row.cells[column.id];
      if ('no' in cell) reasons.push(`- ${row.title}, ${column.title}: ${cell.no}.`);
      return verdictOf(cell);
    });
    lines.push(`| ${row.title} (${row.versions}) | ${cells.join(' | ')} |`);
  }
  const notes = reasons.length === 0 ? [] : ['', 'Where it says no:', '', ...reasons];
  return [...lines, ...notes].join('\n');
}

/** `text` (docs/clients.md) with the table between its markers written anew; null when the markers are missing. */
export function fillClaims(text, claims) {
  const start = text.indexOf(TABLE_START);
  const end = text.indexOf(TABLE_END);
  if (start === -1 || end < start) return null;
  return `${text.slice(0, start + TABLE_START.length)}\n${renderClaims(claims)}\n${text.slice(end)}`;
}

/** The titles of the tests a TAP report says passed, and of those it says were skipped. */
export function testsIn(tap) {
  const passed = new Set();
  const skipped = new Set();
  for (const line of tap.split('\n')) {
    const match = /^\s*ok \d+ - (.*)$/.exec(line);
    if (!match) continue;
    const skip = /^(.*?) # (?:SKIP|TODO)\b/.exec(match[1]);
    // TAP escapes a # and a backslash in a title.
    const title = (skip ? skip[1] : match[1]).replace(/\\([#\\])/g, '$1');
    (skip ? skipped : passed).add(title);
  }
  return { passed, skipped };
}

/**
 * A whole run of `suite` against the claims it backs: `failures`, a `yes` no passed test of the run
 * proves (the table says more than the run shows); `unverified`, one whose tests all skipped (the
 * client is not installed here: the skip says why).
 */
export function checkClaims(claims, suite, tap) {
  const { passed, skipped } = testsIn(tap);
  const failures = [];
  const unverified = [];
  for (const row of claims.rows) {
    for (const column of claims.columns) {
      const cell = row.cells[column.id];
      if (!cell || !('yes' in cell)) continue;
      for (const proof of cell.yes.filter((each) => each.suite === suite)) {
        const pattern = new RegExp(proof.title);
        const claim = `docs/clients.md says ${row.title} has "${column.title}"`;
        if ([...passed].some((title) => pattern.test(title))) continue;
        if ([...skipped].some((title) => pattern.test(title))) unverified.push(`${claim}: its test /${proof.title}/ skipped`);
        else failures.push(`${claim}, but no test matching /${proof.title}/ passed (test/clients/claims.json)`);
      }
    }
  }
  return { failures, unverified };
}
