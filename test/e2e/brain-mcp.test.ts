/**
 * The brain tools of the real MCP server (brain_refresh, brain_status),
 * spawned with `agent-bus serve` over stdio and driven with the official
 * client SDK, with a folder of markdown files as the source. What they store
 * is checked with the CLI.
 */
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { json, runCli, tempBus, type TempBus } from '../helpers/bus-env.js';
import { connect, type McpSession } from '../helpers/mcp.js';
import type { BrainStatus } from '../../src/brain/status.js';
import { notices, RECALLED, STATUS_KEYS, writeFeed, type Refreshed } from '../helpers/notices.js';

const REFRESH_KEYS = ['added', 'channel', 'contentHash', 'cutByCap', 'entries', 'error', 'kept', 'ok', 'removed', 'warnings'];
const UNSUBSCRIBED_PREFIX = "BRAIN_CHANNEL 'brain' is not in this session's subscriptions (";
const UNSUBSCRIBED = `${UNSUBSCRIBED_PREFIX}ops,deploy, from the launch environment): it will not see the brain`;

interface Setup {
  bus: TempBus;
  /** A feed folder outside the bus folder, named by BRAIN_SOURCE_PATH in the server env. */
  feed: string;
  open(extra?: NodeJS.ProcessEnv): Promise<McpSession>;
}

async function withServers(work: (setup: Setup) => Promise<void>): Promise<void> {
  const bus = tempBus();
  const feed = join(bus.dir, 'vault', 'brain-feed');
  mkdirSync(feed, { recursive: true });
  const sessions: McpSession[] = [];
  try {
    await work({
      bus,
      feed,
      open: async (extra = {}) => {
        const session = await connect({ ...bus.env, AGENT_BUS_NAME: 'shop/claude', AGENT_BUS_REPO: '/repos/shop', BRAIN_SOURCE_PATH: feed, ...extra });
        sessions.push(session);
        return session;
      },
    });
  } finally {
    for (const session of sessions) await session.close().catch(() => undefined);
    bus.cleanup();
  }
}

/** The raw tool result: not a tool error, its text parsed, and the structured content the same value. */
async function callRaw<T>(server: McpSession, name: string): Promise<T> {
  const result = await server.client.callTool({ name, arguments: {} });
  const text = (result.content as Array<{ type: string; text: string }>)[0]?.text ?? '';
  assert.ok(!result.isError, `${name} is not a tool error: ${text}`);
  const parsed = JSON.parse(text) as T;
  assert.deepEqual(result.structuredContent, parsed, `${name}: structured content equals the text`);
  return parsed;
}

const FILES = {
  'arcs.md': '---\nid: hot-arcs\ntitle: Active Hot Arcs\npriority: 10\nseverity: alert\n---\nBrain MVP: block-1\n',
  'notes.md': 'no front matter: defaults\n',
  'broken.md': '---\ntitle: [unclosed\n---\nnever loaded\n',
};

test('the tool list has brain_refresh and brain_status, both without arguments', () =>
  withServers(async ({ open }) => {
    const server = await open();
    const tools = (await server.client.listTools()).tools;
    const names = tools.map((tool) => tool.name);
    for (const name of ['brain_refresh', 'brain_status']) {
      const tool = tools.find((item) => item.name === name);
      assert.ok(tool, `${name} in ${names.join(', ')}`);
      assert.ok((tool.description ?? '').length > 20, `${name} is described`);
      assert.deepEqual(Object.keys(tool.inputSchema.properties ?? {}), [], `${name} takes no arguments`);
      assert.equal((tool.inputSchema.required ?? []).length, 0);
    }
  }));

