/** The settings registry: how each kind reads, the configuration reference it renders, and that every name the source reads is in it. */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';
import { SETTINGS, setting, settingDefault, settingProblem, WAKE_COMMAND_VARIABLES, type SettingName } from '../../src/model/settings.js';
import { fillReference, rowSettings, SETTING_HELP } from '../../src/model/settings-help.js';
import { ROOT } from '../helpers/bus-env.js';

const SRC = join(ROOT, 'src');
const REGISTRY = ['model/settings.ts', 'model/settings-help.ts'];

function read<N extends SettingName>(name: N, raw: string | undefined): unknown {
  return setting(raw === undefined ? {} : { [name]: raw }, name);
}

test('a whole number clamps to its minimum, or falls back to the default where the setting says so', () => {
  const cases: Array<[SettingName, string | undefined, unknown]> = [
    ['AGENT_BUS_HTTP_RATE', undefined, 200],
    ['AGENT_BUS_HTTP_RATE', '', 200],
    ['AGENT_BUS_HTTP_RATE', ' 7 ', 7],
    ['AGENT_BUS_HTTP_RATE', '0', 1],
    ['AGENT_BUS_HTTP_RATE', '-5', 1],
    ['AGENT_BUS_HTTP_RATE', '1.5', 200],
    ['AGENT_BUS_HTTP_RATE', 'fast', 200],
    ['AGENT_BUS_NOTICE_MAX_BYTES', '10', 1000],
    ['AGENT_BUS_WAKES_PER_HOUR', '0', 0],
    ['AGENT_BUS_CHANNEL_MAX_NOTICES', '7', 7],
    ['AGENT_BUS_CHANNEL_MAX_NOTICES', '0', 50],
    ['AGENT_BUS_CHANNEL_MAX_NOTICES', '-3', 50],
    ['AGENT_BUS_RETENTION_DAYS', undefined, null],
    ['AGENT_BUS_RETENTION_DAYS', '0', null],
    ['AGENT_BUS_RETENTION_DAYS', '-2', null],
    ['AGENT_BUS_RETENTION_DAYS', 'soon', null],
    ['AGENT_BUS_RETENTION_DAYS', '30', 30],
  ];
  for (const [name, raw, want] of cases) assert.equal(read(name, raw), want, `${name}=${String(raw)}`);
});

test('a number below its minimum (or at it, where it must be more) is the default, as is one that is no number', () => {
  const cases: Array<[SettingName, string | undefined, unknown]> = [
    ['AGENT_BUS_WATCH_POLL_SECONDS', undefined, 2],
    ['AGENT_BUS_WATCH_POLL_SECONDS', '0.5', 0.5],
    ['AGENT_BUS_WATCH_POLL_SECONDS', '0.05', 0.05],
    ['AGENT_BUS_WATCH_POLL_SECONDS', '0.01', 2],
    ['AGENT_BUS_WATCH_POLL_SECONDS', 'soon', 2],
    ['AGENT_BUS_WATCH_POLL_SECONDS', 'Infinity', 2],
    ['AGENT_BUS_WATCH_HOURS', '0', 0],
    ['AGENT_BUS_WATCH_HOURS', '-1', 24],
    ['BRAIN_HTTP_TIMEOUT', '0', 3],
    ['BRAIN_HTTP_TIMEOUT', '0.5', 0.5],
    ['AGENT_BUS_CLIENT_VERSION_TIMEOUT', '-4', 10],
  ];
  for (const [name, raw, want] of cases) assert.equal(read(name, raw), want, `${name}=${String(raw)}`);
});

