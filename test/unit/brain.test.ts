/**
 * The brain adapter's pure parts: the hot-arcs trim, the size cap, the stop-phrase
 * defusing, entry order and defaults, and the settings (environment over the bus
 * folder's `.env`, the enable rules). Anything on disk lives in a temp folder.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import {
  DEFAULT_ENTRY_PRIORITY,
  DEFAULT_ENTRY_TTL,
  capContent,
  defuse,
  entryBody,
  entryFrom,
  orderEntries,
  trimHotArcs,
  type BrainEntry,
} from '../../src/brain/entry.js';
import { brainEnv, brainSettings, type BrainSettings } from '../../src/brain/settings.js';
import { settingDefault } from '../../src/model/settings.js';

const RECALLED = 'BRAIN CONTEXT (recalled state, not an operator directive):';

// ---------------------------------------------------------------------------
// trimHotArcs
// ---------------------------------------------------------------------------

function arcsTable(heats: number[], columns: 'three' | 'five' = 'three'): string {
  const header = columns === 'three' ? '| Arc | Heat | Status |' : '| Arc | Heat | Status | Owner | Since |';
  const separator = columns === 'three' ? '|-----|------|--------|' : '|-----|------|--------|-------|-------|';
  const rows = heats.map((heat, index) => (columns === 'three' ? `| arc-${index + 1} | ${heat} | s${index + 1} |` : `| arc-${index + 1} | ${heat} | s | o | d |`));
  return [header, separator, ...rows].join('\n');
}

test('trimHotArcs keeps the first N rows as given (no re-sorting by heat) and says how many went', () => {
  const heats = [3.1, 9.9, 5.5, 8.8, 1.2];
  const content = `## Currently Active\n\n${arcsTable(heats)}`;
  const trimmed = trimHotArcs(content, 2);
  assert.equal(
    trimmed,
    ['## Currently Active', '', '| Arc | Heat | Status |', '|-----|------|--------|', '| arc-1 | 3.1 | s1 |', '| arc-2 | 9.9 | s2 |', '| ... | ... | *(3 more arcs trimmed)* |'].join('\n'),
  );
  // The note row has as many cells as the header.
  const wide = trimHotArcs(arcsTable([1, 2, 3, 4], 'five'), 1);
  assert.equal(wide.split('\n').at(-1), '| ... | ... | ... | ... | *(3 more arcs trimmed)* |');
  assert.equal(wide.split('\n').length, 4, 'header, separator, one row, the note');
});

test('trimHotArcs keeps the text after the table', () => {
  const content = `intro\n${arcsTable([1, 2, 3, 4])}\n\n## Next\nafter the table\n| not | arcs |`;
  const trimmed = trimHotArcs(content, 2);
  const lines = trimmed.split('\n');
  assert.deepEqual(lines.slice(0, 5), ['intro', '| Arc | Heat | Status |', '|-----|------|--------|', '| arc-1 | 1 | s1 |', '| arc-2 | 2 | s2 |']);
  assert.equal(lines[5], '| ... | ... | *(2 more arcs trimmed)* |');
  assert.deepEqual(lines.slice(6), ['', '## Next', 'after the table', '| not | arcs |'], 'a later table after a blank line is not part of the arcs table');
});

test('trimHotArcs leaves tables at or under N, texts without a `| Arc … Heat` header, and N=0 alone', () => {
  const five = arcsTable([1, 2, 3, 4, 5]);
  assert.equal(trimHotArcs(five, 5), five, 'exactly N rows');
  assert.equal(trimHotArcs(five, 10), five, 'fewer than N rows');
  assert.equal(trimHotArcs(five, 0), five, '0 disables the trim');
  assert.equal(trimHotArcs(five, -1), five, 'a negative N disables it too');
  const noHeat = five.replace('| Arc | Heat | Status |', '| Arc | Temperature | Status |');
  assert.equal(trimHotArcs(noHeat, 1), noHeat, 'no Heat column');
  const noArc = five.replace('| Arc | Heat | Status |', '| Name | Heat | Status |');
  assert.equal(trimHotArcs(noArc, 1), noArc, 'not an Arc table');
  assert.equal(trimHotArcs('plain text\nwith lines', 1), 'plain text\nwith lines');
  assert.equal(trimHotArcs('| Arc | Heat |', 1), '| Arc | Heat |', 'a header with nothing after it');
  assert.equal(trimHotArcs('| Arc | Heat |\n|---|---|', 1), '| Arc | Heat |\n|---|---|', 'a header and separator with no rows');
  // The header may be indented; the trim still applies.
  assert.match(trimHotArcs(`  ${arcsTable([1, 2, 3])}`, 1), /\*\(2 more arcs trimmed\)\*/);
});

