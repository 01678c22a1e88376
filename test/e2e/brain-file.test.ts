/**
 * The brain adapter with a folder of markdown files, through the real built
 * CLI: `brain refresh|status --json`, what the channel then holds
 * (`channel list --notices --json`), and the hooks that publish the brain when
 * a session starts and show it only to sessions subscribed to its channel.
 */
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { json, runCli, runCliAsync, tempBus, type CliResult, type TempBus } from '../helpers/bus-env.js';
import type { ListedNotice } from '../../src/core/notice-ops.js';
import type { BrainStatus } from '../../src/brain/status.js';
import { micros, notices, RECALLED, STATUS_KEYS, ttlOf, writeFeed, type Refreshed } from '../helpers/notices.js';
import { waitUntil } from '../helpers/wait.js';

/** The default feed folder: brain-feed beside the database. */
function defaultFeed(bus: TempBus): string {
  return join(bus.folder, 'brain-feed');
}

/** A markdown file with YAML front matter (none when `fields` is null). */
function md(fields: Record<string, string | number> | null, body: string): string {
  if (fields === null) return body;
  return `---\n${Object.entries(fields)
    .map(([key, value]) => `${key}: ${value}`)
    .join('\n')}\n---\n${body}`;
}

function refresh(bus: TempBus, extra: NodeJS.ProcessEnv = {}): { code: number | null; result: Refreshed; stderr: string } {
  const run = runCli(['brain', 'refresh', '--json'], { env: { ...bus.env, ...extra } });
  assert.ok(run.stdout.trim() !== '', `brain refresh printed JSON (exit ${run.code}): ${run.stderr}`);
  return { code: run.code, result: JSON.parse(run.stdout) as Refreshed, stderr: run.stderr };
}

/** A refresh that must succeed. */
function refreshed(bus: TempBus, extra: NodeJS.ProcessEnv = {}): Refreshed {
  const { code, result, stderr } = refresh(bus, extra);
  assert.equal(code, 0, `brain refresh: ${stderr} ${JSON.stringify(result)}`);
  assert.equal(result.ok, true);
  return result;
}

function status(bus: TempBus, extra: NodeJS.ProcessEnv = {}): BrainStatus {
  return json<BrainStatus>(runCli(['brain', 'status', '--json'], { env: { ...bus.env, ...extra } }));
}

function allNotices(bus: TempBus): ListedNotice[] {
  return json<ListedNotice[]>(runCli(['channel', 'list', '--notices', '--json'], { env: bus.env }));
}

function byTitle(list: ListedNotice[]): Map<string | null, ListedNotice> {
  return new Map(list.map((notice) => [notice.title, notice]));
}

function body(content: string): string {
  return `${RECALLED}\n\n${content}`;
}

function withBus(work: (bus: TempBus, feed: string) => void | Promise<void>): () => Promise<void> {
  return async () => {
    const bus = tempBus();
    try {
      await work(bus, defaultFeed(bus));
    } finally {
      bus.cleanup();
    }
  };
}

const REPO = '/repos/shop';

function agentEnv(bus: TempBus, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { ...bus.env, AGENT_BUS_NAME: 'shop/claude', AGENT_BUS_REPO: REPO, ...extra };
}

type HookCommand = 'hook-session-start' | 'hook-user-prompt' | 'hook-pre-tool';

function hook(command: HookCommand, env: NodeJS.ProcessEnv, session: string): CliResult {
  const result = runCli([command, '--client', 'claude'], { env, input: JSON.stringify({ session_id: session }) });
  assert.equal(result.code, 0, `${command}: ${result.stderr}`);
  return result;
}

/** What the model is given: the plain text, or the additionalContext of pre-tool's JSON answer. */
function contextOf(command: HookCommand, stdout: string): string {
  if (command !== 'hook-pre-tool' || stdout === '') return stdout;
  const parsed = JSON.parse(stdout) as { hookSpecificOutput?: { hookEventName?: string; additionalContext?: string } };
  assert.equal(parsed.hookSpecificOutput?.hookEventName, 'PreToolUse');
  return parsed.hookSpecificOutput?.additionalContext ?? '';
}

/** A hook that must warn about nothing; the text the model is given. */
function quietHook(command: HookCommand, env: NodeJS.ProcessEnv, session: string): string {
  const result = hook(command, env, session);
  assert.equal(result.stderr, '', `${command} warns about nothing`);
  return contextOf(command, result.stdout);
}

/** The line a hook shows for a brain notice. */
function shownLine(notice: ListedNotice): string {
  return `- [${notice.severity.toUpperCase()}] #${notice.channel} · "${notice.title}" · from brain-adapter · id ${notice.notice_id}: ${RECALLED}`;
}

// ---------------------------------------------------------------------------
// The file source: front matter, defaults, skipped files
// ---------------------------------------------------------------------------