test('a size in bytes takes K, M and G; text is trimmed; a list drops empty items; flags read as each reader always has', () => {
  const cases: Array<[SettingName, string | undefined, unknown]> = [
    ['AGENT_BUS_AUDIT_MAX_BYTES', undefined, 0],
    ['AGENT_BUS_AUDIT_MAX_BYTES', '4096', 4096],
    ['AGENT_BUS_AUDIT_MAX_BYTES', '5kb', 5120],
    ['AGENT_BUS_AUDIT_MAX_BYTES', ' 10 M ', 10 * 1024 ** 2],
    ['AGENT_BUS_AUDIT_MAX_BYTES', '1G', 1024 ** 3],
    ['AGENT_BUS_AUDIT_MAX_BYTES', 'lots', 0],
    ['AGENT_BUS_NAME', undefined, ''],
    ['AGENT_BUS_NAME', ' shop/claude ', 'shop/claude'],
    ['BRAIN_CHANNEL', ' ', 'brain'],
    ['AGENT_BUS_CLAUDE_BIN', undefined, 'claude'],
    ['AGENT_BUS_BIN', ' /opt/agent-bus ', ' /opt/agent-bus '],
    ['AGENT_BUS_CHANNELS', undefined, undefined],
    ['AGENT_BUS_CHANNELS', '', ''],
    ['AGENT_BUS_CHANNELS', ' ops ', ' ops '],
    ['NO_COLOR', '', false],
    ['NO_COLOR', '0', true],
    ['AGENT_BUS_DEBUG', ' ', true],
    ['AGENT_BUS_NATIVE_WAKE', undefined, true],
    ['AGENT_BUS_NATIVE_WAKE', ' 0 ', false],
    ['AGENT_BUS_NATIVE_WAKE', 'off', true],
    ['AGENT_BUS_SESSIONS', 'OFF', false],
    ['AGENT_BUS_SESSIONS', 'no', false],
    ['AGENT_BUS_SESSIONS', '1', true],
    ['BRAIN_ENABLED', undefined, null],
    ['BRAIN_ENABLED', ' Yes ', true],
    ['BRAIN_ENABLED', '0', false],
    ['BRAIN_ENABLED', 'maybe', false],
  ];
  for (const [name, raw, want] of cases) assert.equal(read(name, raw), want, `${name}=${String(raw)}`);
  assert.deepEqual(read('AGENT_BUS_HTTP_ORIGINS', ' https://a.example, ,https://b.example '), ['https://a.example', 'https://b.example']);
  assert.deepEqual(read('AGENT_BUS_HTTP_ORIGINS', undefined), []);
});

test('a duration takes seconds or s, m, h, d; past its longest it is the longest, and one that is no duration is the default', () => {
  const ttl = (value: string | undefined): number => setting({ AGENT_BUS_RESERVATION_TTL: value }, 'AGENT_BUS_RESERVATION_TTL');
  assert.equal(settingDefault('AGENT_BUS_RESERVATION_TTL'), 3_600_000);
  assert.equal(ttl(undefined), 3_600_000);
  assert.equal(ttl(' 2h '), 7_200_000);
  assert.equal(ttl('90'), 90_000);
  assert.equal(ttl('30m'), 1_800_000);
  assert.equal(ttl('48h'), 86_400_000);
  assert.equal(settingProblem('AGENT_BUS_RESERVATION_TTL', '48h'), 'is longer than 1d: 1d is used');
  assert.equal(ttl('1h30m'), 5_400_000, 'units combined, as every duration');
  assert.equal(ttl('soon'), 3_600_000);
  assert.equal(settingProblem('AGENT_BUS_RESERVATION_TTL', 'soon'), 'is not a duration (seconds (90), or numbers with s, m, h, d or w, largest first (30s, 5m, 12h, 90d, 1h30m)): the default 1h is used');
  assert.equal(settingProblem('AGENT_BUS_COLLISION_WINDOW', '10m'), null);
});

test('a value not read as written says what is used instead; one read as written has no problem', () => {
  assert.equal(settingProblem('AGENT_BUS_HTTP_RATE', 'fast'), 'is not a whole number: the default 200 is used');
  assert.equal(settingProblem('AGENT_BUS_HTTP_RATE', '0'), 'is below 1: 1 is used');
  assert.equal(settingProblem('AGENT_BUS_CHANNEL_MAX_NOTICES', '0'), 'is below 1: the default 50 is used');
  assert.equal(settingProblem('AGENT_BUS_WATCH_POLL_SECONDS', '0.01'), 'is not at least 0.05: the default 2 is used');
  assert.equal(settingProblem('BRAIN_HTTP_TIMEOUT', '0'), 'is not more than 0: the default 3 is used');
  assert.equal(settingProblem('AGENT_BUS_RETENTION_DAYS', 'soon'), 'is not a whole number: it is off');
  assert.match(settingProblem('AGENT_BUS_AUDIT_MAX_BYTES', 'lots') ?? '', /^is not a size in bytes .*: the default 0 is used$/);
  assert.equal(settingProblem('BRAIN_ENABLED', 'maybe'), 'is neither on (1, true, yes, on) nor off (0, false, no, off): it is taken as off');
  for (const [name, raw] of [
    ['AGENT_BUS_HTTP_RATE', '7'],
    ['AGENT_BUS_RETENTION_DAYS', '0'],
    ['AGENT_BUS_AUDIT_MAX_BYTES', '10M'],
    ['BRAIN_ENABLED', 'off'],
    ['AGENT_BUS_NAME', 'anything at all'],
    ['AGENT_BUS_NATIVE_WAKE', '0'],
  ] as Array<[SettingName, string]>) {
    assert.equal(settingProblem(name, raw), null, `${name}=${raw}`);
  }
});