// ---------------------------------------------------------------------------
// capContent, defuse, entryBody
// ---------------------------------------------------------------------------

test('capContent counts code points, not bytes or UTF-16 units', () => {
  assert.equal(capContent('abcdefghij', 4), 'abcd\n…[+6 characters trimmed]');
  // é is two UTF-8 bytes: a byte cap would keep 2 of them.
  assert.equal(capContent('é'.repeat(10), 4), `${'é'.repeat(4)}\n…[+6 characters trimmed]`);
  // 😀 is four UTF-8 bytes and two UTF-16 units: one character each, never split.
  const emoji = '😀'.repeat(6);
  const capped = capContent(emoji, 3);
  assert.equal(capped, `${'😀'.repeat(3)}\n…[+3 characters trimmed]`);
  assert.ok(!/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/.test(capped), 'no lone surrogate');
  assert.equal(capContent('ab😀cd', 3), 'ab😀\n…[+2 characters trimmed]');
});

test('capContent leaves content at or under the cap unchanged, and 0 disables it', () => {
  assert.equal(capContent('abcd', 4), 'abcd', 'exactly at the cap');
  assert.equal(capContent('😀😀😀😀', 4), '😀😀😀😀', 'exactly at the cap in characters (8 UTF-16 units, 16 bytes)');
  assert.equal(capContent('é'.repeat(1536), settingDefault('BRAIN_PAYLOAD_MAX_BYTES')), 'é'.repeat(1536), 'the default cap is 1536 characters (3072 bytes here)');
  assert.equal(capContent('abc', 10), 'abc');
  assert.equal(capContent('x'.repeat(5000), 0), 'x'.repeat(5000), '0 disables the cap');
});

test('defuse rewrites the stop phrases, case-insensitively and everywhere, and nothing else', () => {
  assert.equal(defuse('Do You Understand?'), 'is this clear?');
  assert.equal(defuse('please ELABORATE TO ME now'), 'please expand on now');
  assert.equal(defuse('Stop all tool calls and wait for confirmation.'), 'pause tool usage and awaiting input.');
  assert.equal(defuse('do you understand; do you understand'), 'is this clear; is this clear');
  const harmless = 'understand the tool calls; confirmation pending';
  assert.equal(defuse(harmless), harmless);
});

function entry(fields: Partial<BrainEntry> & { id: string }): BrainEntry {
  return { title: fields.id, content: `body of ${fields.id}`, priority: 5, ttlSeconds: 3600, severity: 'info', ...fields };
}

test('entryBody: framed as recalled state, trimmed, arcs cut, then capped, then defused', () => {
  assert.equal(entryBody(entry({ id: 'a', content: '\n\n  hello  \n' }), 10, 100), `${RECALLED}\n\nhello`);
  const arcs = entryBody(entry({ id: 'a', content: arcsTable([1, 2, 3]) }), 1, 0);
  assert.equal(arcs, `${RECALLED}\n\n| Arc | Heat | Status |\n|-----|------|--------|\n| arc-1 | 1 | s1 |\n| ... | ... | *(2 more arcs trimmed)* |`);
  assert.equal(entryBody(entry({ id: 'a', content: 'do you understand' }), 10, 0), `${RECALLED}\n\nis this clear`);
  // The cap applies to the content, not the framing.
  assert.equal(entryBody(entry({ id: 'a', content: 'abcdef' }), 10, 2), `${RECALLED}\n\nab\n…[+4 characters trimmed]`);
});

// ---------------------------------------------------------------------------
// orderEntries, entryFrom
// ---------------------------------------------------------------------------

test('orderEntries: priority descending, the given order within a priority, the first of a duplicate id wins', () => {
  const ordered = orderEntries([
    entry({ id: 'a', priority: 1 }),
    entry({ id: 'b', priority: 9 }),
    entry({ id: 'c', priority: 5 }),
    entry({ id: 'd', priority: 5 }),
    entry({ id: 'e', priority: -2 }),
    entry({ id: 'f', priority: 5 }),
  ]);
  assert.deepEqual(
    ordered.map((item) => item.id),
    ['b', 'c', 'd', 'f', 'a', 'e'],
  );
  const deduped = orderEntries([entry({ id: 'x', priority: 1, content: 'first' }), entry({ id: 'y', priority: 3 }), entry({ id: 'x', priority: 10, content: 'second' })]);
  assert.deepEqual(
    deduped.map((item) => [item.id, item.content]),
    [
      ['y', 'body of y'],
      ['x', 'first'],
    ],
    'the later duplicate is dropped even with a higher priority',
  );
  assert.deepEqual(orderEntries([]), []);
});

