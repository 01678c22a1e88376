/**
 * The notice tools of the real MCP server (channel_publish, channel_list,
 * channel_acknowledge), spawned over stdio and driven with the official client
 * SDK; what they store is checked with the CLI and the hooks.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { CLI, json, readAudit, runCli, tempBus, type TempBus } from '../helpers/bus-env.js';
import { connect, type McpSession } from '../helpers/mcp.js';
import type { ChannelView, ListedNotice, NoticeView, PublishResult } from '../../src/core/notice-ops.js';
import { ttlOf } from '../helpers/notices.js';

type Notice = NoticeView;
type Published = PublishResult;
type Listed = ListedNotice;
type ChannelCount = Omit<ChannelView, 'last_expiry'>;

interface Acknowledged extends Notice {
  acknowledged: boolean;
  session: string;
}

async function withServers(work: (bus: TempBus, open: (env: NodeJS.ProcessEnv) => Promise<McpSession>) => Promise<void>): Promise<void> {
  const bus = tempBus();
  const sessions: McpSession[] = [];
  try {
    await work(bus, async (env) => {
      const session = await connect(env);
      sessions.push(session);
      return session;
    });
  } finally {
    for (const session of sessions) await session.close().catch(() => undefined);
    bus.cleanup();
  }
}

/** A Claude Code server: its session id is in its environment. */
function claudeEnv(bus: TempBus, sessionId: string | null): NodeJS.ProcessEnv {
  return {
    ...bus.env,
    AGENT_BUS_NAME: 'repo-a/claude',
    AGENT_BUS_REPO: '/repos/a',
    ...(sessionId === null ? {} : { CLAUDE_CODE_SESSION_ID: sessionId }),
  };
}

function storedNotices(bus: TempBus): Listed[] {
  return json<Listed[]>(runCli(['channel', 'list', '--notices', '--json'], { env: bus.env }));
}

function noticeEvents(bus: TempBus, event: string): Array<Record<string, unknown>> {
  return readAudit(bus.audit).filter((row) => row.op === 'notice' && row.notice_event === event);
}

/** Run the prompt hook as a client would: a fresh process, the payload on stdin. */
function promptHook(env: NodeJS.ProcessEnv, client: string, payload: unknown): string {
  const result = spawnSync(process.execPath, [CLI, 'hook-user-prompt', '--client', client], {
    env,
    cwd: env.HOME,
    input: JSON.stringify(payload),
    encoding: 'utf8',
    timeout: 30_000,
  });
  assert.equal(result.status, 0, result.stderr);
  assert.equal(result.stderr, '');
  return result.stdout;
}

test('the tool list has the three notice tools, described', () =>
  withServers(async (bus, open) => {
    const server = await open({ ...bus.env, AGENT_BUS_NAME: 'alpha', AGENT_BUS_REPO: '/repos/alpha' });
    const tools = (await server.client.listTools()).tools;
    const names = tools.map((tool) => tool.name);
    for (const name of ['channel_publish', 'channel_list', 'channel_acknowledge']) assert.ok(names.includes(name), `${name} in ${names.join(', ')}`);
    const publish = tools.find((tool) => tool.name === 'channel_publish');
    assert.deepEqual(Object.keys(publish?.inputSchema.properties ?? {}).sort(), ['channel', 'message', 'severity', 'ttl']);
    assert.deepEqual(publish?.inputSchema.required, ['message']);
    const acknowledge = tools.find((tool) => tool.name === 'channel_acknowledge');
    assert.deepEqual(acknowledge?.inputSchema.required, ['message_id']);
  }));