test(
  'front matter sets title, priority, severity and ttl; the defaults are the file stem, 5, info and 3600',
  withBus((bus, feed) => {
    writeFeed(feed, {
      'hot-arcs.md': md({ id: 'hot-arcs-2026-04-10', title: 'Active Hot Arcs', priority: 10, ttl: 120, severity: 'alert' }, '\n## Currently Active\n\nBrain MVP is shipping\n'),
      'bare.md': md({ owner: 'me' }, 'only an unknown key in the front matter\n'),
      'plain.md': md(null, 'no front matter at all\n\nsecond paragraph\n'),
      'empty-front.md': '---\n---\nan empty front matter\n',
      'quoted.md': md({ title: '"Ops: on call"', priority: '"7"', severity: 'CRITICAL', ttl: "'600'" }, 'real YAML: quoted values with a colon\n'),
      'odd.md': md({ priority: 'high', ttl: 'soon', severity: 'loud' }, 'values that are not numbers or severities\n'),
      'extreme.md': md({ priority: 5000, ttl: 99_999_999 }, 'out of range values are clamped\n'),
      'stem-titled.md': md({ id: 'given-id' }, 'an id but no title: titled by the file stem\n'),
      'notes.txt': 'not markdown: ignored\n',
    });
    mkdirSync(join(feed, 'sub'));
    writeFileSync(join(feed, 'sub', 'nested.md'), md({ title: 'Nested' }, 'not read: the folder is not walked\n'));

    const result = refreshed(bus);
    assert.equal(result.channel, 'brain');
    assert.equal(result.error, null);
    assert.equal(result.entries, 8);
    assert.equal(result.added.length, 8);
    assert.deepEqual([result.kept, result.removed, result.cutByCap], [0, 0, 0]);
    assert.match(result.contentHash ?? '', /^[0-9a-f]{16}$/);
    assert.deepEqual(result.warnings, [
      'odd.md: priority "high" is not usable (5 used)',
      'odd.md: ttl "soon" is not usable (3600 seconds used)',
      'odd.md: severity "loud" is not usable (info used)',
    ], 'values that cannot be used are said, not silently replaced');

    const stored = allNotices(bus);
    assert.equal(stored.length, 8);
    assert.deepEqual(new Set(stored.map((notice) => notice.notice_id)), new Set(result.added), 'refresh reports the ids it published');
    const titles = byTitle(stored);
    assert.deepEqual([...titles.keys()].sort(), ['Active Hot Arcs', 'Ops: on call', 'bare', 'empty-front', 'extreme', 'odd', 'plain', 'stem-titled']);
    for (const notice of stored) {
      assert.equal(notice.channel, 'brain');
      assert.equal(notice.source, 'brain-adapter');
      assert.ok(notice.message.startsWith(`${RECALLED}\n\n`), 'framed as recalled state');
    }

    const hot = titles.get('Active Hot Arcs');
    assert.deepEqual([hot?.priority, hot?.severity, hot && ttlOf(hot)], [10, 'alert', 120]);
    assert.equal(hot?.message, body('## Currently Active\n\nBrain MVP is shipping'), 'the body after the front matter, trimmed');

    for (const stem of ['bare', 'empty-front', 'plain']) {
      const notice = titles.get(stem);
      assert.deepEqual([notice?.priority, notice?.severity, notice && ttlOf(notice)], [5, 'info', 3600], `${stem}: the defaults`);
    }
    assert.equal(titles.get('plain')?.message, body('no front matter at all\n\nsecond paragraph'), 'no front matter: the whole file is the body');
    assert.equal(titles.get('empty-front')?.message, body('an empty front matter'));

    const quoted = titles.get('Ops: on call');
    assert.deepEqual([quoted?.priority, quoted?.severity, quoted && ttlOf(quoted)], [7, 'critical', 600], 'quoted numbers and an upper-case severity');
    const odd = titles.get('odd');
    assert.deepEqual([odd?.priority, odd?.severity, odd && ttlOf(odd)], [5, 'info', 3600], 'unreadable values fall back to the defaults');
    const extreme = titles.get('extreme');
    assert.deepEqual([extreme?.priority, extreme && ttlOf(extreme)], [1000, 30 * 86_400], 'priority at most 1000, ttl at most 30 days');
  }),
);

test(
  'a broken YAML file and front matter that is not a mapping are skipped with a warning; the rest load; a blank body is skipped',
  withBus((bus, feed) => {
    writeFeed(feed, {
      'a-good.md': md({ title: 'Good', priority: 3 }, 'loads\n'),
      'broken.md': '---\ntitle: [unclosed\npriority: : :\n---\nnever shown\n',
      'list.md': '---\n- one\n- two\n---\nnever shown either\n',
      'scalar.md': '---\njust a sentence\n---\nnor this\n',
      'blank.md': md({ title: 'Blank' }, '   \n\n\t\n'),
      'only-front.md': '---\ntitle: Nothing After\n---\n',
      'unclosed.md': '---\ntitle: Never Closed\nbody text\n',
      'z-good.md': md({ title: 'Also Good' }, 'loads too\n'),
    });
    const result = refreshed(bus);
    assert.equal(result.entries, 2);
    assert.equal(result.warnings.length, 4, JSON.stringify(result.warnings));
    assert.match(result.warnings[0] ?? '', /^skipped broken\.md: \S.*[^:]$/);
    assert.equal(result.warnings[1], 'skipped list.md: its front matter is not a mapping');
    assert.equal(result.warnings[2], 'skipped scalar.md: its front matter is not a mapping');
    assert.equal(result.warnings[3], 'skipped unclosed.md: its front matter has no closing ---');
    assert.ok(!result.warnings.some((warning) => /blank|only-front/.test(warning)), 'a blank body is skipped without a warning');
    assert.deepEqual(
      notices(bus)
        .map((notice) => notice.title)
        .sort(),
      ['Also Good', 'Good'],
    );
    // The warnings are kept for brain status.
    const seen = status(bus);
    assert.equal(seen.entry_count, 2);
    for (const warning of result.warnings) assert.ok(seen.warnings.includes(warning), `status keeps: ${warning}`);
    // And printed by the plain refresh.
    const plain = runCli(['brain', 'refresh'], { env: bus.env });
    assert.equal(plain.code, 0, plain.stderr);
    assert.match(plain.stdout, /^'brain' now holds 2 entries: 2 unchanged, 0 published, 0 removed$/m);
    assert.match(plain.stdout, /^warning: skipped list\.md: its front matter is not a mapping$/m);
  }),
);

test(
  'CRLF files: the front matter is read and the body keeps its lines',
  withBus((bus, feed) => {
    writeFeed(feed, { 'windows.md': '---\r\ntitle: Windows\r\npriority: 7\r\nseverity: alert\r\n---\r\nline one\r\nline two\r\n' });
    const result = refreshed(bus);
    assert.equal(result.entries, 1);
    const [notice] = notices(bus);
    assert.deepEqual([notice?.title, notice?.priority, notice?.severity], ['Windows', 7, 'alert']);
    assert.deepEqual(notice?.message.split(/\r?\n/), [RECALLED, '', 'line one', 'line two']);
  }),
);

test(
  'CRLF files: the stored body has LF line ends, like the same file saved with LF',
  withBus((bus, feed) => {
    writeFeed(feed, { 'windows.md': '---\r\ntitle: Windows\r\n---\r\nline one\r\nline two\r\n' });
    refreshed(bus);
    const [notice] = notices(bus);
    assert.equal(notice?.message, body('line one\nline two'), 'no carriage returns reach the model');
  }),
);

test(
  'id defaults to the file stem: two files with the same title and no id are two entries',
  withBus((bus, feed) => {
    writeFeed(feed, {
      'monday.md': md({ title: 'Daily Notes' }, 'monday\n'),
      'tuesday.md': md({ title: 'Daily Notes' }, 'tuesday\n'),
    });
    const result = refreshed(bus);
    assert.equal(result.entries, 2, JSON.stringify(result));
    assert.deepEqual(
      notices(bus)
        .map((notice) => notice.message)
        .sort(),
      [body('monday'), body('tuesday')],
    );
  }),
);

