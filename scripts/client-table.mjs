#!/usr/bin/env node
// `npm run docs:clients`: writes docs/clients.md's table of what each client gets from
// test/clients/claims.json; the text around it is kept. test/unit/client-claims.test.ts fails while
// the page and the claims differ.
import { readFileSync, writeFileSync } from 'node:fs';
import { claimProblems, fillClaims, loadClaims } from './client-claims.mjs';

const path = new URL('../docs/clients.md', import.meta.url);
const claims = loadClaims();
const problems = claimProblems(claims);
if (problems.length > 0) {
  console.error(`test/clients/claims.json:\n${problems.map((problem) => `  ${problem}`).join('\n')}`);
  process.exit(1);
}
const text = readFileSync(path, 'utf8');
const filled = fillClaims(text, claims);
if (filled === null) {
  console.error('docs/clients.md has no client-claims markers to write the table between');
  process.exit(1);
}
if (filled !== text) writeFileSync(path, filled);
console.log(`docs/clients.md: ${filled === text ? 'unchanged' : 'written'}`);
