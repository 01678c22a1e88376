/** `agent-bus channel publish|list|acknowledge|clear`: notices on named channels. */
import { openClient } from '../../connect.js';
import { parseChannel } from '../../core/notices.js';
import { UsageError } from '../args.js';
import { channelTable, noticeTable } from '../notice-output.js';
import { publishFromArgs } from '../publish-notice.js';
import { makeStyle } from '../../render/style.js';
import type { CommandIo, CommandRunner, ParsedArgs } from '../spec.js';
import type { NoticeDesk } from '../../client/bus-client.js';
import { quoted } from '../../model/quote.js';

const ACTIONS = ['publish', 'list', 'acknowledge', 'clear'];

function text(value: string | boolean | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function expectArgs(action: string, rest: string[], names: string[], optional = 0): void {
  const min = names.length - optional;
  if (rest.length < min) throw new UsageError(`channel ${action}: missing ${names[rest.length]}. See 'agent-bus channel --help'.`);
  if (rest.length > names.length) {
    throw new UsageError(`channel ${action}: unexpected argument ${quoted(rest[names.length])} (quote ${names.at(-1)} if it has spaces). See 'agent-bus channel --help'.`);
  }
}

/** A channel named on the command line: an empty name is a mistake here, not the global notices. */
function namedChannel(raw: string, action: string): string {
  const channel = parseChannel(raw);
  if (channel === null) throw new UsageError(`channel ${action}: the channel name is empty (global notices: use --global${action === 'list' ? ' with clear, or list without a channel' : ''})`);
  return channel;
}

async function publish(notices: NoticeDesk, args: ParsedArgs, rest: string[], io: CommandIo): Promise<number> {
  if (rest.length < 2) expectArgs('publish', rest, ['CHANNEL', 'MESSAGE']);
  // MESSAGE... : the words after the channel are the message, as the Python CLI took them.
  const [channel = '', ...words] = rest;
  if (channel.trim() === '') throw new UsageError("channel publish: CHANNEL is empty; use 'agent-bus notice' for a global notice");
  return publishFromArgs(notices, channel, words.join(' '), args, io, 'channel publish');
}

async function list(notices: NoticeDesk, args: ParsedArgs, rest: string[], io: CommandIo): Promise<number> {
  expectArgs('list', rest, ['CHANNEL'], 1);
  const json = Boolean(args.values.json);
  // --expired is about notices, so it lists them (the channel counts are of live notices only).
  if (rest.length === 0 && !args.values.notices && !args.values.expired) {
    const channels = await notices.channels();
    io.stdout.write(json ? `${JSON.stringify(channels)}\n` : channelTable(channels));
    return 0;
  }
  const filter = rest.length === 1 ? { channel: namedChannel(rest[0] as string, 'list') } : {};
  const listed = await notices.list({ ...filter, includeExpired: Boolean(args.values.expired) });
  io.stdout.write(json ? `${JSON.stringify(listed)}\n` : noticeTable(listed, await makeStyle(io.stdout, io.env)));
  return 0;
}

async function acknowledge(notices: NoticeDesk, args: ParsedArgs, rest: string[], io: CommandIo): Promise<number> {
  expectArgs('acknowledge', rest, ['ID']);
  const session = text(args.values.session) ?? '';
  if (session.trim() === '') {
    throw new UsageError('channel acknowledge: --session KEY is required (the client session id whose notices to silence, e.g. $CLAUDE_CODE_SESSION_ID)');
  }
  const notice = await notices.acknowledge(rest[0] as string, session.trim());
  if (args.values.json) io.stdout.write(`${JSON.stringify({ ...notice, acknowledged: true, session: session.trim() })}\n`);
  else io.stdout.write(`acknowledged ${notice.notice_id} for session ${session.trim()}: it will not be shown to that session again\n`);
  return 0;
}

async function clear(notices: NoticeDesk, args: ParsedArgs, rest: string[], io: CommandIo): Promise<number> {
  expectArgs('clear', rest, ['ID'], 1);
  const byChannel = text(args.values.channel);
  const targets = [rest.length === 1, byChannel !== undefined, Boolean(args.values.global), Boolean(args.values.all)].filter(Boolean).length;
  if (targets !== 1) throw new UsageError('channel clear: give exactly one of ID, --channel NAME, --global or --all');
  let removed;
  if (rest.length === 1) {
    removed = await notices.clear({ noticeId: rest[0] as string });
    if (removed.length === 0) throw new UsageError(`channel clear: no notice with id ${quoted(rest[0])}`);
  } else if (byChannel !== undefined) removed = await notices.clear({ channel: namedChannel(byChannel, 'clear') });
  else if (args.values.global) removed = await notices.clear({ channel: null });
  else removed = await notices.clear({ all: true });
  if (args.values.json) io.stdout.write(`${JSON.stringify({ cleared: removed.length, notice_ids: removed.map((notice) => notice.notice_id) })}\n`);
  else io.stdout.write(`cleared ${removed.length} notice${removed.length === 1 ? '' : 's'}\n`);
  return 0;
}

export const run: CommandRunner = async (args, io) => {
  const [action, ...rest] = args.positionals;
  if (action === undefined || !ACTIONS.includes(action)) {
    const got = action === undefined ? 'an action' : quoted(action);
    throw new UsageError(`channel: expected ${ACTIONS.join(', ')}, got ${got}. See 'agent-bus channel --help'.`);
  }
  const client = openClient(io.env, { cwd: io.cwd, as: null });
  const { notices } = client;
  try {
    switch (action) {
      case 'publish':
        return await publish(notices, args, rest, io);
      case 'list':
        return await list(notices, args, rest, io);
      case 'acknowledge':
        return await acknowledge(notices, args, rest, io);
      default:
        return await clear(notices, args, rest, io);
    }
  } finally {
    await client.close();
  }
};