test(
  'an explicit id shared by two files: the first file by name wins, whatever its priority',
  withBus((bus, feed) => {
    writeFeed(feed, {
      'a.md': md({ id: 'same', title: 'Low', priority: 1 }, 'low\n'),
      'b.md': md({ id: 'same', title: 'High', priority: 9 }, 'high\n'),
      'c.md': md({ id: 'other', title: 'Other' }, 'other\n'),
    });
    const result = refreshed(bus);
    assert.equal(result.entries, 2);
    assert.deepEqual(
      notices(bus)
        .map((notice) => notice.title)
        .sort(),
      ['Low', 'Other'],
      'files are read in name order and the first of a duplicate id wins, before ordering',
    );
  }),
);

// ---------------------------------------------------------------------------
// Order, the cap, the trim settings, the channel
// ---------------------------------------------------------------------------

const PRIORITIES = {
  'a.md': md({ title: 'P1', priority: 1 }, 'one\n'),
  'b.md': md({ title: 'P9', priority: 9 }, 'nine\n'),
  'c.md': md({ title: 'P5c', priority: 5 }, 'five c\n'),
  'd.md': md({ title: 'P5d', priority: 5 }, 'five d\n'),
};

test(
  'priority decides the order (ties in file name order): publish order, creation order and what a session sees first',
  withBus((bus, feed) => {
    writeFeed(feed, PRIORITIES);
    const result = refreshed(bus);
    const stored = notices(bus);
    const titleOf = new Map(stored.map((notice) => [notice.notice_id, notice.title]));
    assert.deepEqual(
      result.added.map((id) => titleOf.get(id)),
      ['P9', 'P5c', 'P5d', 'P1'],
      'published in priority order',
    );
    assert.deepEqual(
      [...stored].sort((a, b) => micros(a.created_at) - micros(b.created_at)).map((notice) => notice.title),
      ['P9', 'P5c', 'P5d', 'P1'],
      'created in that order',
    );
    const shown = quietHook('hook-session-start', agentEnv(bus, { AGENT_BUS_CHANNELS: 'brain', BRAIN_ENABLED: '0' }), 'sess-order');
    const positions = ['P9', 'P5c', 'P5d', 'P1'].map((title) => shown.indexOf(`"${title}"`));
    assert.ok(positions.every((position) => position >= 0), shown);
    assert.deepEqual([...positions].sort((a, b) => a - b), positions, 'shown in priority order');
  }),
);

test(
  'more entries than AGENT_BUS_CHANNEL_MAX_NOTICES: the highest priorities are kept, the cut is a warning in refresh and status',
  withBus((bus, feed) => {
    writeFeed(feed, PRIORITIES);
    const capped = { AGENT_BUS_CHANNEL_MAX_NOTICES: '2' };
    const result = refreshed(bus, capped);
    assert.equal(result.entries, 2);
    assert.equal(result.cutByCap, 2);
    assert.deepEqual(result.warnings, ['2 entries cut by the channel cap (AGENT_BUS_CHANNEL_MAX_NOTICES=2)']);
    assert.deepEqual(
      notices(bus)
        .map((notice) => notice.title)
        .sort(),
      ['P5c', 'P9'],
    );
    const seen = status(bus, capped);
    assert.equal(seen.entry_count, 2);
    assert.equal(seen.live_notices, 2);
    assert.deepEqual(
      seen.warnings.filter((warning) => warning.includes('cut by the channel cap')),
      ['2 entries were cut by the channel cap (AGENT_BUS_CHANNEL_MAX_NOTICES)'],
      'said once',
    );
    // With room for all of them the warning goes.
    const roomy = refreshed(bus, { AGENT_BUS_CHANNEL_MAX_NOTICES: '3' });
    assert.deepEqual([roomy.entries, roomy.cutByCap, roomy.kept, roomy.added.length], [3, 1, 2, 1]);
    const all = refreshed(bus);
    assert.deepEqual([all.entries, all.cutByCap, all.warnings], [4, 0, []]);
    assert.ok(!status(bus).warnings.some((warning) => warning.includes('cut by the channel cap')));
  }),
);

function arcsFile(rows: number): string {
  const table = ['| Arc | Heat | Status |', '|-----|------|--------|', ...Array.from({ length: rows }, (_, index) => `| arc-${index + 1} | ${(rows - index) / 2} | s |`)];
  return md({ title: 'Active Hot Arcs', priority: 10 }, `## Currently Active\n\n${table.join('\n')}\n\nafter the table\n`);
}

function arcsBody(kept: number, total: number): string {
  const rows = Array.from({ length: kept }, (_, index) => `| arc-${index + 1} | ${(total - index) / 2} | s |`);
  const note = kept < total ? [`| ... | ... | *(${total - kept} more arcs trimmed)* |`] : [];
  return body(['## Currently Active', '', '| Arc | Heat | Status |', '|-----|------|--------|', ...rows, ...note, '', 'after the table'].join('\n'));
}

test(
  'BRAIN_HOT_ARCS_TOP_N trims the hot-arcs table in the stored body: 10 by default, 0 keeps every row',
  withBus((bus, feed) => {
    writeFeed(feed, { 'arcs.md': arcsFile(12) });
    refreshed(bus);
    assert.equal(notices(bus)[0]?.message, arcsBody(10, 12), 'default 10');
    const three = refreshed(bus, { BRAIN_HOT_ARCS_TOP_N: '3' });
    assert.deepEqual([three.kept, three.added.length, three.removed], [0, 1, 1], 'a different body is a new notice');
    assert.equal(notices(bus)[0]?.message, arcsBody(3, 12));
    refreshed(bus, { BRAIN_HOT_ARCS_TOP_N: '0' });
    assert.equal(notices(bus)[0]?.message, arcsBody(12, 12), '0 disables the trim');
    refreshed(bus, { BRAIN_HOT_ARCS_TOP_N: '12' });
    assert.equal(notices(bus)[0]?.message, arcsBody(12, 12), 'a table at N rows is left alone');
    assert.equal(notices(bus).length, 1);
  }),
);