test('brain_refresh reads the BRAIN_SOURCE_PATH of the server env and reports channel, ok, entries, kept, added, removed, cutByCap, contentHash, warnings', () =>
  withServers(async ({ bus, feed, open }) => {
    writeFeed(feed, FILES);
    writeFeed(join(bus.folder, 'brain-feed'), { 'default.md': 'the default folder is not the source here\n' });
    const server = await open();

    const first = await callRaw<Refreshed>(server, 'brain_refresh');
    assert.deepEqual(Object.keys(first).sort(), REFRESH_KEYS);
    assert.deepEqual(
      { ...first, added: first.added.length, contentHash: typeof first.contentHash, warnings: first.warnings.length },
      { channel: 'brain', ok: true, error: null, entries: 2, kept: 0, added: 2, removed: 0, cutByCap: 0, contentHash: 'string', warnings: 1 },
    );
    assert.match(first.contentHash ?? '', /^[0-9a-f]{16}$/);
    assert.match(first.warnings[0] ?? '', /^skipped broken\.md: \S/);

    const stored = notices(bus);
    assert.deepEqual(
      stored.map((notice) => notice.notice_id),
      first.added,
      'the ids it published, highest priority first',
    );
    assert.deepEqual(
      stored.map((notice) => [notice.title, notice.priority, notice.severity, notice.source, notice.message]),
      [
        ['Active Hot Arcs', 10, 'alert', 'brain-adapter', `${RECALLED}\n\nBrain MVP: block-1`],
        ['notes', 5, 'info', 'brain-adapter', `${RECALLED}\n\nno front matter: defaults`],
      ],
    );

    // Unchanged: the same notices, kept.
    const again = await callRaw<Refreshed>(server, 'brain_refresh');
    assert.deepEqual([again.ok, again.entries, again.kept, again.added, again.removed, again.contentHash], [true, 2, 2, [], 0, first.contentHash]);
    assert.deepEqual(
      notices(bus).map((notice) => notice.notice_id),
      first.added,
    );

    // A changed feed: the server reads the folder afresh at every call.
    rmSync(join(feed, 'notes.md'));
    writeFeed(feed, { 'new.md': '---\npriority: 1\n---\nnew entry\n' });
    const changed = await callRaw<Refreshed>(server, 'brain_refresh');
    assert.deepEqual([changed.entries, changed.kept, changed.added.length, changed.removed], [2, 1, 1, 1]);
    assert.notEqual(changed.contentHash, first.contentHash);
    assert.deepEqual(
      notices(bus).map((notice) => notice.title),
      ['Active Hot Arcs', 'new'],
    );

    // The CLI with the same settings agrees with what the server did.
    const cli = json<Refreshed>(runCli(['brain', 'refresh', '--json'], { env: { ...bus.env, BRAIN_SOURCE_PATH: feed } }));
    assert.deepEqual([cli.kept, cli.added, cli.contentHash], [2, [], changed.contentHash]);
  }));

test('brain_refresh follows the rest of the server env: BRAIN_CHANNEL, the channel cap, the payload cap; it runs with BRAIN_ENABLED=0', () =>
  withServers(async ({ bus, feed, open }) => {
    writeFeed(feed, {
      'a.md': '---\npriority: 3\n---\nalpha alpha alpha\n',
      'b.md': '---\npriority: 2\n---\nbeta\n',
      'c.md': '---\npriority: 1\n---\ngamma\n',
    });
    const server = await open({ BRAIN_CHANNEL: 'arcs', AGENT_BUS_CHANNEL_MAX_NOTICES: '2', BRAIN_PAYLOAD_MAX_BYTES: '5', BRAIN_ENABLED: '0' });
    const result = await callRaw<Refreshed>(server, 'brain_refresh');
    assert.deepEqual([result.channel, result.ok, result.entries, result.cutByCap], ['arcs', true, 2, 1]);
    assert.deepEqual(result.warnings, ['1 entries cut by the channel cap (AGENT_BUS_CHANNEL_MAX_NOTICES=2)']);
    assert.deepEqual(notices(bus), [], "nothing on 'brain'");
    assert.deepEqual(
      notices(bus, 'arcs').map((notice) => [notice.title, notice.message]),
      [
        ['a', `${RECALLED}\n\nalpha\n…[+12 characters trimmed]`],
        ['b', `${RECALLED}\n\nbeta`],
      ],
    );
    const status = await callRaw<BrainStatus>(server, 'brain_status');
    assert.deepEqual([status.channel, status.enabled, status.entry_count, status.live_notices], ['arcs', false, 2, 2]);
    assert.ok(status.warnings.includes('1 entries were cut by the channel cap (AGENT_BUS_CHANNEL_MAX_NOTICES)'), JSON.stringify(status.warnings));
  }));