test('channel_publish: on a channel and global, with TTLs as text and as seconds, attributed to the server', () =>
  withServers(async (bus, open) => {
    const server = await open({ ...bus.env, AGENT_BUS_NAME: 'alpha', AGENT_BUS_REPO: '/repos/alpha' });
    const me = (await server.call<{ name: string }>('whoami')).name;
    assert.equal(me, 'alpha');

    const onChannel = await server.call<Published>('channel_publish', { channel: 'ops', message: 'DB replica lag > 5s', severity: 'alert', ttl: '30m' });
    assert.match(onChannel.notice_id, /^[0-9a-f]{12}$/);
    assert.deepEqual(
      [onChannel.channel, onChannel.severity, onChannel.message, onChannel.source, onChannel.priority, onChannel.title, onChannel.evicted],
      ['ops', 'alert', 'DB replica lag > 5s', 'alpha', 5, null, []],
    );
    assert.equal(ttlOf(onChannel), 1800, "ttl '30m'");

    const global = await server.call<Published>('channel_publish', { channel: '', message: 'deploy freeze', ttl: 600 });
    assert.equal(global.channel, null, 'an empty channel is a global notice');
    assert.equal(global.severity, 'info', 'severity defaults to info');
    assert.equal(global.source, 'alpha');
    assert.equal(ttlOf(global), 600, 'ttl as a number of seconds');

    const omitted = await server.call<Published>('channel_publish', { message: 'no channel given' });
    assert.deepEqual([omitted.channel, omitted.severity, ttlOf(omitted)], [null, 'info', 14_400], 'channel omitted: global, info, the info default TTL');

    const critical = await server.call<Published>('channel_publish', { channel: 'deploy', message: 'stop merging', severity: 'critical' });
    assert.equal(ttlOf(critical), 1800, 'the critical default TTL');
    const textSeconds = await server.call<Published>('channel_publish', { channel: 'ops', message: 'ninety', ttl: '90' });
    assert.equal(ttlOf(textSeconds), 90, 'plain seconds as text');

    // The structured content carries the same value as the text.
    const raw = await server.client.callTool({ name: 'channel_publish', arguments: { channel: 'ops', message: 'structured', ttl: '1h' } });
    const text = JSON.parse((raw.content as Array<{ text: string }>)[0]?.text ?? '{}') as Published;
    assert.deepEqual(raw.structuredContent, text);

    const stored = storedNotices(bus);
    const byId = new Map(stored.map((row) => [row.notice_id, row]));
    for (const published of [onChannel, global, omitted, critical, textSeconds, text]) {
      const row = byId.get(published.notice_id);
      assert.ok(row, `stored: ${published.message}`);
      const { evicted: _evicted, ...view } = published;
      assert.deepEqual({ ...row, delivered_to: undefined, acknowledged_by: undefined }, { ...view, delivered_to: undefined, acknowledged_by: undefined });
    }
    assert.equal(stored.length, 6);
    assert.deepEqual(
      noticeEvents(bus, 'publish').map((row) => [row.message_id, row.actor]),
      [onChannel, global, omitted, critical, textSeconds, text].map((published) => [published.notice_id, 'alpha']),
      'each publish audited once, by the server',
    );
  }));

test('channel_publish: bad input is a tool error and nothing is stored', () =>
  withServers(async (bus, open) => {
    const server = await open({ ...bus.env, AGENT_BUS_NAME: 'alpha', AGENT_BUS_REPO: '/repos/alpha' });
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ channel: 'ops', message: 'x', severity: 'loud' }, /severity/],
      [{ channel: 'ops', message: '' }, /message/],
      [{ channel: 'ops', message: '   ' }, /^message must be non-empty; nothing was published$/],
      [{ channel: 'ops', message: 'x', ttl: '5x' }, /^bad TTL '5x' \('x' is no unit\): use seconds \(90\), or numbers with s, m, h, d or w/],
      [{ channel: 'ops', message: 'x', ttl: '31d' }, /^bad TTL '31d': the longest is 30d$/],
      [{ channel: 'ops', message: 'x', ttl: '0' }, /^bad TTL '0': it must be more than nothing$/],
      [{ channel: 'ops', message: 'x', ttl: 0 }, /^bad TTL '0': it must be a positive whole number of seconds$/],
      [{ channel: 'ops', message: 'x', ttl: -5 }, /^bad TTL '-5'/],
      [{ channel: 'ops', message: 'x', ttl: 1.5 }, /ttl/],
      [{ channel: 'bad name', message: 'x' }, /^bad channel 'bad name': use up to 64 letters/],
      [{ channel: '*', message: 'x' }, /^bad channel '\*'/],
      [{ channel: '.hidden', message: 'x' }, /^bad channel '\.hidden'/],
      [{ channel: 'c'.repeat(65), message: 'x' }, /^bad channel 'c{65}'/],
    ];
    for (const [args, message] of cases) assert.match(await server.fails('channel_publish', args), message, JSON.stringify(args));
    assert.deepEqual(storedNotices(bus), []);
    assert.deepEqual(noticeEvents(bus, 'publish'), []);
    // The server keeps serving after the errors.
    assert.equal((await server.call<Published>('channel_publish', { channel: 'ops', message: 'fine' })).channel, 'ops');
    assert.equal(storedNotices(bus).length, 1);
  }));