test(
  'BRAIN_PAYLOAD_MAX_BYTES caps each stored body in characters: 1536 by default, 0 disables it',
  withBus((bus, feed) => {
    writeFeed(feed, { 'long.md': md({ title: 'Long' }, `${'é'.repeat(2000)}\n`), 'short.md': md({ title: 'Short' }, `${'😀'.repeat(40)}\n`) });
    refreshed(bus);
    const first = byTitle(notices(bus));
    assert.equal(first.get('Long')?.message, body(`${'é'.repeat(1536)}\n…[+464 characters trimmed]`), 'default 1536 characters (3072 bytes of é)');
    assert.equal(first.get('Short')?.message, body('😀'.repeat(40)), 'under the cap: unchanged');
    refreshed(bus, { BRAIN_PAYLOAD_MAX_BYTES: '30' });
    const small = byTitle(notices(bus));
    assert.equal(small.get('Long')?.message, body(`${'é'.repeat(30)}\n…[+1970 characters trimmed]`));
    assert.equal(small.get('Short')?.message, body(`${'😀'.repeat(30)}\n…[+10 characters trimmed]`), 'emoji counted as one character each');
    refreshed(bus, { BRAIN_PAYLOAD_MAX_BYTES: '40' });
    assert.equal(byTitle(notices(bus)).get('Short')?.message, body('😀'.repeat(40)), 'exactly at the cap: unchanged');
    refreshed(bus, { BRAIN_PAYLOAD_MAX_BYTES: '0' });
    assert.equal(byTitle(notices(bus)).get('Long')?.message, body('é'.repeat(2000)), '0 disables the cap');
    // With the cap off, a body past what a notice holds (16 KiB) is still cut, with a warning.
    writeFeed(feed, { 'huge.md': md({ id: 'huge', title: 'Huge' }, `${'x'.repeat(20_000)}\n`) });
    const huge = refreshed(bus, { BRAIN_PAYLOAD_MAX_BYTES: '0' });
    assert.equal(huge.entries, 3);
    assert.deepEqual(huge.warnings, ['entry huge is over 16384 bytes even after BRAIN_PAYLOAD_MAX_BYTES; cut']);
    const cut = byTitle(notices(bus)).get('Huge')?.message ?? '';
    assert.ok(cut.startsWith(body('xxxx')) && Buffer.byteLength(cut) <= 16_384 && Buffer.byteLength(cut) > 16_000, `${Buffer.byteLength(cut)} bytes`);
    assert.equal(byTitle(notices(bus)).get('Long')?.message, body('é'.repeat(2000)), 'the others are whole');
  }),
);

test(
  'BRAIN_CHANNEL: the brain is published on that channel, and status reads that channel',
  withBus((bus, feed) => {
    writeFeed(feed, { 'arcs.md': md({ title: 'Arcs' }, 'hot\n') });
    const custom = { BRAIN_CHANNEL: 'arcs' };
    const result = refreshed(bus, custom);
    assert.equal(result.channel, 'arcs');
    assert.deepEqual(
      allNotices(bus).map((notice) => [notice.channel, notice.title]),
      [['arcs', 'Arcs']],
    );
    const seen = status(bus, custom);
    assert.deepEqual([seen.channel, seen.entry_count, seen.live_notices, seen.content_hash], ['arcs', 1, 1, result.contentHash]);
    const other = status(bus);
    assert.deepEqual([other.channel, other.entry_count, other.live_notices, other.last_fetch_at], ['brain', 0, 0, null], 'the default channel was never read');
    assert.ok(other.warnings.includes('the source has not been read yet: run brain refresh'));
    // A session subscribed to 'brain' does not hear a brain published on 'arcs'; status says why.
    const env = agentEnv(bus, { ...custom, AGENT_BUS_CHANNELS: 'brain' });
    assert.ok(!quietHook('hook-session-start', env, 'sess-1').includes('brain-adapter'));
    assert.ok(status(bus, { ...custom, AGENT_BUS_CHANNELS: 'brain' }).warnings.includes("BRAIN_CHANNEL 'arcs' is not in this session's subscriptions (brain, from the launch environment): it will not see the brain"));
    assert.ok(quietHook('hook-session-start', agentEnv(bus, { ...custom, AGENT_BUS_CHANNELS: 'arcs' }), 'sess-2').includes('#arcs · "Arcs" · from brain-adapter'));
  }),
);

// ---------------------------------------------------------------------------
// Reconciling: unchanged, changed, removed, expired, unavailable, empty
// ---------------------------------------------------------------------------

test(
  'an unchanged feed keeps its notice ids; a changed file is republished, a removed file removed, the others kept',
  withBus((bus, feed) => {
    writeFeed(feed, { 'a.md': md({ title: 'A' }, 'alpha\n'), 'b.md': md({ title: 'B' }, 'beta\n'), 'c.md': md({ title: 'C' }, 'gamma\n') });
    const first = refreshed(bus);
    const ids = new Map(notices(bus).map((notice) => [notice.title, notice.notice_id]));
    const again = refreshed(bus);
    assert.deepEqual([again.entries, again.kept, again.added, again.removed], [3, 3, [], 0]);
    assert.equal(again.contentHash, first.contentHash);
    assert.deepEqual(new Map(notices(bus).map((notice) => [notice.title, notice.notice_id])), ids, 'same ids');

    writeFeed(feed, { 'b.md': md({ title: 'B' }, 'beta, revised\n') });
    const changed = refreshed(bus);
    assert.deepEqual([changed.entries, changed.kept, changed.added.length, changed.removed], [3, 2, 1, 1]);
    assert.notEqual(changed.contentHash, first.contentHash);
    const afterChange = byTitle(notices(bus));
    assert.equal(afterChange.get('A')?.notice_id, ids.get('A'));
    assert.equal(afterChange.get('C')?.notice_id, ids.get('C'));
    assert.equal(afterChange.get('B')?.notice_id, changed.added[0]);
    assert.notEqual(afterChange.get('B')?.notice_id, ids.get('B'));
    assert.equal(afterChange.get('B')?.message, body('beta, revised'));

    rmSync(join(feed, 'a.md'));
    const removed = refreshed(bus);
    assert.deepEqual([removed.entries, removed.kept, removed.added, removed.removed], [2, 2, [], 1]);
    assert.deepEqual(
      notices(bus)
        .map((notice) => notice.title)
        .sort(),
      ['B', 'C'],
    );
    assert.equal(status(bus).entry_count, 2);
  }),
);

