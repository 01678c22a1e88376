/**
 * One language for names: every environment variable that the product's text mentions (the source's
 * strings, which hold every help text, error and hook output; the README; the pages in docs/) is
 * explained in the configuration reference, docs/configuration.md, which is written from the
 * settings registry. And the reference's list of development variables is the one the test suite
 * and the scripts read.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';
import { DEVELOPMENT_VARIABLES } from '../../src/model/settings-help.js';
import { SETTINGS, WAKE_COMMAND_VARIABLES } from '../../src/model/settings.js';
import { ROOT } from '../helpers/bus-env.js';

/** A name shaped like one of agent-bus's variables. */
const VARIABLE = /\b(?:AGENT_BUS|AGENTIHOOKS|BRAIN)_[A-Z0-9_]*[A-Z0-9]\b/g;

/**
 * Names the source holds that are never shown to a person, each with why. None today: every name in
 * the source is a setting, or a variable agent-bus gives a wake command, and both are explained.
 */
const INTERNAL: Record<string, string> = {};

/**
 * Names the tests and scripts set that are no variable of anything, each with why.
 */
const NOT_VARIABLES: Record<string, string> = {
  AGENT_BUS_HTTP_RAT: "a misspelling the doctor test sets, to see doctor name AGENT_BUS_HTTP_RATE",
  AGENT_BUS_TOKNE: "a misspelling the doctor test sets, to see doctor name AGENT_BUS_TOKEN",
};

function filesUnder(folder: string, ends: readonly string[]): string[] {
  if (!existsSync(folder)) return [];
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : filesUnder(path, ends);
    return ends.some((end) => entry.name.endsWith(end)) ? [path] : [];
  });
}

/** The names in a source file's string literals and templates: the text it can show. */
function namesInStrings(path: string): string[] {
  const text = readFileSync(path, 'utf8');
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateHead(node) || ts.isTemplateMiddle(node) || ts.isTemplateTail(node)) {
      found.push(...(node.text.match(VARIABLE) ?? []));
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The variables the configuration reference explains: the first cell of each row of its tables. */
function explained(): Set<string> {
  const page = readFileSync(join(ROOT, 'docs', 'configuration.md'), 'utf8');
  return new Set(
    page
      .split('\n')
      .filter((line) => line.startsWith('| `'))
      .flatMap((line) => [...(line.split(' | ')[0] as string).matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((match) => match[1] as string)),
  );
}

test('every environment variable the source, the README and docs/ mention is explained in the configuration reference', () => {
  const known = explained();
  assert.ok(known.has('AGENT_BUS_DB') && known.has('AGENT_BUS_BODY_PREVIEW') && known.size > 60, `the reference's rows were read: ${known.size}`);
  const mentions = new Map<string, Set<string>>();
  const note = (name: string, where: string): void => {
    mentions.set(name, (mentions.get(name) ?? new Set()).add(where));
  };
  const sources = filesUnder(join(ROOT, 'src'), ['.ts']);
  assert.ok(sources.length > 100, `the source was found: ${sources.length} files`);
  for (const path of sources) for (const name of namesInStrings(path)) note(name, relative(ROOT, path));
  const pages = ['README.md', ...filesUnder(join(ROOT, 'docs'), ['.md']).map((path) => relative(ROOT, path))];
  for (const page of pages) for (const name of readFileSync(join(ROOT, page), 'utf8').match(VARIABLE) ?? []) note(name, page);
  assert.ok(mentions.size > 60, `the names were found: ${mentions.size}`);
  const unexplained = [...mentions]
    .filter(([name]) => !known.has(name) && !Object.hasOwn(INTERNAL, name))
    .map(([name, where]) => `${name} (in ${[...where].sort().join(', ')})`)
    .sort();
  assert.deepEqual(unexplained, [], 'explain each in src/model/settings-help.ts (and register a setting in src/model/settings.ts), then npm run docs:settings');
  for (const name of Object.keys(INTERNAL)) assert.ok(mentions.has(name) && !known.has(name), `${name}: an exception nothing needs any more`);
});

test("the reference's development variables are the ones the tests and scripts read, and nothing they read is left out", () => {
  const files = [...['scripts', 'test', 'bench'].flatMap((folder) => filesUnder(join(ROOT, folder), ['.ts', '.mts', '.mjs', '.cjs', '.js', '.sh'])), join(ROOT, '.ci', 'run')];
  const read = new Set(files.flatMap((path) => readFileSync(path, 'utf8').match(VARIABLE) ?? []));
  const documented = new Set<string>([...Object.keys(SETTINGS), ...WAKE_COMMAND_VARIABLES, ...Object.keys(DEVELOPMENT_VARIABLES), ...Object.keys(NOT_VARIABLES)]);
  assert.deepEqual(Object.keys(DEVELOPMENT_VARIABLES).filter((name) => !read.has(name)), [], 'a development variable nothing reads any more');
  assert.deepEqual([...read].filter((name) => !documented.has(name)).sort(), [], 'add each to DEVELOPMENT_VARIABLES in src/model/settings-help.ts, then npm run docs:settings');
});