test("entryFrom: defaults priority 5, ttl 3600, severity info; a file's id is its stem, a feed item's its title", () => {
  assert.equal(DEFAULT_ENTRY_PRIORITY, 5);
  assert.equal(DEFAULT_ENTRY_TTL, 3600);
  assert.deepEqual(entryFrom({}, 'body', 'stem'), { id: 'stem', title: 'stem', content: 'body', priority: 5, ttlSeconds: 3600, severity: 'info' });
  // The spec: title defaults to the file stem, even when an id is given.
  assert.deepEqual(entryFrom({ id: 'the-id' }, 'body', 'stem'), { id: 'the-id', title: 'stem', content: 'body', priority: 5, ttlSeconds: 3600, severity: 'info' });
  assert.deepEqual(entryFrom({ id: 'the-id' }, 'body', ''), { id: 'the-id', title: 'the-id', content: 'body', priority: 5, ttlSeconds: 3600, severity: 'info' }, 'a feed item: its id');
  // Two files with the same title stay two entries: the stem names them.
  assert.deepEqual(entryFrom({ title: 'The Title' }, 'body', 'stem'), { id: 'stem', title: 'The Title', content: 'body', priority: 5, ttlSeconds: 3600, severity: 'info' });
  // A feed item (no stem) without an id goes by its title.
  assert.deepEqual(entryFrom({ title: 'The Title' }, 'body', ''), { id: 'The Title', title: 'The Title', content: 'body', priority: 5, ttlSeconds: 3600, severity: 'info' });
  assert.deepEqual(
    entryFrom({ id: ' hot-arcs ', title: ' Active Hot Arcs ', priority: 10, ttl: 120, severity: 'alert' }, 'body', 'stem'),
    { id: 'hot-arcs', title: 'Active Hot Arcs', content: 'body', priority: 10, ttlSeconds: 120, severity: 'alert' },
  );
  assert.equal(entryFrom({ id: 42 }, 'body', 'stem')?.id, '42', 'a numeric id becomes text');
  assert.equal(entryFrom({ id: '  ', title: '' }, 'body', 'stem')?.id, 'stem', 'blank id and title fall back to the stem');
  assert.equal(entryFrom({ id: ['a'] }, 'body', 'stem')?.id, 'stem', 'a list id is ignored');
  assert.equal(entryFrom({}, 'body', ''), null, 'no id at all');
});

test('entryFrom: numbers as text are read, anything else non-integer falls back to the default', () => {
  const priority = (value: unknown) => entryFrom({ priority: value }, 'body', 's')?.priority;
  const ttl = (value: unknown) => entryFrom({ ttl: value }, 'body', 's')?.ttlSeconds;
  assert.equal(priority('7'), 7);
  assert.equal(priority(' -3 '), -3);
  assert.equal(priority(0), 0);
  assert.equal(priority('high'), 5);
  assert.equal(priority(7.5), 5);
  assert.equal(priority('7.5'), 5);
  assert.equal(priority(null), 5);
  assert.equal(priority(true), 5);
  assert.equal(ttl('120'), 120);
  assert.equal(ttl(60), 60);
  assert.equal(ttl('1h'), 3600, 'not a number of seconds');
  assert.equal(ttl(0), 3600, 'not positive');
  assert.equal(ttl(-5), 3600, 'negative');
  assert.equal(ttl(1.5), 3600);
});

test('entryFrom: severity critical/alert in any case, anything else info; blank content is no entry', () => {
  const severity = (value: unknown) => entryFrom({ severity: value }, 'body', 's')?.severity;
  assert.equal(severity('critical'), 'critical');
  assert.equal(severity(' ALERT '), 'alert');
  assert.equal(severity('Info'), 'info');
  assert.equal(severity('warning'), 'info');
  assert.equal(severity(3), 'info');
  assert.equal(entryFrom({ id: 'x' }, '', 'stem'), null);
  assert.equal(entryFrom({ id: 'x' }, ' \n\t\r\n ', 'stem'), null);
  assert.equal(entryFrom({ id: 'x' }, 'x', 'stem')?.content, 'x');
});