test('channel_list: channels with their counts by severity, global as channel null', () =>
  withServers(async (bus, open) => {
    const server = await open({ ...bus.env, AGENT_BUS_NAME: 'alpha', AGENT_BUS_REPO: '/repos/alpha' });
    assert.deepEqual(await server.call('channel_list'), { channels: [], total: 0 });
    await server.call('channel_publish', { channel: 'ops', message: 'one', severity: 'critical' });
    await server.call('channel_publish', { channel: 'ops', message: 'two', severity: 'alert' });
    await server.call('channel_publish', { channel: 'ops', message: 'three', severity: 'alert' });
    await server.call('channel_publish', { channel: 'brain', message: 'hot arcs' });
    await server.call('channel_publish', { message: 'everyone' });
    const listed = await server.call<{ channels: ChannelCount[]; total: number }>('channel_list');
    const counts = (channel: string | null) => {
      const row = listed.channels.find((item) => item.channel === channel);
      return row && [row.total, row.critical, row.alert, row.info];
    };
    assert.equal(listed.channels.length, 3);
    assert.deepEqual(counts('ops'), [3, 1, 2, 0]);
    assert.deepEqual(counts('brain'), [1, 0, 0, 1]);
    assert.deepEqual(counts(null), [1, 0, 0, 1]);
    assert.equal(listed.total, 5);
    assert.deepEqual(listed.channels, json(runCli(['channel', 'list', '--json'], { env: bus.env })), 'the same rows the CLI lists');
  }));

test('channel_acknowledge with CLAUDE_CODE_SESSION_ID: silenced for that session only', () =>
  withServers(async (bus, open) => {
    const server = await open(claudeEnv(bus, 'sess-ack'));
    const me = (await server.call<{ name: string }>('whoami')).name;
    const published = await server.call<Published>('channel_publish', { channel: 'ops', message: 'replica lag', severity: 'alert' });
    assert.equal(published.source, me, "the source is the server's own name");

    const hookEnv = { ...bus.env, AGENT_BUS_NAME: 'repo-a/claude', AGENT_BUS_REPO: '/repos/a', AGENT_BUS_CHANNELS: 'brain, ops' };
    const seen = (sessionId: string): boolean => promptHook(hookEnv, 'claude', { session_id: sessionId, cwd: '/repos/a' }).includes(`id ${published.notice_id}: replica lag`);
    assert.equal(seen('sess-ack'), true, 'an alert shows at every turn until acknowledged');
    assert.equal(seen('sess-ack'), true, 'still there the next turn');

    const acknowledged = await server.call<Acknowledged>('channel_acknowledge', { message_id: published.notice_id });
    assert.deepEqual([acknowledged.notice_id, acknowledged.acknowledged, acknowledged.session], [published.notice_id, true, 'sess-ack']);
    assert.equal(acknowledged.message, 'replica lag');

    assert.equal(seen('sess-ack'), false, 'that session no longer sees it');
    assert.equal(seen('sess-other'), true, 'another session still does');
    assert.equal(storedNotices(bus)[0]?.acknowledged_by, 1);
    assert.deepEqual(noticeEvents(bus, 'acknowledge').map((row) => [row.message_id, row.actor]), [[published.notice_id, 'sess-ack']]);
  }));