test('the configuration reference holds the tables the registry renders, every setting in one of them', () => {
  const page = readFileSync(join(ROOT, 'docs', 'configuration.md'), 'utf8');
  assert.deepEqual(page.split('\n'), fillReference(page).split('\n'), 'npm run docs:settings writes docs/configuration.md from src/model/settings-help.ts');
  const rowNames = new Set(page.split('\n').filter((line) => line.startsWith('| `')).flatMap((line) => [...(line.split(' | ')[0] as string).matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((match) => match[1] as string)));
  for (const name of [...Object.keys(SETTINGS), ...WAKE_COMMAND_VARIABLES]) assert.ok(rowNames.has(name), `${name} has a row in docs/configuration.md`);
  assert.ok(rowNames.size > 40, `the rows were read: ${rowNames.size}`);
});

test('a generated part that is missing, or unknown, is an error rather than a page that silently lacks it', () => {
  assert.throws(() => fillReference('# nothing generated here\n'), /lacks the generated part\(s\) settings, wake-command, development/);
  const parts = ['settings', 'wake-command', 'development', 'extra'].map((name) => `<!-- BEGIN ${name}: x -->\n<!-- END ${name} -->`).join('\n');
  assert.throws(() => fillReference(parts), /no generated part is named extra/);
  const filled = fillReference(['before', '<!-- BEGIN settings: x -->', 'stale text', '<!-- END settings -->', 'between', '<!-- BEGIN wake-command: x -->', '<!-- END wake-command -->', '<!-- BEGIN development: x -->', '<!-- END development -->', 'after'].join('\n'));
  assert.ok(!filled.includes('stale text') && filled.startsWith('before\n') && filled.endsWith('\nafter') && filled.includes('\nbetween\n'), 'only the generated parts are written');
  assert.ok(filled.includes('| `AGENT_BUS_NAME` |') && filled.includes('| `AGENT_BUS_BODY_PREVIEW` |') && filled.includes('| `AGENT_BUS_TEST_PG_URL` |'));
});

test('each setting has one row, and the defaults a row states are filled in from the registry', () => {
  const rows = SETTING_HELP.flatMap((row) => rowSettings(row));
  assert.deepEqual([...rows].sort(), Object.keys(SETTINGS).sort(), 'every setting in one row, and no row without its setting');
  assert.equal(new Set(rows).size, rows.length, 'no setting in two rows');
  for (const row of SETTING_HELP) {
    for (const name of rowSettings(row)) {
      const fallback = settingDefault(name);
      const stated = (typeof fallback === 'number' && fallback !== 0) || (typeof fallback === 'string' && fallback !== '');
      if (stated) assert.ok(row.meaning.includes(`{${name}}`), `${name}: its row names its default as {${name}}, not as a number of its own`);
    }
  }
});

/** Files that name no setting and nothing shaped like one are not parsed. */
const SHAPED = new RegExp(`(?:AGENT_BUS|BRAIN)_|${Object.keys(SETTINGS).join('|')}`);

/** Every name shaped like a setting that a source file holds as text or as a property: in strings, templates, `env.NAME` and `{ NAME: … }`. */
function namesIn(path: string, pattern: RegExp): string[] {
  const text = readFileSync(path, 'utf8');
  if (!SHAPED.test(text)) return [];
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateHead(node) || ts.isTemplateMiddle(node) || ts.isTemplateTail(node)) {
      found.push(...(node.text.match(pattern) ?? []));
    } else if ((ts.isPropertyAccessExpression(node) || ts.isPropertyAssignment(node)) && ts.isIdentifier(node.name)) {
      if (new RegExp(`^${pattern.source}$`).test(node.name.text)) found.push(node.name.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function sourceFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(folder, entry.name)) : entry.name.endsWith('.ts') ? [join(folder, entry.name)] : [],
  );
}

test('every setting-shaped name the source reads is in the registry, and every setting in it is read', () => {
  const files = sourceFiles(SRC).filter((path) => !REGISTRY.includes(relative(SRC, path)));
  assert.ok(files.length > 100, `the source was found: ${files.length} files`);
  const known = new Set<string>([...Object.keys(SETTINGS), ...WAKE_COMMAND_VARIABLES]);
  const unknown: string[] = [];
  const seen = new Set<string>();
  for (const path of files) {
    for (const name of namesIn(path, /\b(?:AGENT_BUS|BRAIN)_[A-Z0-9_]*[A-Z0-9]\b/g)) {
      seen.add(name);
      if (!known.has(name)) unknown.push(`${relative(ROOT, path)}: ${name}`);
    }
  }
  assert.ok(seen.size > 40, `the scan sees the names: ${[...seen].join(', ')}`);
  assert.deepEqual(unknown, [], 'add each to SETTINGS in src/model/settings.ts, with its row in settings-help.ts');
  const named = new Set(files.flatMap((path) => namesIn(path, /\b[A-Z][A-Z0-9_]*[A-Z0-9]\b/g)));
  assert.deepEqual(
    Object.keys(SETTINGS).filter((name) => !named.has(name)),
    [],
    'a setting nothing reads has no place in the registry',
  );
});