test("brain_status: source, counts, hash, cadence, fetch times and warnings, from the store (a CLI refresh shows in the server's status)", () =>
  withServers(async ({ bus, feed, open }) => {
    writeFeed(feed, FILES);
    const server = await open({ AGENT_BUS_CHANNELS: 'brain,amygdala', BRAIN_REFRESH_TOOL_CALLS: '4' });

    const before = await callRaw<BrainStatus>(server, 'brain_status');
    assert.deepEqual(Object.keys(before).sort(), STATUS_KEYS);
    assert.deepEqual(before, {
      enabled: true,
      enabled_because: `${feed} has markdown files`,
      source_type: 'file',
      source_location: feed,
      channel: 'brain',
      entry_count: 0,
      live_notices: 0,
      content_hash: null,
      refresh_every_tool_calls: 4,
      last_fetch_at: null,
      last_ok_at: null,
      last_error: null,
      subscriptions: ['brain', 'amygdala'],
      subscriptions_layer: 'launch',
      subscriptions_from: 'the launch environment',
      warnings: ['the source has not been read yet: run brain refresh'],
    });

    // Refreshed by another process: the server reads the state from the store, not its own memory.
    const cli = json<Refreshed>(runCli(['brain', 'refresh', '--json'], { env: { ...bus.env, BRAIN_SOURCE_PATH: feed } }));
    const after = await callRaw<BrainStatus>(server, 'brain_status');
    assert.deepEqual([after.entry_count, after.live_notices, after.content_hash, after.last_error], [2, 2, cli.contentHash, null]);
    assert.ok(after.last_fetch_at !== null && after.last_fetch_at === after.last_ok_at, JSON.stringify(after));
    assert.equal(after.warnings.length, 1, JSON.stringify(after.warnings));
    assert.match(after.warnings[0] ?? '', /^skipped broken\.md: /, 'the last fetch warnings');

    // Live notices count what the channel holds now.
    const cleared = runCli(['channel', 'clear', '--channel', 'brain'], { env: bus.env });
    assert.equal(cleared.code, 0, cleared.stderr);
    const emptied = await callRaw<BrainStatus>(server, 'brain_status');
    assert.deepEqual([emptied.entry_count, emptied.live_notices], [2, 0]);
  }));

test("brain_status warns when the server's AGENT_BUS_CHANNELS lacks the brain channel", () =>
  withServers(async ({ feed, open }) => {
    writeFeed(feed, FILES);
    const ops = await open({ AGENT_BUS_CHANNELS: 'ops,deploy' });
    await callRaw<Refreshed>(ops, 'brain_refresh');
    assert.ok((await callRaw<BrainStatus>(ops, 'brain_status')).warnings.includes(UNSUBSCRIBED));
    const legacy = await open({ AGENTIHOOKS_BASE_CHANNELS: 'amygdala' });
    assert.ok(
      (await callRaw<BrainStatus>(legacy, 'brain_status')).warnings.includes(`${UNSUBSCRIBED_PREFIX}amygdala, from the launch environment): it will not see the brain`),
      'AGENTIHOOKS_BASE_CHANNELS when AGENT_BUS_CHANNELS is unset',
    );
    for (const channels of ['brain', 'ops, brain', '*']) {
      const subscribed = await open({ AGENT_BUS_CHANNELS: channels });
      const warnings = (await callRaw<BrainStatus>(subscribed, 'brain_status')).warnings;
      assert.ok(!warnings.some((warning) => warning.includes('subscriptions')), `${channels}: ${JSON.stringify(warnings)}`);
    }
    const arcs = await open({ AGENT_BUS_CHANNELS: 'brain', BRAIN_CHANNEL: 'arcs' });
    assert.ok(
      (await callRaw<BrainStatus>(arcs, 'brain_status')).warnings.includes("BRAIN_CHANNEL 'arcs' is not in this session's subscriptions (brain, from the launch environment): it will not see the brain"),
      'the channel the brain is published on is what counts',
    );
  }));

test('brain_status in a server with no subscription settings at all (Codex passes AGENT_BUS_CHANNELS to its hooks only) does not claim the session misses the brain', () =>
  withServers(async ({ feed, open }) => {
    writeFeed(feed, FILES);
    const server = await open();
    await callRaw<Refreshed>(server, 'brain_refresh');
    const warnings = (await callRaw<BrainStatus>(server, 'brain_status')).warnings;
    // `agent-bus brain status` makes no claim when nothing sets them; the server should not either.
    assert.ok(!warnings.some((warning) => warning.startsWith(UNSUBSCRIBED_PREFIX)), JSON.stringify(warnings));
    // A Codex server is given neither the repo's default nor the user's settings: it cannot tell.
    const codex = await open({ AGENT_BUS_NAME: 'shop/codex' });
    const told = await callRaw<BrainStatus>(codex, 'brain_status');
    assert.deepEqual([told.subscriptions, told.subscriptions_layer, told.subscriptions_from], [null, null, null]);
  }));

