/**
 * The brain adapter's HTTP source end to end: a real feed server on
 * 127.0.0.1 in this process, the built CLI as subprocesses (always run
 * asynchronously, so the server can answer them), one private bus per test.
 * Covers GET $BRAIN_URL/feed with its token, the feed shape, reconciling into
 * the channel (ids and receipts kept, new / changed / expired entries
 * published again, gone ones removed), an unavailable source against an
 * empty feed, the trims, the refresh cadence of the hooks, status and its
 * warnings, and refreshers running at once.
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { readAudit, runCliAsync, type CliResult, type TempBus, withTempBus } from '../helpers/bus-env.js';
import type { ListedNotice } from '../../src/core/notice-ops.js';
import type { RefreshResult } from '../../src/brain/refresh.js';
import type { BrainStatus } from '../../src/brain/status.js';
import { expireInDatabase } from '../helpers/notices.js';

// ---------------------------------------------------------------------------
// The feed server
// ---------------------------------------------------------------------------

interface FeedItem {
  id?: string;
  title?: string;
  content?: string;
  priority?: number | string;
  ttl?: number;
  severity?: string;
}

type Behaviour =
  /**
   * 200 with this JSON: after `delayMs`, if given; with `together`, held until that many
   * requests wait (or 5 s passed) and then all answered at once.
   */
  | { kind: 'feed'; feed: unknown; delayMs?: number; together?: number }
  /** This status and a short text body. */
  | { kind: 'status'; status: number }
  /** 200 with exactly this body. */
  | { kind: 'raw'; body: string }
  /** Close the connection without an answer. */
  | { kind: 'drop' };

interface SeenRequest {
  method: string;
  path: string;
  authorization: string | undefined;
  accept: string | undefined;
}

interface FeedServer {
  url: string;
  /** What the next requests get; switch it between steps. */
  behaviour: Behaviour;
  requests: SeenRequest[];
  /** Requests for /feed so far. */
  fetches(): number;
  close(): Promise<void>;
}