test(
  'two entries that make the same notice (same title, severity and body, different ids): an unchanged feed still keeps its notice ids',
  withBus((bus, feed) => {
    writeFeed(feed, {
      'a.md': md({ id: 'copy-a', title: 'Same' }, 'identical text\n'),
      'b.md': md({ id: 'copy-b', title: 'Same' }, 'identical text\n'),
      'c.md': md({ title: 'Other' }, 'different\n'),
    });
    const first = refreshed(bus);
    const ids = notices(bus)
      .map((notice) => notice.notice_id)
      .sort();
    for (let round = 1; round <= 2; round++) {
      const again = refreshed(bus);
      assert.deepEqual([again.added, again.removed, again.contentHash], [[], 0, first.contentHash], `round ${round}: nothing republished or removed (${JSON.stringify(again)})`);
      assert.deepEqual(
        notices(bus)
          .map((notice) => notice.notice_id)
          .sort(),
        ids,
        `round ${round}: the same ids`,
      );
    }
  }),
);

test(
  'a brain notice that was cleared or has expired is published anew at the next refresh',
  withBus(async (bus, feed) => {
    // Three seconds: long enough that a slow machine's next command still finds it live.
    writeFeed(feed, { 'short.md': md({ title: 'Short', ttl: 3 }, 'brief\n'), 'long.md': md({ title: 'Long' }, 'lasting\n') });
    const first = refreshed(bus);
    const cleared = runCli(['channel', 'clear', '--channel', 'brain', '--json'], { env: bus.env });
    assert.equal(cleared.code, 0, cleared.stderr);
    assert.deepEqual(notices(bus), []);
    const restored = refreshed(bus);
    assert.deepEqual([restored.kept, restored.added.length, restored.removed], [0, 2, 0], 'content unchanged, but the channel lost it');
    assert.equal(restored.contentHash, first.contentHash);
    const longId = byTitle(notices(bus)).get('Long')?.notice_id;
    const shortExpires = Date.parse(byTitle(notices(bus)).get('Short')?.expires_at ?? '');
    assert.ok(!Number.isNaN(shortExpires), 'the short-lived entry is live, with its expiry');

    await waitUntil(() => Date.now() > shortExpires + 1, 'the short-lived entry to expire', 10_000);
    assert.deepEqual(
      notices(bus).map((notice) => notice.title),
      ['Long'],
      'the short-lived entry has expired',
    );
    const renewed = refreshed(bus);
    assert.deepEqual([renewed.kept, renewed.added.length, renewed.removed], [1, 1, 1], 'the expired one replaced, the live one kept');
    const now = byTitle(notices(bus));
    assert.equal(now.get('Long')?.notice_id, longId);
    assert.equal(now.get('Short')?.notice_id, renewed.added[0]);
  }),
);

test(
  'a missing folder is a source that is down: refresh exits 1, the channel keeps its notices, status says unreachable',
  withBus((bus, feed) => {
    writeFeed(feed, { 'a.md': md({ title: 'A' }, 'alpha\n'), 'b.md': md({ title: 'B' }, 'beta\n') });
    const good = refreshed(bus);
    const before = notices(bus);
    const okStatus = status(bus);
    rmSync(feed, { recursive: true });

    const { code, result } = refresh(bus);
    assert.equal(code, 1);
    assert.equal(result.ok, false);
    assert.match(result.error ?? '', /^cannot read the brain folder .*brain-feed: ENOENT$/);
    assert.deepEqual([result.added, result.removed, result.contentHash], [[], 0, good.contentHash]);
    assert.deepEqual(notices(bus), before, 'the channel is untouched');

    const down = status(bus, { BRAIN_ENABLED: '1' });
    assert.equal(down.last_error, result.error);
    assert.ok(down.last_fetch_at !== null && micros(down.last_fetch_at) > micros(okStatus.last_fetch_at ?? ''), 'the failed fetch is the last fetch');
    assert.equal(down.last_ok_at, okStatus.last_ok_at, 'the last good fetch is remembered');
    assert.deepEqual([down.entry_count, down.live_notices, down.content_hash], [2, 2, good.contentHash]);
    assert.ok(
      down.warnings.includes(`the source is unreachable (${result.error}); the channel keeps its last good content`),
      JSON.stringify(down.warnings),
    );
    const plain = runCli(['brain', 'refresh'], { env: bus.env });
    assert.equal(plain.code, 1);
    assert.equal(plain.stdout, '');
    assert.match(plain.stderr, /^agent-bus: brain refresh: the source is unavailable \(cannot read the brain folder .*: ENOENT\); 'brain' keeps its last good content\n$/);
    const text = runCli(['brain', 'status'], { env: { ...bus.env, BRAIN_ENABLED: '1' } });
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /^last fetch just now \(failed: cannot read the brain folder .*: ENOENT\)$/m);
    assert.match(text.stdout, /^warning {4}the source is unreachable \(/m);

    // Back again: the error clears and nothing is republished.
    writeFeed(feed, { 'a.md': md({ title: 'A' }, 'alpha\n'), 'b.md': md({ title: 'B' }, 'beta\n') });
    const back = refreshed(bus);
    assert.deepEqual([back.kept, back.added, back.removed], [2, [], 0]);
    const up = status(bus);
    assert.equal(up.last_error, null);
    assert.ok(!up.warnings.some((warning) => warning.includes('unreachable')));
  }),
);

test(
  'a missing folder before any good read: refresh exits 1 and status has the error and no content',
  withBus((bus) => {
    const { code, result } = refresh(bus);
    assert.equal(code, 1);
    assert.deepEqual([result.ok, result.entries, result.contentHash], [false, 0, null]);
    const seen = status(bus);
    assert.match(seen.last_error ?? '', /ENOENT/);
    assert.deepEqual([seen.last_ok_at, seen.entry_count, seen.content_hash], [null, 0, null]);
    assert.ok(seen.warnings.some((warning) => warning.startsWith('the source is unreachable (')));
    assert.ok(!seen.warnings.includes('the source has not been read yet: run brain refresh'), 'it was tried');
  }),
);