test("brain_status of a Claude Code server reads its repo's settings files: settings.local.json over settings.json", () =>
  withServers(async ({ bus, feed, open }) => {
    writeFeed(feed, FILES);
    const repo = join(bus.dir, 'shop');
    mkdirSync(join(repo, '.claude'), { recursive: true });
    writeFileSync(join(repo, '.claude', 'settings.json'), JSON.stringify({ env: { AGENT_BUS_DEFAULT_CHANNELS: 'ops' } }));
    const server = await open({ AGENT_BUS_REPO: repo });
    await callRaw<Refreshed>(server, 'brain_refresh');
    const repoDefault = await callRaw<BrainStatus>(server, 'brain_status');
    assert.deepEqual([repoDefault.subscriptions, repoDefault.subscriptions_layer, repoDefault.subscriptions_from], [['ops'], 'repo', '.claude/settings.json']);
    assert.ok(repoDefault.warnings.includes(`${UNSUBSCRIBED_PREFIX}ops, from .claude/settings.json): it will not see the brain`), JSON.stringify(repoDefault.warnings));
    writeFileSync(join(repo, '.claude', 'settings.local.json'), JSON.stringify({ env: { AGENT_BUS_DEFAULT_CHANNELS: 'brain,ops' } }));
    const local = await callRaw<BrainStatus>(server, 'brain_status');
    assert.deepEqual([local.subscriptions, local.subscriptions_layer, local.subscriptions_from], [['brain', 'ops'], 'repo-local', '.claude/settings.local.json']);
    assert.ok(!local.warnings.some((warning) => warning.startsWith(UNSUBSCRIBED_PREFIX)));
    // Launched with a value of its own: that wins over both files.
    const launched = await open({ AGENT_BUS_REPO: repo, AGENT_BUS_CHANNELS: 'deploy' });
    const fromLaunch = await callRaw<BrainStatus>(launched, 'brain_status');
    assert.deepEqual([fromLaunch.subscriptions, fromLaunch.subscriptions_layer], [['deploy'], 'launch']);
  }));

test('brain_refresh with a missing folder: ok false with the error, the channel keeps its notices, brain_status says unreachable', () =>
  withServers(async ({ bus, feed, open }) => {
    writeFeed(feed, FILES);
    const server = await open({ AGENT_BUS_CHANNELS: 'brain' });
    const good = await callRaw<Refreshed>(server, 'brain_refresh');
    const before = notices(bus);
    assert.equal(before.length, 2);
    rmSync(feed, { recursive: true });

    const down = await callRaw<Refreshed>(server, 'brain_refresh');
    assert.deepEqual(Object.keys(down).sort(), REFRESH_KEYS);
    assert.equal(down.ok, false);
    assert.equal(down.channel, 'brain');
    assert.equal(down.error, `cannot read the brain folder ${feed}: ENOENT`);
    assert.deepEqual([down.added, down.removed, down.kept, down.cutByCap, down.contentHash], [[], 0, 0, 0, good.contentHash]);
    assert.deepEqual(notices(bus), before, 'the channel keeps its notices');

    const status = await callRaw<BrainStatus>(server, 'brain_status');
    assert.equal(status.last_error, down.error);
    assert.deepEqual([status.entry_count, status.live_notices, status.content_hash], [2, 2, good.contentHash]);
    assert.ok(status.last_ok_at !== null && status.last_fetch_at !== null && status.last_fetch_at > status.last_ok_at, JSON.stringify(status));
    assert.ok(status.warnings.includes(`the source is unreachable (${down.error}); the channel keeps its last good content`), JSON.stringify(status.warnings));

    // Back, and empty: that is an answer, and it clears the channel.
    mkdirSync(feed);
    const empty = await callRaw<Refreshed>(server, 'brain_refresh');
    assert.deepEqual([empty.ok, empty.entries, empty.removed, empty.contentHash], [true, 0, 2, null]);
    assert.deepEqual(notices(bus), []);
    const cleared = await callRaw<BrainStatus>(server, 'brain_status');
    assert.deepEqual([cleared.last_error, cleared.entry_count, cleared.live_notices], [null, 0, 0]);
    assert.ok(!cleared.warnings.some((warning) => warning.includes('unreachable')));
  }));

test("the server reads the bus folder's .env; its own environment wins", () =>
  withServers(async ({ bus, feed, open }) => {
    writeFeed(feed, { 'a.md': 'from the feed\n' });
    mkdirSync(bus.folder, { recursive: true });
    writeFileSync(join(bus.folder, '.env'), `BRAIN_CHANNEL=from-dotenv\nBRAIN_REFRESH_TOOL_CALLS=9\nBRAIN_SOURCE_PATH=${join(bus.dir, 'nowhere')}\n`);
    // open() puts BRAIN_SOURCE_PATH in the server env: it wins over the .env's.
    const server = await open();
    const result = await callRaw<Refreshed>(server, 'brain_refresh');
    assert.deepEqual([result.channel, result.ok, result.entries], ['from-dotenv', true, 1]);
    assert.equal(notices(bus, 'from-dotenv').length, 1);
    const status = await callRaw<BrainStatus>(server, 'brain_status');
    assert.deepEqual([status.channel, status.refresh_every_tool_calls, status.source_location], ['from-dotenv', 9, feed]);
    const overridden = await open({ BRAIN_CHANNEL: 'from-env' });
    assert.equal((await callRaw<BrainStatus>(overridden, 'brain_status')).channel, 'from-env');
  }));