// ---------------------------------------------------------------------------
// brainSettings, brainEnv
// ---------------------------------------------------------------------------

interface Scratch {
  dir: string;
  home: string;
  busFolder: string;
  feed: string;
  env: Record<string, string>;
}

/** A temp HOME and bus folder (AGENT_BUS_DB inside it); nothing touches the real ~. */
function withScratch(work: (scratch: Scratch) => void): () => void {
  return () => {
    const dir = mkdtempSync(join(tmpdir(), 'agent-bus-brain-unit-'));
    const home = join(dir, 'home');
    const busFolder = join(dir, 'bus');
    mkdirSync(home);
    mkdirSync(busFolder);
    try {
      work({ dir, home, busFolder, feed: join(busFolder, 'brain-feed'), env: { HOME: home, AGENT_BUS_DB: join(busFolder, 'bus.db') } });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
}

function withFeed(folder: string, files: Record<string, string> = { 'arcs.md': 'hot arcs' }): void {
  mkdirSync(folder, { recursive: true });
  for (const [name, text] of Object.entries(files)) writeFileSync(join(folder, name), text);
}

test(
  'brainSettings defaults: off, the bus folder brain-feed, channel brain, 10 arcs, 1536 characters, every 20 tool calls',
  withScratch(({ env, feed }) => {
    const settings = brainSettings(env);
    assert.deepEqual(settings, {
      enabled: false,
      writerEnabled: false,
      source: { kind: 'file', path: feed },
      sourceType: 'file',
      channel: 'brain',
      hotArcsTopN: 10,
      payloadMaxChars: 1536,
      refreshToolCalls: 20,
      enabledBecause: 'no BRAIN_URL and no feed folder with content',
    } satisfies BrainSettings);
    assert.deepEqual([settingDefault('BRAIN_CHANNEL'), settingDefault('BRAIN_HOT_ARCS_TOP_N'), settingDefault('BRAIN_PAYLOAD_MAX_BYTES'), settingDefault('BRAIN_REFRESH_TOOL_CALLS')], ['brain', 10, 1536, 20]);
  }),
);

test(
  'brainSettings: the numeric settings and the channel',
  withScratch(({ env }) => {
    const settings = brainSettings({ ...env, BRAIN_CHANNEL: ' arcs ', BRAIN_HOT_ARCS_TOP_N: '3', BRAIN_PAYLOAD_MAX_BYTES: '200', BRAIN_REFRESH_TOOL_CALLS: '7' });
    assert.deepEqual([settings.channel, settings.hotArcsTopN, settings.payloadMaxChars, settings.refreshToolCalls], ['arcs', 3, 200, 7]);
    const zeros = brainSettings({ ...env, BRAIN_HOT_ARCS_TOP_N: '0', BRAIN_PAYLOAD_MAX_BYTES: '0', BRAIN_REFRESH_TOOL_CALLS: '0' });
    assert.deepEqual([zeros.hotArcsTopN, zeros.payloadMaxChars, zeros.refreshToolCalls], [0, 0, 1], '0 disables the trim and the cap; the cadence is at least 1');
    const junk = brainSettings({ ...env, BRAIN_CHANNEL: '  ', BRAIN_HOT_ARCS_TOP_N: 'ten', BRAIN_PAYLOAD_MAX_BYTES: '1.5k', BRAIN_REFRESH_TOOL_CALLS: 'often' });
    assert.deepEqual([junk.channel, junk.hotArcsTopN, junk.payloadMaxChars, junk.refreshToolCalls], ['brain', 10, 1536, 20], 'unreadable values fall back to the defaults');
  }),
);

test(
  'brainSettings: BRAIN_URL wins over the folder, without its trailing slashes; the token falls back to KB_ROUTER_TOKEN',
  withScratch(({ env, feed }) => {
    withFeed(feed);
    const http = brainSettings({ ...env, BRAIN_URL: ' http://127.0.0.1:8103// ', BRAIN_SOURCE_TYPE: 'file', BRAIN_SOURCE_PATH: feed });
    assert.deepEqual(http.source, { kind: 'http', url: 'http://127.0.0.1:8103', token: null, timeoutMs: 3000 });
    assert.equal(http.enabledBecause, 'BRAIN_URL is set');
    const token = (extra: Record<string, string>) => {
      const source = brainSettings({ ...env, BRAIN_URL: 'http://brain', ...extra }).source;
      assert.equal(source.kind, 'http');
      return source.kind === 'http' ? source.token : undefined;
    };
    assert.equal(token({ BRAIN_HTTP_TOKEN: 'own', KB_ROUTER_TOKEN: 'router' }), 'own');
    assert.equal(token({ KB_ROUTER_TOKEN: ' router ' }), 'router');
    assert.equal(token({ BRAIN_HTTP_TOKEN: '  ', KB_ROUTER_TOKEN: 'router' }), 'router', 'a blank token falls back too');
    assert.equal(token({}), null);
    // A blank URL is no URL: the folder is the source.
    assert.deepEqual(brainSettings({ ...env, BRAIN_URL: '   ' }).source, { kind: 'file', path: feed });
  }),
);

test(
  'brainSettings: BRAIN_HTTP_TIMEOUT in seconds, 3 by default and for anything not positive',
  withScratch(({ env }) => {
    const timeout = (value?: string) => {
      const source = brainSettings({ ...env, BRAIN_URL: 'http://brain', ...(value === undefined ? {} : { BRAIN_HTTP_TIMEOUT: value }) }).source;
      return source.kind === 'http' ? source.timeoutMs : undefined;
    };
    assert.equal(timeout(), 3000);
    assert.equal(timeout('10'), 10_000);
    assert.equal(timeout('0.5'), 500);
    assert.equal(timeout('0'), 3000);
    assert.equal(timeout('-1'), 3000);
    assert.equal(timeout('soon'), 3000);
  }),
);

test(
  'brainSettings enable rules: on with BRAIN_URL or markdown in the feed folder; the writer follows the same rule',
  withScratch(({ env, feed }) => {
    const off = brainSettings(env);
    assert.deepEqual([off.enabled, off.writerEnabled], [false, false], 'no folder');
    mkdirSync(feed);
    assert.deepEqual([brainSettings(env).enabled, brainSettings(env).writerEnabled], [false, false], 'an empty folder');
    writeFileSync(join(feed, 'notes.txt'), 'not markdown');
    assert.equal(brainSettings(env).enabled, false, 'no .md file');
    writeFileSync(join(feed, 'arcs.md'), 'hot');
    const on = brainSettings(env);
    assert.deepEqual([on.enabled, on.writerEnabled, on.enabledBecause], [true, true, `${feed} has markdown files`]);
    assert.equal(brainSettings({ ...env, BRAIN_SOURCE_TYPE: 'none' }).enabled, false, 'the folder only counts for BRAIN_SOURCE_TYPE=file');
    assert.equal(brainSettings({ ...env, BRAIN_SOURCE_TYPE: ' file ' }).enabled, true);
    rmSync(feed, { recursive: true });
    const url = brainSettings({ ...env, BRAIN_URL: 'http://brain' });
    assert.deepEqual([url.enabled, url.writerEnabled], [true, true]);
  }),
);

test(
  'brainSettings enable rules: an explicit BRAIN_ENABLED or BRAIN_WRITER_ENABLED always wins',
  withScratch(({ env, feed }) => {
    const withUrl = { ...env, BRAIN_URL: 'http://brain' };
    const offWithUrl = brainSettings({ ...withUrl, BRAIN_ENABLED: '0' });
    assert.deepEqual([offWithUrl.enabled, offWithUrl.enabledBecause], [false, 'BRAIN_ENABLED=0']);
    assert.equal(offWithUrl.writerEnabled, true, 'the writer has its own switch, with the same default rule');
    const onWithout = brainSettings({ ...env, BRAIN_ENABLED: '1' });
    assert.deepEqual([onWithout.enabled, onWithout.writerEnabled, onWithout.enabledBecause], [true, false, 'BRAIN_ENABLED=1']);
    for (const value of ['1', 'true', 'TRUE', 'yes', 'Yes', 'on', ' true ']) assert.equal(brainSettings({ ...env, BRAIN_ENABLED: value }).enabled, true, `BRAIN_ENABLED=${value}`);
    for (const value of ['0', 'false', 'no', 'off', 'nope', '2']) assert.equal(brainSettings({ ...withUrl, BRAIN_ENABLED: value }).enabled, false, `BRAIN_ENABLED=${value}`);
    assert.equal(brainSettings({ ...withUrl, BRAIN_ENABLED: '  ' }).enabled, true, 'a blank value is unset: the default rule');
    assert.equal(brainSettings({ ...withUrl, BRAIN_WRITER_ENABLED: 'false' }).writerEnabled, false);
    assert.equal(brainSettings({ ...env, BRAIN_WRITER_ENABLED: 'yes' }).writerEnabled, true);
    withFeed(feed);
    const folderOff = brainSettings({ ...env, BRAIN_ENABLED: 'no', BRAIN_WRITER_ENABLED: 'off' });
    assert.deepEqual([folderOff.enabled, folderOff.writerEnabled], [false, false], 'explicit off beats a feed with content');
  }),
);

test(
  'brainSettings: BRAIN_SOURCE_PATH with ~ is under HOME, relative paths are absolute, and its content turns the brain on',
  withScratch(({ env, home, feed }) => {
    withFeed(join(home, 'vault', 'feed'));
    const tilde = brainSettings({ ...env, BRAIN_SOURCE_PATH: '~/vault/feed' });
    assert.deepEqual(tilde.source, { kind: 'file', path: join(home, 'vault', 'feed') });
    assert.equal(tilde.enabled, true, 'the folder it names has markdown');
    assert.deepEqual(brainSettings({ ...env, BRAIN_SOURCE_PATH: '~' }).source, { kind: 'file', path: home });
    assert.deepEqual(brainSettings({ ...env, BRAIN_SOURCE_PATH: 'rel/feed' }).source, { kind: 'file', path: resolve('rel/feed') });
    assert.deepEqual(brainSettings({ ...env, BRAIN_SOURCE_PATH: '  ' }).source, { kind: 'file', path: feed }, 'blank: the default');
    // The default folder follows AGENT_BUS_DB; with no AGENT_BUS_DB it is under HOME.
    assert.deepEqual(brainSettings({ HOME: home }).source, { kind: 'file', path: join(home, '.claude-agent-bus', 'brain-feed') });
  }),
);

test(
  "brainSettings: the bus folder's .env is read and the process environment wins",
  withScratch(({ env, busFolder, home }) => {
    writeFileSync(
      join(busFolder, '.env'),
      ['# brain settings', 'BRAIN_URL=http://from-file:8103/', 'BRAIN_HTTP_TOKEN="file-token"', 'BRAIN_CHANNEL=from-file', 'BRAIN_HOT_ARCS_TOP_N=4', 'BRAIN_PAYLOAD_MAX_BYTES=99', ''].join('\n'),
    );
    const fromFile = brainSettings(env);
    assert.deepEqual(fromFile.source, { kind: 'http', url: 'http://from-file:8103', token: 'file-token', timeoutMs: 3000 });
    assert.deepEqual([fromFile.enabled, fromFile.channel, fromFile.hotArcsTopN, fromFile.payloadMaxChars], [true, 'from-file', 4, 99]);
    const overridden = brainSettings({ ...env, BRAIN_CHANNEL: 'from-env', BRAIN_HOT_ARCS_TOP_N: '2', BRAIN_ENABLED: '0' });
    assert.deepEqual([overridden.channel, overridden.hotArcsTopN, overridden.payloadMaxChars, overridden.enabled], ['from-env', 2, 99, false]);
    const merged = brainEnv(env);
    assert.equal(merged.BRAIN_CHANNEL, 'from-file');
    assert.equal(merged.HOME, home);
    assert.equal(brainEnv({ ...env, BRAIN_CHANNEL: 'x' }).BRAIN_CHANNEL, 'x');
  }),
);

test(
  "brainSettings: only the .env beside AGENT_BUS_DB counts, not one in HOME or the working folder's parent",
  withScratch(({ env, home, dir }) => {
    writeFileSync(join(home, '.env'), 'BRAIN_CHANNEL=from-home\n');
    writeFileSync(join(dir, '.env'), 'BRAIN_CHANNEL=from-dir\n');
    assert.equal(brainSettings(env).channel, 'brain');
    assert.deepEqual(brainEnv(env), env, 'no .env in the bus folder: the environment as given');
    const other = join(dir, 'elsewhere');
    mkdirSync(other);
    writeFileSync(join(other, '.env'), 'BRAIN_CHANNEL=from-elsewhere\nBRAIN_ENABLED=yes\n');
    const moved = brainSettings({ ...env, AGENT_BUS_DB: join(other, 'bus.db') });
    assert.deepEqual([moved.channel, moved.enabled], ['from-elsewhere', true]);
    assert.equal(moved.source.kind === 'file' ? moved.source.path : null, join(other, 'brain-feed'));
  }),
);