test(
  'an empty folder is an empty feed: the channel is cleared',
  withBus((bus, feed) => {
    writeFeed(feed, { 'a.md': md({ title: 'A' }, 'alpha\n'), 'b.md': md({ title: 'B' }, 'beta\n') });
    refreshed(bus);
    const own = runCli(['channel', 'publish', 'ops', 'unrelated'], { env: bus.env });
    assert.equal(own.code, 0, own.stderr);
    rmSync(feed, { recursive: true });
    mkdirSync(feed);
    writeFileSync(join(feed, 'readme.txt'), 'not markdown\n');
    const empty = refreshed(bus);
    assert.deepEqual([empty.entries, empty.kept, empty.added, empty.removed, empty.contentHash, empty.warnings], [0, 0, [], 2, null, []]);
    assert.deepEqual(notices(bus), []);
    assert.equal(notices(bus, 'ops').length, 1, 'other channels are untouched');
    const seen = status(bus);
    assert.deepEqual([seen.entry_count, seen.live_notices, seen.content_hash, seen.last_error], [0, 0, null, null]);
  }),
);

test(
  'BRAIN_SOURCE_PATH elsewhere (also with ~) is read instead of the bus folder, and status names it',
  withBus((bus, feed) => {
    writeFeed(feed, { 'default.md': md({ title: 'Default Folder' }, 'from the bus folder\n') });
    const elsewhere = join(bus.dir, 'vault', 'feed');
    writeFeed(elsewhere, { 'vault.md': md({ title: 'Vault' }, 'from the vault\n') });
    const custom = { BRAIN_SOURCE_PATH: elsewhere };
    refreshed(bus, custom);
    assert.deepEqual(
      notices(bus).map((notice) => notice.title),
      ['Vault'],
    );
    const seen = status(bus, custom);
    assert.deepEqual([seen.source_type, seen.source_location, seen.enabled], ['file', elsewhere, true]);

    const home = bus.env.HOME as string;
    writeFeed(join(home, 'notes'), { 'home.md': md({ title: 'Home' }, 'from ~/notes\n') });
    refreshed(bus, { BRAIN_SOURCE_PATH: '~/notes' });
    assert.deepEqual(
      notices(bus).map((notice) => notice.title),
      ['Home'],
    );
    assert.equal(status(bus, { BRAIN_SOURCE_PATH: '~/notes' }).source_location, join(home, 'notes'));

    refreshed(bus);
    assert.deepEqual(
      notices(bus).map((notice) => notice.title),
      ['Default Folder'],
      'without it: the bus folder brain-feed',
    );
    assert.equal(status(bus).source_location, feed);
  }),
);