test('channel_acknowledge without a session id or thread id: an error that says so, nothing written', () =>
  withServers(async (bus, open) => {
    const server = await open(claudeEnv(bus, null));
    const published = await server.call<Published>('channel_publish', { channel: 'ops', message: 'lag', severity: 'alert' });
    const error = await server.fails('channel_acknowledge', { message_id: published.notice_id });
    assert.match(error, /does not know its client's session id \(no CLAUDE_CODE_SESSION_ID and no Codex thread id\)/);
    assert.match(error, /pass session_id/);
    assert.equal(storedNotices(bus)[0]?.acknowledged_by, 0);
    assert.deepEqual(noticeEvents(bus, 'acknowledge'), []);
    // Named explicitly (as the Python server's session_id argument did), it works, and wins over the environment.
    const named = await server.call<Acknowledged>('channel_acknowledge', { message_id: published.notice_id, session_id: 'sess-named' });
    assert.deepEqual([named.acknowledged, named.session], [true, 'sess-named']);
    assert.deepEqual(noticeEvents(bus, 'acknowledge').map((row) => row.actor), ['sess-named']);
  }));

test("channel_acknowledge with a Codex thread id in the call's _meta: acknowledged for that thread", () =>
  withServers(async (bus, open) => {
    const server = await open({ ...bus.env, AGENT_BUS_NAME: 'repo-b/codex', AGENT_BUS_REPO: '/repos/b', AGENT_BUS_CLIENT: 'codex' });
    const publishedRaw = await server.client.callTool({ name: 'channel_publish', arguments: { channel: 'ops', message: 'freeze', severity: 'alert' }, _meta: { threadId: 'thread-a' } });
    assert.ok(!publishedRaw.isError, JSON.stringify(publishedRaw.content));
    const published = publishedRaw.structuredContent as unknown as Published;

    const result = await server.client.callTool({ name: 'channel_acknowledge', arguments: { message_id: published.notice_id }, _meta: { threadId: 'thread-a' } });
    assert.ok(!result.isError, JSON.stringify(result.content));
    const acknowledged = result.structuredContent as unknown as Acknowledged;
    assert.deepEqual([acknowledged.notice_id, acknowledged.acknowledged, acknowledged.session], [published.notice_id, true, 'thread-a']);
    assert.equal(storedNotices(bus)[0]?.acknowledged_by, 1);
    assert.deepEqual(noticeEvents(bus, 'acknowledge').map((row) => row.actor), ['thread-a']);

    // The thread's prompt hook (Codex sends its thread id as the payload's session id) no longer shows it; another thread's does.
    const hookEnv = { ...bus.env, AGENT_BUS_NAME: 'repo-b/codex', AGENT_BUS_REPO: '/repos/b', AGENT_BUS_CHANNELS: 'ops' };
    const seen = (threadId: string): boolean => promptHook(hookEnv, 'codex', { session_id: threadId, cwd: '/repos/b' }).includes(`id ${published.notice_id}: freeze`);
    assert.equal(seen('thread-a'), false);
    assert.equal(seen('thread-b'), true);

    // A second acknowledgement from another thread is that thread's own.
    const other = await server.client.callTool({ name: 'channel_acknowledge', arguments: { message_id: published.notice_id }, _meta: { threadId: 'thread-b' } });
    assert.equal((other.structuredContent as unknown as Acknowledged).session, 'thread-b');
    assert.equal(storedNotices(bus)[0]?.acknowledged_by, 2);
  }));

test('channel_acknowledge: an unknown id is an error and nothing is written', () =>
  withServers(async (bus, open) => {
    const server = await open(claudeEnv(bus, 'sess-1'));
    await server.call('channel_publish', { channel: 'ops', message: 'real one' });
    assert.equal(await server.fails('channel_acknowledge', { message_id: 'nope' }), "no notice with id 'nope' (it may have expired or been cleared)");
    assert.match(await server.fails('channel_acknowledge', { message_id: '' }), /message_id/);
    assert.match(await server.fails('channel_acknowledge', { message_id: '   ' }), /^message_id must be non-empty$/);
    assert.equal(storedNotices(bus)[0]?.acknowledged_by, 0);
    assert.deepEqual(noticeEvents(bus, 'acknowledge'), []);
  }));