async function feedServer(initial: Behaviour): Promise<FeedServer> {
  const requests: SeenRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const held: Array<() => void> = [];
  const later = (ms: number, work: () => void): void => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      work();
    }, ms);
    timers.add(timer);
  };
  const release = (): void => {
    for (const answer of held.splice(0)) answer();
  };
  const state: FeedServer = {
    url: '',
    behaviour: initial,
    requests,
    fetches: () => requests.filter((request) => request.path === '/feed').length,
    close: async () => {
      for (const timer of timers) clearTimeout(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = http.createServer((req, res) => {
    requests.push({ method: req.method ?? '', path: req.url ?? '', authorization: req.headers.authorization, accept: req.headers.accept });
    const behaviour = state.behaviour;
    if (req.url !== '/feed') {
      res.writeHead(404).end('not here');
      return;
    }
    switch (behaviour.kind) {
      case 'feed': {
        const answer = (): void => {
          if (!res.destroyed) res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(behaviour.feed));
        };
        if (behaviour.together !== undefined) {
          held.push(answer);
          if (held.length === 1) later(5000, release);
          if (held.length >= behaviour.together) release();
        } else if (behaviour.delayMs === undefined) answer();
        else later(behaviour.delayMs, answer);
        return;
      }
      case 'status':
        res.writeHead(behaviour.status, { 'content-type': 'text/plain' }).end('brain-api is having a bad day');
        return;
      case 'raw':
        res.writeHead(200, { 'content-type': 'application/json' }).end(behaviour.body);
        return;
      case 'drop':
        req.socket.destroy();
        return;
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}

const serve = (feed: unknown, delayMs?: number): Behaviour => ({ kind: 'feed', feed, ...(delayMs === undefined ? {} : { delayMs }) });

/** A feed with these entries in its `entries` bucket. */
const feedOf = (...entries: FeedItem[]): { entries: FeedItem[] } => ({ entries });

/** An entry whose title is its id. */
const item = (id: string, content: string, extra: Partial<FeedItem> = {}): FeedItem => ({ id, title: id, content, ...extra });

/** A test body with a private bus and a feed server answering `initial`, both removed afterwards. */
function withFeed(initial: Behaviour, work: (bus: TempBus, server: FeedServer) => Promise<void>): () => Promise<void> {
  return withTempBus(async (bus) => {
    const server = await feedServer(initial);
    try {
      await work(bus, server);
    } finally {
      await server.close();
    }
  });
}

// ---------------------------------------------------------------------------
// The CLI
// ---------------------------------------------------------------------------

const TOKEN = 'brain-token-1';

/** A session of shop/claude subscribed to `brain`, reading the feed at `server`. */
function brainEnv(bus: TempBus, server: FeedServer, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const repo = join(bus.dir, 'shop');
  mkdirSync(repo, { recursive: true });
  return {
    ...bus.env,
    AGENT_BUS_NAME: 'shop/claude',
    AGENT_BUS_REPO: repo,
    AGENT_BUS_CHANNELS: 'brain',
    BRAIN_URL: server.url,
    BRAIN_HTTP_TOKEN: TOKEN,
    ...extra,
  };
}

function without(env: NodeJS.ProcessEnv, ...keys: string[]): NodeJS.ProcessEnv {
  const copy = { ...env };
  for (const key of keys) delete copy[key];
  return copy;
}

type Refreshed = RefreshResult & { channel: string };

interface RefreshRun {
  code: number | null;
  result: Refreshed;
  ms: number;
}

/** `brain refresh --json`: its exit code and the JSON it printed. */
async function refresh(env: NodeJS.ProcessEnv): Promise<RefreshRun> {
  const started = Date.now();
  const run = await runCliAsync(['brain', 'refresh', '--json'], { env });
  const ms = Date.now() - started;
  // A failed refresh says why on stderr too, in one line; a good one says nothing there.
  assert.match(run.stderr, /^$|^agent-bus: brain refresh: the source is unavailable .*\n$/, 'brain refresh --json prints at most one line on stderr');
  assert.equal(run.stderr === '', run.code === 0, 'a line on stderr exactly when the refresh failed');
  let result: Refreshed;
  try {
    result = JSON.parse(run.stdout) as Refreshed;
  } catch {
    throw new Error(`brain refresh --json printed no JSON (exit ${run.code}): ${run.stdout}`);
  }
  return { code: run.code, result, ms };
}

/** A refresh that must succeed. */
async function refreshOk(env: NodeJS.ProcessEnv): Promise<Refreshed> {
  const { code, result } = await refresh(env);
  assert.deepEqual([code, result.ok, result.error], [0, true, null], `refresh succeeds: ${JSON.stringify(result)}`);
  return result;
}

/** A refresh that must report the source unavailable (exit 1) and change nothing. */
async function refreshFails(env: NodeJS.ProcessEnv, error: RegExp): Promise<RefreshRun> {
  const run = await refresh(env);
  assert.equal(run.code, 1, `an unavailable source exits 1: ${JSON.stringify(run.result)}`);
  assert.equal(run.result.ok, false);
  assert.match(run.result.error ?? '', error);
  assert.deepEqual([run.result.added, run.result.removed, run.result.kept], [[], 0, 0], 'nothing published or removed');
  return run;
}

async function status(env: NodeJS.ProcessEnv): Promise<BrainStatus> {
  return jsonOf<BrainStatus>(await runCliAsync(['brain', 'status', '--json'], { env }));
}

/** The live notices on a channel, as `channel list CHANNEL --json` shows them. */
async function channelNotices(bus: TempBus, channel = 'brain'): Promise<ListedNotice[]> {
  return jsonOf<ListedNotice[]>(await runCliAsync(['channel', 'list', channel, '--json'], { env: bus.env }));
}

function jsonOf<T>(run: CliResult): T {
  assert.equal(run.code, 0, `command failed: ${run.stderr}`);
  return JSON.parse(run.stdout) as T;
}

const byTitle = (notices: ListedNotice[]): Map<string, ListedNotice> => new Map(notices.map((notice) => [notice.title ?? '', notice]));
const idsOf = (notices: ListedNotice[]): string[] => notices.map((notice) => notice.notice_id).sort();
const titlesOf = (notices: ListedNotice[]): string[] => notices.map((notice) => notice.title ?? '').sort();

function noticeOf(notices: ListedNotice[], title: string): ListedNotice {
  const found = notices.find((notice) => notice.title === title);
  assert.ok(found, `a notice titled ${title} among ${JSON.stringify(titlesOf(notices))}`);
  return found;
}

const FRAME = 'BRAIN CONTEXT (recalled state, not an operator directive):\n\n';

/** The entry's content as the notice carries it, after the recalled-state frame. */
function contentOf(notice: ListedNotice): string {
  assert.ok(notice.message.startsWith(FRAME), `framed as recalled state: ${notice.message.slice(0, 80)}`);
  return notice.message.slice(FRAME.length);
}


function brainAudit(bus: TempBus, event: string): Array<Record<string, unknown>> {
  return readAudit(bus.audit).filter((row) => row.op === 'notice' && row.actor === 'brain-adapter' && row.notice_event === event);
}

// ---------------------------------------------------------------------------
// The hooks (Claude Code dialect)
// ---------------------------------------------------------------------------

type HookCommand = 'hook-session-start' | 'hook-pre-tool' | 'hook-user-prompt';

interface Shown {
  id: string;
  severity: string;
  title: string;
}

interface HookOutput {
  /** The text the model is given. */
  context: string;
  shown: Shown[];
  stderr: string;
}

/** Run a hook for `session`; it must exit 0. Pre-tool answers in PreToolUse JSON, the others in plain text. */
async function hook(command: HookCommand, env: NodeJS.ProcessEnv, session: string): Promise<HookOutput> {
  const run = await runCliAsync([command, '--client', 'claude'], { env, input: JSON.stringify({ session_id: session }) });
  assert.equal(run.code, 0, `${command}: ${run.stderr}`);
  let context = run.stdout;
  if (command === 'hook-pre-tool' && context !== '') {
    const parsed = JSON.parse(context) as { hookSpecificOutput?: { hookEventName?: string; additionalContext?: string } };
    assert.equal(parsed.hookSpecificOutput?.hookEventName, 'PreToolUse');
    context = parsed.hookSpecificOutput?.additionalContext ?? '';
  }
  const shown = [...context.matchAll(/^- \[(CRITICAL|ALERT|INFO)\] #\S+(?: · "([^"]*)")? · from \S+ · id ([0-9a-f]{12}): /gm)].map((match) => ({
    severity: (match[1] ?? '').toLowerCase(),
    title: match[2] ?? '',
    id: match[3] ?? '',
  }));
  return { context, shown, stderr: run.stderr };
}

/** A hook that must print nothing on stderr. */
async function quietHook(command: HookCommand, env: NodeJS.ProcessEnv, session: string): Promise<HookOutput> {
  const output = await hook(command, env, session);
  assert.equal(output.stderr, '', `${command} warns about nothing`);
  return output;
}

const shownTitles = (output: HookOutput): string[] => output.shown.map((notice) => notice.title);
const shownIds = (output: HookOutput): string[] => output.shown.map((notice) => notice.id);

// ---------------------------------------------------------------------------
// 1. The request, the feed shape, the notices it becomes, status
// ---------------------------------------------------------------------------

const HOT_ARCS = '| Arc | Heat | Status |\n|-----|------|--------|\n| Brain MVP | 8.7 | block-1 |';

test('brain refresh GETs $BRAIN_URL/feed with the bearer token; the three buckets become brain notices in priority order; status fetches nothing', withFeed(
  serve({
    generated_at: '2026-04-10T00:00:00Z',
    hash: 'ignored',
    hot_arcs: [{ id: 'arcs', title: 'Active Hot Arcs', content: HOT_ARCS, priority: 10 }],
    inject_blocks: [
      { title: 'Operator Intent', content: 'ship the brain', priority: 8 },
      { id: 'dup', title: 'dup', content: 'from inject_blocks', priority: 1 },
    ],
    entries: [
      { id: 'dup', title: 'dup', content: 'from entries: the first bucket wins', priority: 50 },
      { id: 'blank', title: 'blank', content: '   ' },
      { title: 'no content' },
      { id: 'plain', title: 'plain', content: 'a plain entry', priority: 'high' },
      { id: 'lag', title: 'lag', content: 'replica lag', priority: 3, severity: 'alert', ttl: 120 },
    ],
  }),
  async (bus, server) => {
    // A trailing slash on BRAIN_URL still asks for /feed.
    const env = brainEnv(bus, server, { BRAIN_URL: `${server.url}/` });
    const result = await refreshOk(env);
    assert.deepEqual(server.requests, [{ method: 'GET', path: '/feed', authorization: `Bearer ${TOKEN}`, accept: 'application/json' }]);
    assert.equal(result.channel, 'brain');
    assert.deepEqual([result.entries, result.added.length, result.kept, result.removed, result.cutByCap], [5, 5, 0, 0, 0]);
    const feedWarnings = [
      "the feed's entries[1] has no content; skipped",
      "the feed's entries[2] has no content; skipped",
      'the feed\'s entries[3]: priority "high" is not usable (5 used)',
    ];
    assert.deepEqual(result.warnings, feedWarnings, 'what was dropped or defaulted is said');
    assert.match(result.contentHash ?? '', /^[0-9a-f]{16}$/);

    const notices = await channelNotices(bus);
    assert.deepEqual(idsOf(notices), [...result.added].sort(), 'the notices are the ones refresh published');
    assert.deepEqual(titlesOf(notices), ['Active Hot Arcs', 'Operator Intent', 'dup', 'lag', 'plain'], 'blank and content-less items are dropped');
    for (const notice of notices) assert.deepEqual([notice.channel, notice.source], ['brain', 'brain-adapter']);
    const seen = byTitle(notices);
    assert.equal(contentOf(noticeOf(notices, 'dup')), 'from inject_blocks', 'a duplicate id: the first bucket wins');
    assert.equal(contentOf(noticeOf(notices, 'Active Hot Arcs')), HOT_ARCS);
    assert.equal(seen.get('plain')?.priority, 5, 'a priority that is not a number is 5');
    assert.equal(seen.get('Operator Intent')?.priority, 8);
    const lag = noticeOf(notices, 'lag');
    assert.equal(lag.severity, 'alert');
    assert.equal(Date.parse(lag.expires_at) - Date.parse(lag.created_at), 120_000, 'the entry ttl');
    const arcs = noticeOf(notices, 'Active Hot Arcs');
    assert.equal(arcs.severity, 'info', 'severity defaults to info');
    assert.equal(Date.parse(arcs.expires_at) - Date.parse(arcs.created_at), 3600_000, 'ttl defaults to 3600 s');

    // A new session's first turn: the brain, severity first, then priority (higher first).
    const first = await quietHook('hook-session-start', env, 'sess-A');
    assert.deepEqual(shownTitles(first), ['lag', 'Active Hot Arcs', 'Operator Intent', 'plain', 'dup']);
    assert.equal(server.fetches(), 2, 'session start read the feed at once');
    assert.deepEqual(idsOf(await channelNotices(bus)), idsOf(notices), 'an unchanged feed keeps every notice id');

    const before = server.fetches();
    const state = await status(env);
    assert.equal(server.fetches(), before, 'brain status reads the store, not the feed');
    assert.ok(state.last_fetch_at !== null && state.last_ok_at !== null);
    assert.deepEqual(
      { ...state, last_fetch_at: null, last_ok_at: null },
      {
        enabled: true,
        enabled_because: 'BRAIN_URL is set',
        source_type: 'http',
        source_location: `${server.url}/feed`,
        channel: 'brain',
        entry_count: 5,
        live_notices: 5,
        content_hash: result.contentHash,
        refresh_every_tool_calls: 20,
        last_fetch_at: null,
        last_ok_at: null,
        last_error: null,
        subscriptions: ['brain'],
        subscriptions_layer: 'launch',
        subscriptions_from: 'the launch environment',
        warnings: feedWarnings,
      },
    );
  },
));

test('the token falls back to KB_ROUTER_TOKEN, BRAIN_HTTP_TOKEN wins, no token sends no header; BRAIN_URL wins over the feed folder', withFeed(serve(feedOf(item('from-feed', 'fed over HTTP'))), async (bus, server) => {
  const folder = join(bus.dir, 'brain-feed');
  mkdirSync(folder);
  writeFileSync(join(folder, 'local.md'), '---\nid: from-folder\ntitle: from-folder\n---\nread from the folder\n');
  const base = without(brainEnv(bus, server, { BRAIN_SOURCE_PATH: folder, BRAIN_SOURCE_TYPE: 'file' }), 'BRAIN_HTTP_TOKEN');

  await refreshOk({ ...base, KB_ROUTER_TOKEN: 'kb-token' });
  await refreshOk({ ...base, KB_ROUTER_TOKEN: 'kb-token', BRAIN_HTTP_TOKEN: TOKEN });
  await refreshOk(base);
  assert.deepEqual(
    server.requests.map((request) => request.authorization),
    ['Bearer kb-token', `Bearer ${TOKEN}`, undefined],
  );
  assert.deepEqual(titlesOf(await channelNotices(bus)), ['from-feed'], 'the folder is not read while BRAIN_URL is set');
  assert.equal((await status(base)).source_type, 'http');

  // The folder is a working source once BRAIN_URL is unset, so the check above could fail.
  const folderOnly = without(base, 'BRAIN_URL');
  const folderState = await status(folderOnly);
  assert.deepEqual([folderState.source_type, folderState.source_location], ['file', folder]);
  await refreshOk(folderOnly);
  assert.deepEqual(titlesOf(await channelNotices(bus)), ['from-folder']);
  await refreshOk(base);
  assert.deepEqual(titlesOf(await channelNotices(bus)), ['from-feed']);
}));

// ---------------------------------------------------------------------------
// 2. Unavailable versus empty
// ---------------------------------------------------------------------------

test('an unavailable source (HTTP error, dropped connection, timeout, not a feed) keeps the last good channel; an empty feed clears it', withFeed(
  serve(feedOf(item('a', 'alpha', { priority: 9 }), item('b', 'beta'))),
  async (bus, server) => {
    const env = brainEnv(bus, server, { BRAIN_HTTP_TIMEOUT: '0.5' });
    const good = await refreshOk(env);
    const goodIds = idsOf(await channelNotices(bus));
    assert.equal(goodIds.length, 2);
    const goodState = await status(env);

    const outages: Array<[string, Behaviour, RegExp]> = [
      ['HTTP 500', { kind: 'status', status: 500 }, /answered HTTP 500/],
      ['HTTP 404', { kind: 'status', status: 404 }, /answered HTTP 404/],
      ['a dropped connection', { kind: 'drop' }, /socket hang up|ECONNRESET/],
      ['an answer slower than BRAIN_HTTP_TIMEOUT', serve(feedOf(item('late', 'too late')), 4000), /no answer within 500 ms/],
      ['a body that is not JSON', { kind: 'raw', body: '<html>502 Bad Gateway</html>' }, /not JSON/],
      ['JSON that is not a feed object', { kind: 'raw', body: '[1, 2]' }, /not a feed object/],
      ['an object that is no feed (an error report)', { kind: 'raw', body: '{"error":"db down"}' }, /answered an object with none of hot_arcs, inject_blocks, entries \(keys: error\)/],
    ];
    for (const [label, behaviour, error] of outages) {
      server.behaviour = behaviour;
      const fetched = server.fetches();
      const run = await refreshFails(env, error);
      assert.equal(server.fetches(), fetched + 1, `${label}: one request`);
      if (behaviour.kind === 'feed') assert.ok(run.ms < 3500, `${label}: gave up at the timeout, not when the server answered (${run.ms} ms)`);
      assert.deepEqual(idsOf(await channelNotices(bus)), goodIds, `${label}: the channel keeps its notices and their ids`);
      const state = await status(env);
      assert.match(state.last_error ?? '', error, `${label}: status has the error`);
      assert.ok(state.warnings.some((warning) => warning.startsWith('the source is unreachable')), `${label}: status warns: ${JSON.stringify(state.warnings)}`);
      assert.deepEqual(
        [state.entry_count, state.live_notices, state.content_hash, state.last_ok_at],
        [2, 2, good.contentHash, goodState.last_ok_at],
        `${label}: status still describes the last good content`,
      );
      assert.ok((state.last_fetch_at ?? '') > (goodState.last_fetch_at ?? ''), `${label}: the failed fetch is recorded`);
    }

    // A session starting during the outage still gets the last good brain, and a warning on stderr.
    server.behaviour = { kind: 'status', status: 503 };
    const during = await hook('hook-session-start', env, 'sess-A');
    assert.match(during.stderr, /brain source unavailable, keeping its last content: .*HTTP 503/);
    assert.deepEqual([...shownIds(during)].sort(), goodIds);

    // Back up with the same feed: nothing republished (the outage did not poison the next refresh).
    server.behaviour = serve(feedOf(item('a', 'alpha', { priority: 9 }), item('b', 'beta')));
    const back = await refreshOk(env);
    assert.deepEqual([back.kept, back.added, back.removed, back.contentHash], [2, [], 0, good.contentHash]);
    assert.deepEqual(idsOf(await channelNotices(bus)), goodIds);
    const recovered = await status(env);
    assert.equal(recovered.last_error, null);
    assert.deepEqual(recovered.warnings, []);

    // An answer that says "nothing" is authoritative: the channel is cleared. Then refilled, and cleared again.
    const clearWith = async (empty: unknown): Promise<void> => {
      server.behaviour = serve(empty);
      const cleared = await refreshOk(env);
      assert.deepEqual([cleared.entries, cleared.kept, cleared.added, cleared.removed, cleared.contentHash], [0, 0, [], 2, null], JSON.stringify(empty));
      assert.deepEqual(await channelNotices(bus), [], `${JSON.stringify(empty)} clears the channel`);
      const state = await status(env);
      assert.deepEqual([state.entry_count, state.live_notices, state.content_hash, state.last_error], [0, 0, null, null]);
    };
    await clearWith({});
    server.behaviour = serve(feedOf(item('a', 'alpha', { priority: 9 }), item('b', 'beta')));
    await refreshOk(env);
    await clearWith({ generated_at: '2026-11-30T00:00:00Z', hash: 'abc' });
    server.behaviour = serve(feedOf(item('a', 'alpha', { priority: 9 }), item('b', 'beta')));
    const refilled = await refreshOk(env);
    assert.deepEqual([refilled.kept, refilled.added.length], [0, 2], 'the entries come back as new notices');
    assert.deepEqual(idsOf(await channelNotices(bus)), [...refilled.added].sort());
    await clearWith({ entries: [] });
  },
));

test('feed items that cannot be used are skipped or defaulted with a warning each, never silently', withFeed(
  serve({ entries: [item('good', 'fine'), { id: 'odd', content: 'kept', priority: 'high', severity: 'loud', ttl: -5 }, null, 'a string', { id: 'empty', content: '  ' }, { content: 'no id' }] }),
  async (bus, server) => {
    const result = await refreshOk(brainEnv(bus, server));
    assert.equal(result.entries, 2, 'good, and odd with its defaults');
    assert.deepEqual(result.warnings, [
      'the feed\'s entries[1]: priority "high" is not usable (5 used)',
      'the feed\'s entries[1]: ttl -5 is not usable (3600 seconds used)',
      'the feed\'s entries[1]: severity "loud" is not usable (info used)',
      'the feed\'s entries[2] is not an object; skipped',
      'the feed\'s entries[3] is not an object; skipped',
      'the feed\'s entries[4] has no content; skipped',
      'the feed\'s entries[5] has no id or title; skipped',
    ]);
  },
));

test('BRAIN_HTTP_TIMEOUT defaults to 3 s', withFeed(serve(feedOf(item('slow', 'slow but fine')), 1200), async (bus, server) => {
  const env = brainEnv(bus, server);
  await refreshOk(env); // 1.2 s is within the default
  server.behaviour = serve(feedOf(item('slower', 'too slow')), 6000);
  const run = await refreshFails(env, /no answer within 3000 ms/);
  assert.ok(run.ms >= 3000 && run.ms < 5500, `gave up after 3 s, before the server answered (${run.ms} ms)`);
  assert.deepEqual(titlesOf(await channelNotices(bus)), ['slow']);
}));

// ---------------------------------------------------------------------------
// 3. Reconciling: ids, receipts, changes, expiry
// ---------------------------------------------------------------------------

test('a changed feed: unchanged entries keep their notice id and receipts, changed and new ones are published anew, gone ones removed', withFeed(
  serve(feedOf(item('keep', 'stays the same', { priority: 4 }), item('edit', 'first version', { priority: 3 }), item('gone', 'about to go', { priority: 2 }))),
  async (bus, server) => {
    const env = brainEnv(bus, server);
    const first = await refreshOk(env);
    const before = byTitle(await channelNotices(bus));

    const start = await quietHook('hook-session-start', env, 'sess-A');
    assert.deepEqual(shownTitles(start), ['keep', 'edit', 'gone']);
    assert.deepEqual((await quietHook('hook-user-prompt', env, 'sess-A')).shown, [], 'info entries are shown once per session');

    server.behaviour = serve(feedOf(item('keep', 'stays the same', { priority: 4 }), item('edit', 'second version', { priority: 3 }), item('fresh', 'brand new', { priority: 7 })));
    const second = await refreshOk(env);
    assert.deepEqual([second.entries, second.kept, second.added.length, second.removed], [3, 1, 2, 2]);
    assert.notEqual(second.contentHash, first.contentHash);

    const after = await channelNotices(bus);
    assert.deepEqual(titlesOf(after), ['edit', 'fresh', 'keep']);
    const keep = noticeOf(after, 'keep');
    assert.equal(keep.notice_id, before.get('keep')?.notice_id, 'unchanged: same notice id');
    assert.equal(keep.delivered_to, 1, 'unchanged: its receipt is kept');
    assert.notEqual(noticeOf(after, 'edit').notice_id, before.get('edit')?.notice_id, 'changed: a new notice');
    assert.equal(contentOf(noticeOf(after, 'edit')), 'second version');
    assert.deepEqual(new Set(second.added), new Set([noticeOf(after, 'edit').notice_id, noticeOf(after, 'fresh').notice_id]));

    assert.deepEqual(
      new Set(brainAudit(bus, 'clear').map((row) => row.message_id)),
      new Set([before.get('edit')?.notice_id, before.get('gone')?.notice_id]),
      'the old version and the gone entry are audited as cleared',
    );

    // sess-A sees only what is new to it; a new session sees everything, by priority.
    assert.deepEqual(shownTitles(await quietHook('hook-user-prompt', env, 'sess-A')), ['fresh', 'edit']);
    assert.deepEqual(shownTitles(await quietHook('hook-session-start', env, 'sess-B')), ['fresh', 'keep', 'edit']);
  },
));

test('a change of priority alone reorders the entries', withFeed(serve(feedOf(item('x', 'entry x', { priority: 1 }), item('y', 'entry y', { priority: 9 }))), async (bus, server) => {
  const env = brainEnv(bus, server);
  assert.deepEqual(shownTitles(await quietHook('hook-session-start', env, 'sess-A')), ['y', 'x']);
  server.behaviour = serve(feedOf(item('x', 'entry x', { priority: 20 }), item('y', 'entry y', { priority: 9 })));
  // The new session's start reads the changed feed, then shows the brain.
  const second = await quietHook('hook-session-start', env, 'sess-B');
  assert.equal(server.fetches(), 2);
  assert.deepEqual(
    (await channelNotices(bus)).map((notice) => [notice.title, notice.priority]).sort(),
    [['x', 20], ['y', 9]],
    "the channel carries the feed's new priorities",
  );
  assert.deepEqual(shownTitles(second), ['x', 'y'], 'priority decides the order');
}));

test('expired entries are published again with a new id at the next refresh, and so is a cleared channel; receipts of the others are kept', withFeed(
  serve(feedOf(item('a', 'alpha', { priority: 6 }), item('b', 'beta', { priority: 5 }))),
  async (bus, server) => {
    const env = brainEnv(bus, server);
    assert.deepEqual(shownTitles(await quietHook('hook-session-start', env, 'sess-A')), ['a', 'b']);
    const before = byTitle(await channelNotices(bus));
    const oldA = before.get('a')?.notice_id ?? '';
    expireInDatabase(bus, oldA);
    assert.deepEqual(titlesOf(await channelNotices(bus)), ['b'], 'a has expired');

    const result = await refreshOk(env);
    assert.deepEqual([result.kept, result.added.length, result.removed], [1, 1, 1]);
    const after = await channelNotices(bus);
    const a = noticeOf(after, 'a');
    assert.notEqual(a.notice_id, oldA, 'restored under a new id');
    assert.deepEqual(result.added, [a.notice_id]);
    assert.equal(a.delivered_to, 0);
    assert.deepEqual([noticeOf(after, 'b').notice_id, noticeOf(after, 'b').delivered_to], [before.get('b')?.notice_id, 1], 'b keeps its id and receipt');
    assert.deepEqual(brainAudit(bus, 'expire').map((row) => row.message_id), [oldA], 'the expired notice is audited as expired');
    assert.deepEqual(shownIds(await quietHook('hook-user-prompt', env, 'sess-A')), [a.notice_id], 'sess-A is shown the restored entry only');

    // An operator clears the channel: the next refresh restores it.
    const cleared = await runCliAsync(['channel', 'clear', '--channel', 'brain'], { env: bus.env });
    assert.equal(cleared.code, 0, cleared.stderr);
    assert.deepEqual(await channelNotices(bus), []);
    const restored = await refreshOk(env);
    assert.deepEqual([restored.kept, restored.added.length], [0, 2]);
    assert.deepEqual(titlesOf(await channelNotices(bus)), ['a', 'b']);
  },
));

// ---------------------------------------------------------------------------
// 4. The per-entry trims
// ---------------------------------------------------------------------------

function hotArcsTable(rows: number): string {
  const lines = ['## Currently Active', '', '| Arc | Heat | Status |', '|-----|------|--------|'];
  for (let n = 1; n <= rows; n++) lines.push(`| arc-${n} | ${(20 - n / 2).toFixed(1)} | active |`);
  lines.push('', '_updated hourly_');
  return lines.join('\n');
}

const arcRows = (content: string): string[] => content.split('\n').filter((line) => /^\| arc-\d+ \|/.test(line));
const trimmedNote = (content: string): string | null => /^\|(?: \.\.\. \|)+ \*\((\d+) more arcs trimmed\)\* \|$/m.exec(content)?.[1] ?? null;

test('BRAIN_HOT_ARCS_TOP_N trims the hot-arcs table (default 10, 0 keeps all); BRAIN_PAYLOAD_MAX_BYTES caps each entry in characters (default 1536, 0 no cap)', withFeed(
  serve(feedOf(item('arcs', hotArcsTable(14), { priority: 9 }), item('long', 'é'.repeat(2000)), item('short', 'short and sweet'))),
  async (bus, server) => {
    const check = async (extra: NodeJS.ProcessEnv, rows: number, trimmed: string | null, longChars: number): Promise<void> => {
      const label = JSON.stringify(extra);
      await refreshOk(brainEnv(bus, server, extra));
      const notices = await channelNotices(bus);
      const arcs = contentOf(noticeOf(notices, 'arcs'));
      assert.deepEqual(arcRows(arcs), arcRows(hotArcsTable(14)).slice(0, rows), `${label}: the first rows, as given`);
      assert.equal(trimmedNote(arcs), trimmed, `${label}: the trimmed note`);
      assert.ok(arcs.startsWith('## Currently Active\n\n| Arc | Heat | Status |\n|-----|------|--------|\n') && arcs.endsWith('\n\n_updated hourly_'), `${label}: what surrounds the table is kept`);
      const long = contentOf(noticeOf(notices, 'long'));
      const cut = 2000 - longChars;
      assert.equal(long, 'é'.repeat(longChars) + (cut > 0 ? `\n…[+${cut} characters trimmed]` : ''), `${label}: the cap counts characters, not bytes`);
      assert.equal(contentOf(noticeOf(notices, 'short')), 'short and sweet', `${label}: a short entry is untouched`);
    };
    await check({}, 10, '4', 1536);
    // (The cap applies to the whole entry, so it is kept above the trimmed table's length here.)
    await check({ BRAIN_HOT_ARCS_TOP_N: '3', BRAIN_PAYLOAD_MAX_BYTES: '500' }, 3, '11', 500);
    await check({ BRAIN_HOT_ARCS_TOP_N: '0', BRAIN_PAYLOAD_MAX_BYTES: '0' }, 14, null, 2000);
    // The trims are applied at each refresh: changing a setting republishes only the entries it changes.
    const again = await refreshOk(brainEnv(bus, server, { BRAIN_HOT_ARCS_TOP_N: '0', BRAIN_PAYLOAD_MAX_BYTES: '0' }));
    assert.deepEqual([again.kept, again.added], [3, []]);
    const back = await refreshOk(brainEnv(bus, server));
    assert.deepEqual([back.kept, back.added.length, back.removed], [1, 2, 2]);
  },
));

// ---------------------------------------------------------------------------
// 5. When the hooks read the feed
// ---------------------------------------------------------------------------

/** The tool-call counter the hooks keep for a session, from the store. */
function toolCalls(bus: TempBus, session: string): number | null {
  return bus.rows<{ value: number }>(`SELECT value FROM session_counters WHERE session = '${session}' AND counter = 'tool_calls'`)[0]?.value ?? null;
}

test('hook-session-start reads the feed at once; hook-pre-tool every BRAIN_REFRESH_TOOL_CALLS calls of a session and shows what that refresh restored; hook-user-prompt never', withFeed(
  serve(feedOf(item('a', 'alpha', { priority: 6 }), item('crit', 'prod is on fire', { severity: 'critical' }))),
  async (bus, server) => {
    const env = brainEnv(bus, server, { BRAIN_REFRESH_TOOL_CALLS: '3' });
    const preTool = (session: string): Promise<HookOutput> => quietHook('hook-pre-tool', env, session);

    // First turn: the brain is there at once.
    const start = await quietHook('hook-session-start', env, 'sess-A');
    assert.equal(server.fetches(), 1);
    assert.deepEqual(shownTitles(start), ['crit', 'a']);
    assert.equal((await status(env)).refresh_every_tool_calls, 3);

    // Prompts never read the feed.
    for (let turn = 0; turn < 4; turn++) assert.deepEqual(shownTitles(await quietHook('hook-user-prompt', env, 'sess-A')), ['crit']);
    assert.equal(server.fetches(), 1, 'hook-user-prompt does not read the feed');

    // Calls 1 and 2 do not read it; call 3 does, and shows the entry the changed feed added (info, at a tool call).
    assert.deepEqual(shownTitles(await preTool('sess-A')), ['crit']);
    assert.deepEqual(shownTitles(await preTool('sess-A')), ['crit']);
    assert.equal(server.fetches(), 1, 'tool calls 1 and 2 do not read the feed');
    server.behaviour = serve(feedOf(item('a', 'alpha', { priority: 6 }), item('crit', 'prod is on fire', { severity: 'critical' }), item('fresh', 'new knowledge', { priority: 8 })));
    const third = await preTool('sess-A');
    assert.equal(server.fetches(), 2, 'tool call 3 reads the feed');
    assert.deepEqual(shownTitles(third), ['crit', 'fresh'], 'the restored entry is injected into that tool call; the unchanged one is not');
    assert.deepEqual(shownTitles(await quietHook('hook-user-prompt', env, 'sess-A')), ['crit'], 'shown at the tool call, so not again at the next prompt');

    // Calls 4 and 5 do not read; an entry expires meanwhile; call 6 restores it under a new id and shows it.
    assert.deepEqual(shownTitles(await preTool('sess-A')), ['crit']);
    assert.deepEqual(shownTitles(await preTool('sess-A')), ['crit']);
    assert.equal(server.fetches(), 2);
    const oldA = noticeOf(await channelNotices(bus), 'a').notice_id;
    expireInDatabase(bus, oldA);
    const sixth = await preTool('sess-A');
    assert.equal(server.fetches(), 3, 'tool call 6 reads the feed');
    const newA = noticeOf(await channelNotices(bus), 'a').notice_id;
    assert.notEqual(newA, oldA);
    assert.deepEqual(sixth.shown.map((notice) => [notice.title, notice.id]), [['crit', noticeOf(await channelNotices(bus), 'crit').notice_id], ['a', newA]]);

    // A refresh that restores nothing shows only what a tool call always shows.
    assert.deepEqual(shownTitles(await preTool('sess-A')), ['crit']);
    assert.deepEqual(shownTitles(await preTool('sess-A')), ['crit']);
    assert.deepEqual(shownTitles(await preTool('sess-A')), ['crit']);
    assert.equal(server.fetches(), 4, 'tool call 9 reads the feed');

    // The counter is per session, and kept in the store across processes.
    await preTool('sess-B');
    await preTool('sess-B');
    assert.equal(server.fetches(), 4, "sess-B's first two calls do not read the feed");
    await preTool('sess-B');
    assert.equal(server.fetches(), 5, "sess-B's third call does");
    assert.deepEqual([toolCalls(bus, 'sess-A'), toolCalls(bus, 'sess-B')], [9, 3]);
  },
));

test('BRAIN_REFRESH_TOOL_CALLS defaults to 20; with BRAIN_ENABLED=0 the hooks never read the feed, brain refresh still does', withFeed(serve(feedOf(item('a', 'alpha'))), async (bus, server) => {
  const env = brainEnv(bus, server);
  for (let call = 1; call <= 19; call++) await quietHook('hook-pre-tool', env, 'sess-A');
  assert.equal(server.fetches(), 0, 'calls 1 to 19 do not read the feed');
  await quietHook('hook-pre-tool', env, 'sess-A');
  assert.equal(server.fetches(), 1, 'call 20 does');
  assert.deepEqual(titlesOf(await channelNotices(bus)), ['a']);

  const off = brainEnv(bus, server, { BRAIN_ENABLED: '0', BRAIN_REFRESH_TOOL_CALLS: '1' });
  await quietHook('hook-session-start', off, 'sess-B');
  await quietHook('hook-pre-tool', off, 'sess-B');
  await quietHook('hook-pre-tool', off, 'sess-B');
  assert.equal(server.fetches(), 1, 'a brain that is off is not read by the hooks');
  const state = await status(off);
  assert.equal(state.enabled, false);
  assert.ok(state.warnings.some((warning) => warning.startsWith('the brain is off')), JSON.stringify(state.warnings));
  await refreshOk(off);
  assert.equal(server.fetches(), 2, 'an explicit refresh reads it anyway');
}));

// ---------------------------------------------------------------------------
// 6. Status warnings
// ---------------------------------------------------------------------------

test('brain status warns when BRAIN_CHANNEL is not subscribed, the source is unreachable, or entries were cut by the channel cap', withFeed(
  serve(feedOf(...[1, 2, 3, 4, 5].map((n) => item(`p${n}`, `priority ${n}`, { priority: n })))),
  async (bus, server) => {
    const env = brainEnv(bus, server, { BRAIN_CHANNEL: 'kb', AGENT_BUS_CHANNEL_MAX_NOTICES: '3' });
    const result = await refreshOk(env);
    assert.deepEqual([result.channel, result.entries, result.cutByCap], ['kb', 3, 2]);
    assert.ok(result.warnings.some((warning) => /2 entries cut by the channel cap/.test(warning)), JSON.stringify(result.warnings));
    assert.deepEqual(titlesOf(await channelNotices(bus, 'kb')), ['p3', 'p4', 'p5'], 'the cap keeps the highest priorities');
    assert.deepEqual(await channelNotices(bus, 'brain'), [], 'nothing on the default channel');

    const warned = (await status(env)).warnings;
    assert.equal(warned.length, 2, JSON.stringify(warned));
    assert.match(warned.join('\n'), /BRAIN_CHANNEL 'kb' is not in this session's subscriptions/);
    assert.match(warned.join('\n'), /2 entries were cut by the channel cap/);
    const subscribed = { ...env, AGENT_BUS_CHANNELS: 'brain,kb' };
    assert.deepEqual((await status(subscribed)).warnings.filter((warning) => warning.includes('subscriptions')), [], 'no subscription warning once kb is subscribed');

    // A session not subscribed to kb still refreshes it at session start, but is shown none of it.
    const start = await quietHook('hook-session-start', env, 'sess-A');
    assert.equal(server.fetches(), 2);
    assert.deepEqual(start.shown, []);
    assert.deepEqual(shownTitles(await quietHook('hook-session-start', subscribed, 'sess-B')), ['p5', 'p4', 'p3']);

    server.behaviour = { kind: 'status', status: 502 };
    await refreshFails(env, /HTTP 502/);
    const all = (await status(env)).warnings.join('\n');
    for (const pattern of [/not in this session's subscriptions/, /the source is unreachable \(.*HTTP 502\)/, /cut by the channel cap/]) assert.match(all, pattern);
    const text = await runCliAsync(['brain', 'status'], { env });
    assert.equal(text.code, 0);
    assert.match(text.stdout, new RegExp(`^source {5}http ${server.url.replace(/\./g, '\\.')}/feed$`, 'm'));
    assert.match(text.stdout, /^warning {4}the source is unreachable/m);
  },
));

// ---------------------------------------------------------------------------
// 7. Refreshers at once
// ---------------------------------------------------------------------------

test('brain refresh, two session starts and tool calls refreshing at once leave one consistent channel: the feed, each entry published once', withFeed(
  serve(feedOf(item('shared', 'in both feeds'), item('stale-1', 'old'), item('stale-2', 'old'))),
  async (bus, server) => {
    // Room for the whole feed in one hook output, so a session start can show all of it.
    const env = brainEnv(bus, server, { BRAIN_REFRESH_TOOL_CALLS: '1', AGENT_BUS_NOTICES_PER_TURN: '100', AGENT_BUS_NOTICE_MAX_BYTES: '200000' });
    await refreshOk(env);
    const sharedId = noticeOf(await channelNotices(bus), 'shared').notice_id;
    const published = brainAudit(bus, 'publish').length;

    const wanted = ['shared', ...Array.from({ length: 29 }, (_, n) => `n${n + 1}`)];
    const processes = 10;
    // Every fetch is answered at the same moment, so the reconciles meet at the database.
    server.behaviour = { kind: 'feed', feed: feedOf(...wanted.map((id, index) => item(id, id === 'shared' ? 'in both feeds' : `new entry ${id}`, { priority: index % 7 }))), together: processes };
    const fetched = server.fetches();
    const [refreshes, starts, tools] = await Promise.all([
      Promise.all([1, 2, 3, 4].map(() => refresh(env))),
      Promise.all(['sess-A', 'sess-B'].map((session) => quietHook('hook-session-start', env, session))),
      Promise.all(['sess-C', 'sess-D', 'sess-E', 'sess-F'].map((session) => quietHook('hook-pre-tool', env, session))),
    ]);
    assert.equal(server.fetches(), fetched + processes, 'every process read the feed');
    for (const run of refreshes) assert.deepEqual([run.code, run.result.ok, run.result.entries], [0, true, wanted.length]);

    const notices = await channelNotices(bus);
    assert.deepEqual(titlesOf(notices), [...wanted].sort(), 'exactly the feed');
    assert.equal(new Set(notices.map((notice) => notice.content_hash)).size, wanted.length, 'no duplicates');
    assert.equal(noticeOf(notices, 'shared').notice_id, sharedId, 'the unchanged entry kept its id through it all');
    assert.equal(brainAudit(bus, 'publish').length - published, wanted.length - 1, 'each new entry was published once, by one of the refreshers');
    assert.equal(brainAudit(bus, 'clear').length, 2, 'each stale entry was removed once');
    const addedByRefreshes = refreshes.flatMap((run) => run.result.added);
    assert.ok(addedByRefreshes.every((id) => idsOf(notices).includes(id)), 'what the refreshes say they published is what the channel holds');

    // Each session's first turn saw the whole new feed, never a half-reconciled channel.
    for (const start of starts) assert.deepEqual([...shownIds(start)].sort(), idsOf(notices));
    for (const tool of tools) assert.ok(tool.shown.every((notice) => idsOf(notices).includes(notice.id)));
    const state = await status(env);
    assert.deepEqual([state.entry_count, state.live_notices, state.last_error], [wanted.length, wanted.length, null]);
  },
));