test(
  "status: source, counts, hash, cadence and fetch times; BRAIN_URL wins over the folder; settings from the bus folder's .env",
  withBus((bus, feed) => {
    const fresh = status(bus);
    assert.deepEqual(Object.keys(fresh).sort(), STATUS_KEYS);
    assert.deepEqual(
      { ...fresh, warnings: undefined },
      {
        enabled: false,
        enabled_because: 'no BRAIN_URL and no feed folder with content',
        source_type: 'file',
        source_location: feed,
        channel: 'brain',
        entry_count: 0,
        live_notices: 0,
        content_hash: null,
        refresh_every_tool_calls: 20,
        last_fetch_at: null,
        last_ok_at: null,
        last_error: null,
        subscriptions: [],
        subscriptions_layer: 'none',
        subscriptions_from: 'nothing sets them',
        warnings: undefined,
      },
    );
    assert.deepEqual(fresh.warnings, [
      'the brain is off (no BRAIN_URL and no feed folder with content); set BRAIN_ENABLED=1 to turn it on',
      'the source has not been read yet: run brain refresh',
    ]);

    writeFeed(feed, { 'a.md': md({ title: 'A' }, 'alpha\n') });
    const result = refreshed(bus);
    const seen = status(bus, { BRAIN_REFRESH_TOOL_CALLS: '5' });
    assert.deepEqual([seen.enabled, seen.enabled_because], [true, `${feed} has markdown files`]);
    assert.deepEqual([seen.entry_count, seen.live_notices, seen.content_hash, seen.refresh_every_tool_calls], [1, 1, result.contentHash, 5]);
    assert.ok(seen.last_fetch_at !== null && seen.last_fetch_at === seen.last_ok_at);
    assert.deepEqual(seen.warnings, []);
    const text = runCli(['brain', 'status'], { env: bus.env });
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, new RegExp(`^source {5}file ${feed.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'));
    assert.match(text.stdout, /^channel {4}brain: 1 entry, 1 live notice$/m);
    assert.match(text.stdout, new RegExp(`^hash {7}${result.contentHash}$`, 'm'));
    assert.match(text.stdout, /^refresh {4}every 20 tool calls, and when a session starts$/m);

    // BRAIN_URL wins over the folder (no fetch is made by status).
    const http = status(bus, { BRAIN_URL: 'http://127.0.0.1:9/', BRAIN_SOURCE_TYPE: 'file' });
    assert.deepEqual([http.source_type, http.source_location, http.enabled_because], ['http', 'http://127.0.0.1:9/feed', 'BRAIN_URL is set']);

    // The bus folder's .env: read, and the process environment wins.
    writeFileSync(join(bus.folder, '.env'), 'BRAIN_REFRESH_TOOL_CALLS=7\nBRAIN_ENABLED=0\n');
    const fromFile = status(bus);
    assert.deepEqual([fromFile.refresh_every_tool_calls, fromFile.enabled, fromFile.enabled_because], [7, false, 'BRAIN_ENABLED=0']);
    const overridden = status(bus, { BRAIN_REFRESH_TOOL_CALLS: '3', BRAIN_ENABLED: 'yes' });
    assert.deepEqual([overridden.refresh_every_tool_calls, overridden.enabled], [3, true]);
  }),
);

test(
  "status warns when the session's subscriptions (AGENT_BUS_CHANNELS, else AGENTIHOOKS_BASE_CHANNELS) lack the brain channel",
  withBus((bus, feed) => {
    writeFeed(feed, { 'a.md': md({ title: 'A' }, 'alpha\n') });
    refreshed(bus);
    const warning = "BRAIN_CHANNEL 'brain' is not in this session's subscriptions (ops, from the launch environment): it will not see the brain";
    const warned = (extra: NodeJS.ProcessEnv) => status(bus, extra).warnings.some((said) => said.startsWith("BRAIN_CHANNEL 'brain' is not in this session's subscriptions ("));
    assert.ok(status(bus, { AGENT_BUS_CHANNELS: 'ops' }).warnings.includes(warning));
    assert.ok(status(bus, { AGENT_BUS_CHANNELS: '' }).warnings.includes("BRAIN_CHANNEL 'brain' is not in this session's subscriptions (global notices only, from the launch environment): it will not see the brain"));
    assert.equal(warned({ AGENT_BUS_CHANNELS: 'ops' }), true);
    assert.equal(warned({ AGENT_BUS_CHANNELS: '' }), true, 'global only');
    assert.equal(warned({ AGENTIHOOKS_BASE_CHANNELS: 'ops,deploy' }), true);
    assert.equal(warned({ AGENT_BUS_CHANNELS: 'ops, brain' }), false);
    assert.equal(warned({ AGENT_BUS_CHANNELS: '*' }), false);
    assert.equal(warned({ AGENTIHOOKS_BASE_CHANNELS: 'brain,amygdala' }), false);
    assert.equal(warned({ AGENT_BUS_CHANNELS: 'brain', AGENTIHOOKS_BASE_CHANNELS: 'ops' }), false, 'AGENT_BUS_CHANNELS first');
    assert.equal(warned({}), false, 'no subscriptions given: nothing to compare');
    // The repo's default, as init's wiring sets it, counts too; a launch value wins over it.
    assert.equal(warned({ AGENT_BUS_DEFAULT_CHANNELS: 'ops' }), true);
    assert.equal(warned({ AGENT_BUS_DEFAULT_CHANNELS: 'ops', AGENT_BUS_CHANNELS: 'brain' }), false);
    assert.equal(warned({ AGENT_BUS_DEFAULT_CHANNELS: 'brain', AGENT_BUS_CHANNELS: 'ops' }), true);
    // The user's default in the bus folder's .env, below every other layer.
    writeFileSync(join(bus.folder, '.env'), 'AGENT_BUS_DEFAULT_CHANNELS=ops\n');
    assert.equal(warned({}), true, "the user's default from .env");
    assert.equal(warned({ AGENT_BUS_DEFAULT_CHANNELS: 'brain' }), false, "the repo's default over the user's");
    const text = runCli(['brain', 'status'], { env: { ...bus.env, AGENT_BUS_CHANNELS: 'ops' } });
    assert.ok(text.stdout.includes(`warning    ${warning}`), text.stdout);
  }),
);

// ---------------------------------------------------------------------------
// The hooks
// ---------------------------------------------------------------------------

test(
  "hook-session-start publishes the brain at once: a subscribed session has it on its first turn",
  withBus((bus, feed) => {
    writeFeed(feed, { 'arcs.md': md({ title: 'Active Hot Arcs', priority: 10 }, '## Currently Active\n\nBrain MVP: block-1\n') });
    const before = status(bus);
    assert.deepEqual([before.enabled, before.last_fetch_at, before.live_notices], [true, null, 0], 'on (the folder has content) and never read');

    const out = quietHook('hook-session-start', agentEnv(bus, { AGENT_BUS_CHANNELS: 'brain' }), 's1');
    const [notice, ...more] = notices(bus);
    assert.ok(notice, 'the hook published the entry');
    assert.equal(more.length, 0);
    assert.ok(out.includes(shownLine(notice)), out);
    assert.ok(out.includes('\n  ## Currently Active\n'), out);
    assert.ok(out.includes('\n  Brain MVP: block-1'), out);
    const after = status(bus);
    assert.ok(after.last_fetch_at !== null, 'the hook read the source');
    assert.deepEqual([after.entry_count, after.live_notices, after.last_error], [1, 1, null]);

    // An info entry is shown once per session; a new session gets it again, with the same notice.
    assert.ok(!quietHook('hook-user-prompt', agentEnv(bus, { AGENT_BUS_CHANNELS: 'brain' }), 's1').includes(notice.notice_id));
    const second = quietHook('hook-session-start', agentEnv(bus, { AGENT_BUS_CHANNELS: 'brain' }), 's2');
    assert.ok(second.includes(shownLine(notice)), 'unchanged feed: the same notice id');
    assert.equal(notices(bus).length, 1);
  }),
);

test(
  'a session not subscribed to the brain channel never sees a brain entry: at session start, at a prompt or before a tool',
  withBus((bus, feed) => {
    writeFeed(feed, {
      'freeze.md': md({ title: 'Freeze', severity: 'critical' }, 'deploy freeze\n'),
      'arcs.md': md({ title: 'Arcs' }, 'hot arcs\n'),
    });
    // Refresh before every tool call, so the pre-tool hook publishes (and would show) what is new.
    const ops = agentEnv(bus, { AGENT_BUS_CHANNELS: 'ops', BRAIN_REFRESH_TOOL_CALLS: '1' });
    const start = quietHook('hook-session-start', ops, 'sess-ops');
    assert.equal(notices(bus).length, 2, 'the hook published the brain');
    assert.ok(!start.includes('brain-adapter') && !start.includes('#brain'), start);
    const prompt = quietHook('hook-user-prompt', ops, 'sess-ops');
    assert.ok(!prompt.includes('brain-adapter') && !prompt.includes('#brain'), prompt);

    writeFeed(feed, { 'new.md': md({ title: 'Fresh' }, 'just published\n') });
    const tool = quietHook('hook-pre-tool', ops, 'sess-ops');
    assert.equal(notices(bus).length, 3, 'the pre-tool hook refreshed');
    assert.ok(!tool.includes('brain-adapter') && !tool.includes('#brain'), tool);

    const globalOnly = agentEnv(bus, { BRAIN_REFRESH_TOOL_CALLS: '1' });
    for (const command of ['hook-session-start', 'hook-user-prompt', 'hook-pre-tool'] as const) {
      const out = quietHook(command, globalOnly, 'sess-global');
      assert.ok(!out.includes('brain-adapter'), `${command} without subscriptions: ${out}`);
    }

    // The same moments for a subscribed session show them (what the checks above would catch).
    const brain = agentEnv(bus, { AGENT_BUS_CHANNELS: 'ops,brain', BRAIN_REFRESH_TOOL_CALLS: '1' });
    const stored = byTitle(notices(bus));
    const subscribedStart = quietHook('hook-session-start', brain, 'sess-brain');
    for (const title of ['Freeze', 'Arcs', 'Fresh']) assert.ok(subscribedStart.includes(`"${title}" · from brain-adapter`), `${title}: ${subscribedStart}`);
    writeFeed(feed, { 'newer.md': md({ title: 'Newer' }, 'published before this tool call\n') });
    const subscribedTool = quietHook('hook-pre-tool', brain, 'sess-brain');
    assert.ok(subscribedTool.includes(`id ${stored.get('Freeze')?.notice_id}`), 'a critical brain entry before each tool call');
    assert.ok(subscribedTool.includes('"Newer" · from brain-adapter'), 'and what this refresh published anew');
    assert.ok(!subscribedTool.includes('"Arcs"'), 'not the info entries already shown');
  }),
);

test(
  'BRAIN_ENABLED=0 (in the environment or the .env) keeps the hooks from publishing; the environment wins over the .env',
  withBus((bus, feed) => {
    writeFeed(feed, { 'arcs.md': md({ title: 'Arcs', severity: 'critical' }, 'hot arcs\n') });
    const off = agentEnv(bus, { AGENT_BUS_CHANNELS: 'brain', BRAIN_ENABLED: '0', BRAIN_REFRESH_TOOL_CALLS: '1' });
    for (const command of ['hook-session-start', 'hook-user-prompt', 'hook-pre-tool'] as const) {
      assert.ok(!quietHook(command, off, 'sess-off').includes('brain-adapter'), command);
    }
    assert.deepEqual(notices(bus), []);
    assert.equal(status(bus).last_fetch_at, null, 'the source was never read');

    writeFileSync(join(bus.folder, '.env'), 'BRAIN_ENABLED=false\n');
    const viaFile = agentEnv(bus, { AGENT_BUS_CHANNELS: 'brain', BRAIN_REFRESH_TOOL_CALLS: '1' });
    for (const command of ['hook-session-start', 'hook-pre-tool'] as const) quietHook(command, viaFile, 'sess-file');
    assert.deepEqual(notices(bus), [], 'the .env turns it off');
    assert.equal(status(bus).last_fetch_at, null);

    const out = quietHook('hook-session-start', { ...viaFile, BRAIN_ENABLED: '1' }, 'sess-on');
    const [notice] = notices(bus);
    assert.ok(notice, 'the environment turned it back on');
    assert.ok(out.includes(shownLine(notice)), out);
  }),
);

test(
  'BRAIN_SOURCE_PATH from the .env is where the hook reads; an unreadable source at session start warns and keeps the channel',
  withBus((bus) => {
    mkdirSync(bus.folder, { recursive: true });
    const vault = join(bus.dir, 'vault');
    writeFeed(vault, { 'v.md': md({ title: 'From Vault' }, 'vault entry\n') });
    writeFileSync(join(bus.folder, '.env'), `BRAIN_SOURCE_PATH=${vault}\n`);
    const env = agentEnv(bus, { AGENT_BUS_CHANNELS: 'brain' });
    const out = quietHook('hook-session-start', env, 'sess-1');
    assert.ok(out.includes('"From Vault" · from brain-adapter'), out);

    rmSync(vault, { recursive: true });
    const down = hook('hook-session-start', { ...env, BRAIN_ENABLED: '1' }, 'sess-2');
    assert.match(down.stderr, /^agent-bus hook: brain source unavailable, keeping its last content: cannot read the brain folder .*vault: ENOENT$/m);
    assert.ok(down.stdout.includes('"From Vault" · from brain-adapter'), 'the last good content is still delivered');
    assert.equal(notices(bus).length, 1);
    assert.match(status(bus).last_error ?? '', /ENOENT/);
  }),
);

test(
  'sessions starting at the same moment each refresh the brain, and the channel ends up holding each entry once',
  withBus(async (bus, feed) => {
    writeFeed(feed, {
      'a.md': md({ title: 'A', priority: 3 }, 'alpha\n'),
      'b.md': md({ title: 'B', priority: 2 }, 'beta\n'),
      'c.md': md({ title: 'C', priority: 1 }, 'gamma\n'),
    });
    const env = agentEnv(bus, { AGENT_BUS_CHANNELS: 'brain' });
    const runs = await Promise.all(
      Array.from({ length: 6 }, (_, index) => runCliAsync(['hook-session-start', '--client', 'claude'], { env, input: JSON.stringify({ session_id: `sess-${index}` }) })),
    );
    for (const run of runs) {
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stderr, '');
      for (const title of ['A', 'B', 'C']) assert.ok(run.stdout.includes(`"${title}" · from brain-adapter`), `every session sees ${title}: ${run.stdout}`);
    }
    const stored = notices(bus);
    assert.deepEqual(
      stored.map((notice) => notice.title),
      ['A', 'B', 'C'],
      'no duplicates',
    );
    const ids = new Set(stored.map((notice) => notice.notice_id));
    for (const run of runs) {
      const shown = [...run.stdout.matchAll(/ · id ([0-9a-f]{12}): /g)].map((match) => match[1]);
      assert.deepEqual(shown.length, 3);
      for (const id of shown) assert.ok(ids.has(id as string), `shown ${id} is one of the stored notices`);
    }
  }),
);

test(
  'a BRAIN_CHANNEL that is no channel name: one line, exit 1, nothing published',
  withBus((bus, feed) => {
    writeFeed(feed, { 'a.md': md({ title: 'A' }, 'an entry\n') });
    const run = runCli(['brain', 'refresh'], { env: { ...bus.env, BRAIN_CHANNEL: 'bad name' } });
    assert.equal(run.code, 1);
    assert.equal(run.stdout, '');
    assert.match(run.stderr, /^agent-bus: BRAIN_CHANNEL: bad channel 'bad name': [^\n]+\n$/);
    assert.deepEqual(allNotices(bus), []);
  }),
);

test('front matter that draws a YAML warning (an unknown directive) is read in silence: nothing on stderr, the entry kept', withBus((bus, feed) => {
  writeFeed(feed, { 'odd.md': '---\n%SOMEDAY directive\n--- {title: odd one}\n---\nstill an entry\n', 'plain.md': md({ title: 'plain' }, 'a plain entry') });
  const { code, result, stderr } = refresh(bus);
  assert.equal(code, 0, stderr);
  assert.equal(stderr, '', 'no warning printed by the parser');
  assert.equal(result.ok, true);
  assert.deepEqual(notices(bus).map((notice) => notice.title).sort(), ['odd one', 'plain']);
}));
