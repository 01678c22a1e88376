/**
 * `POST /v1/call`: the operations the remote CLI needs beyond the MCP tools,
 * as `{op, args}`, each done for the token's agent and no one else. What only
 * the hub's own machine may do (clearing notices for everyone, forgetting
 * another agent) is refused with 403.
 */
import { tailAudit } from '../../audit/log.js';
import { brainSettings } from '../../brain/settings.js';
import { brainStatus } from '../../brain/status.js';
import { refreshBrain } from '../../brain/refresh.js';
import type { Bus } from '../../core/bus.js';
import { clientAddressOf, repoOf } from '../../core/names.js';
import { sessionStatus } from '../../core/session-status.js';
import type { Env } from '../../model/settings.js';
import { InvalidInputError } from '../../model/errors.js';
import { ForbiddenError } from '../errors.js';
import type { TokenRecord } from '../../model/records.js';
import { FLEET_OPS } from './fleet-calls.js';
import { hubSpeaker } from './hub-session.js';
import { repoFilesArg, sessionKeyArg } from './request-args.js';
import { quoted } from '../../model/quote.js';
import type { CallArgs, CallName, CallResult, NoArgs } from '../../protocol/hub.js';
import type { MessageView } from '../../core/views.js';
import { lookForNudge, NUDGE_LOOKAHEAD } from '../../wake/socket-wake.js';
import { wakesPerHour } from '../../wake/dispatch.js';
import { viewRecord } from '../../wake/native.js';

export interface CallContext {
  bus: Bus;
  env: Env;
  auditPath: string;
  token: TokenRecord;
  /** The handle the asking agent's name pins for a conversation not yet held (pinnedHandle). */
  pinned?: string | null;
}

type Args = Record<string, unknown>;

function text(args: Args, key: string, required = false): string | undefined {
  const value = args[key];
  if (value === undefined || value === null) {
    if (required) throw new InvalidInputError(`${key} is required`);
    return undefined;
  }
  if (typeof value !== 'string' || value.length > 100_000) throw new InvalidInputError(`${key} must be text`);
  return value;
}

function ownName(token: TokenRecord, name: string): boolean {
  return name === token.agent || clientAddressOf(name) === token.agent;
}

const limitOf = (args: Args, fallback: number, max: number): number => (typeof args.limit === 'number' && Number.isInteger(args.limit) ? Math.min(max, Math.max(0, args.limit)) : fallback);

/** One call: its arguments checked from the request's JSON (a bad one is a 400), and what it does. */
export interface Operation<K extends CallName> {
  parse(args: Args): CallArgs<K>;
  run(context: CallContext, args: CallArgs<K>): Promise<CallResult<K>>;
}

const none = (): NoArgs => ({});

/** Every call of the protocol's map, each done for the token's agent and no one else. */
const OPS: { [K in CallName]: Operation<K> } = {
  'notices.publish': {
    parse: (args) => ({
      message: text(args, 'message', true) as string,
      channel: text(args, 'channel') ?? null,
      severity: text(args, 'severity') ?? null,
      ttl: typeof args.ttl === 'number' ? args.ttl : (text(args, 'ttl') ?? null),
      title: text(args, 'title') ?? null,
      priority: typeof args.priority === 'number' ? args.priority : (text(args, 'priority') ?? null),
    }),
    // A remote publisher is its token's agent, whatever it says.
    run: ({ bus, token }, request) => bus.notices.publish({ ...request, source: token.agent }, token.agent),
  },
  'notices.channels': { parse: none, run: ({ bus }) => bus.notices.channels() },
  'notices.list': {
    parse: (args) => {
      const channel = text(args, 'channel');
      return { ...(channel === undefined ? {} : { channel }), includeExpired: args.includeExpired === true };
    },
    run: ({ bus }, options) => bus.notices.list(options),
  },
  'notices.acknowledge': {
    parse: (args) => ({ noticeId: text(args, 'noticeId', true) as string, session: text(args, 'session', true) as string }),
    run: ({ bus }, { noticeId, session }) => bus.notices.acknowledge(noticeId, session),
  },
  'notices.clear': {
    parse: () => ({}),
    run: async () => {
      throw new ForbiddenError("clearing notices for everyone is done on the hub's own machine (agent-bus channel clear there)");
    },
  },
  'brain.status': { parse: none, run: ({ bus, env }) => brainStatus(bus, brainSettings(env), null) },
  'brain.refresh': {
    parse: none,
    run: async ({ bus, env }) => {
      const settings = brainSettings(env);
      return { channel: settings.channel, ...(await refreshBrain(bus, settings)) };
    },
  },
  'audit.tail': { parse: (args) => ({ limit: limitOf(args, 50, 10_000) }), run: async ({ auditPath }, { limit }) => tailAudit(auditPath, limit ?? 50) },
  'mail.recent': { parse: (args) => ({ limit: limitOf(args, 10, 10_000) }), run: ({ bus }, { limit }) => bus.mail.recent(limit) },
  'mail.threadIds': {
    parse: (args) => ({ prefix: text(args, 'prefix', true) as string, limit: limitOf(args, 10, 100) }),
    run: ({ bus }, { prefix, limit }) => bus.mail.threadIdsStartingWith(prefix, limit),
  },
  'status.counts': {
    parse: (args) => {
      // The subscriptions are the asking machine's setting: it says them, the hub counts.
      const given = (args.subscriptions ?? {}) as { all?: unknown; channels?: unknown };
      const channels = Array.isArray(given.channels) ? given.channels.filter((channel): channel is string => typeof channel === 'string').slice(0, 200) : [];
      return { subscriptions: { all: given.all === true, channels }, session_key: sessionKeyArg(args.session_key) };
    },
    run: async (context, { subscriptions, session_key }) => {
      // A client address's session counts the mail of the session address its session id holds.
      return sessionStatus(context.bus, await readerOf(context, session_key), subscriptions);
    },
  },
  'roster.forget': {
    parse: (args) => ({ name: text(args, 'name', true) as string }),
    run: async ({ bus, token }, { name }) => {
      if (!ownName(token, name)) throw new ForbiddenError(`this token speaks for ${quoted(token.agent)}: it may forget only that name and its sessions, not ${quoted(name)}`);
      return bus.roster.forget(name);
    },
  },
  'reservations.check': {
    parse: (args) => ({ files: repoFilesArg(args.files, 'files'), session_key: sessionKeyArg(args.session_key), refuse: args.refuse === true }),
    run: async (context, { files, session_key, refuse }) => {
      // The token's agent, or the session of it its session id holds, in the token's own repo.
      const speaker = await readerOf(context, session_key);
      return context.bus.reservations.checkCommit(speaker, async () => speaker, repoOf(context.token.agent), files, refuse);
    },
  },
  'wake.look': {
    parse: (args) => ({ session_key: sessionKeyArg(args.session_key) }),
    run: async (context, { session_key }) => lookForNudge(context.bus, await readerOf(context, session_key)),
  },
  'wake.claim': {
    parse: (args) => ({ session_key: sessionKeyArg(args.session_key), message_id: text(args, 'message_id', true) as string }),
    run: async (context, { session_key, message_id }) => {
      const waiting = await waitingMessage(context, await readerOf(context, session_key), message_id);
      return waiting !== null && context.bus.wakes.claimSharedNudge(message_id);
    },
  },
  'wake.allow': {
    parse: (args) => ({ session_key: sessionKeyArg(args.session_key) }),
    // The hub's own limit: the asking machine cannot raise it.
    run: async (context, { session_key }) => context.bus.wakes.count(await readerOf(context, session_key), context.bus.clock.nowMicros(), wakesPerHour(context.env)),
  },
  'wake.note': {
    parse: (args) => {
      const status = text(args, 'status', true);
      if (status !== 'posted' && status !== 'refused' && status !== 'rate-limited') throw new InvalidInputError('status must be posted, refused or rate-limited');
      return { session_key: sessionKeyArg(args.session_key), message_id: text(args, 'message_id', true) as string, status };
    },
    run: async (context, { session_key, message_id, status }) => {
      const reader = await readerOf(context, session_key);
      const message = await postedMessage(context, reader, message_id);
      if (message === null) return false;
      context.bus.wakes.notePosted(reader, viewRecord(message), status, context.bus.clock.nowMicros());
      return true;
    },
  },
  ...FLEET_OPS,
  'wake.watch': {
    parse: (args) => {
      const state = text(args, 'state', true);
      if (state !== 'socket' && state !== 'refused' && state !== 'stopped') throw new InvalidInputError('state must be socket, refused or stopped');
      const watcher = text(args, 'watcher', true) as string;
      if (watcher.length > 200) throw new InvalidInputError('watcher must be a short id');
      return { session_key: sessionKeyArg(args.session_key), watcher, state, note: (text(args, 'note') ?? '').slice(0, 500) || null };
    },
    run: async (context, { session_key, watcher, state, note }) => {
      const reader = await readerOf(context, session_key);
      // One row per token and conversation; its process is on another machine (pid 0): it lives while it is said again.
      const session = `socket:hub:${context.token.tokenId}:${session_key ?? '-'}`;
      if (state === 'socket') await context.bus.wakes.startWatching(session, watcher, 0, reader, 'socket');
      else if (state === 'refused') await context.bus.wakes.giveUpSocket(session, watcher, note ?? 'the socket refused the post');
      else await context.bus.wakes.stopWatching(session, watcher);
      return { reader };
    },
  },
};

/** The name a call about a conversation is about: the session the conversation id holds, else the token's agent. */
async function readerOf({ bus, env, token, pinned }: CallContext, sessionKey: string | null): Promise<string> {
  return (await hubSpeaker(bus, env, token, sessionKey, null, pinned ?? null))?.name ?? token.agent;
}

/** The message, when it is among the oldest mail waiting for `reader`: a relay may name no other. */
async function waitingMessage({ bus }: CallContext, reader: string, messageId: string): Promise<MessageView | null> {
  return (await bus.inbox.read({ reader, markRead: false, limit: NUDGE_LOOKAHEAD, via: null })).find((message) => message.message_id === messageId) ?? null;
}

/**
 * The message a post woke the session for: waiting still, or already taken by the turn the post began
 * (a prompt hook its server answers can take it before the post is noted), as long as it is the reader's.
 */
async function postedMessage(context: CallContext, reader: string, messageId: string): Promise<MessageView | null> {
  const waiting = await waitingMessage(context, reader, messageId);
  if (waiting !== null) return waiting;
  let threadId: string;
  try {
    threadId = (await context.bus.receipts.status(messageId, reader)).thread_id;
  } catch {
    return null; // Not a message of the reader's.
  }
  return (await context.bus.mail.thread(threadId, 1_000)).find((message) => message.message_id === messageId) ?? null;
}

/** Parse and run one call: its arguments are checked before anything is done. */
function perform<K extends CallName>(op: Operation<K>, context: CallContext, args: Args): Promise<CallResult<K>> {
  return op.run(context, op.parse(args));
}

export async function callOperation(context: CallContext, body: unknown): Promise<CallResult<CallName>> {
  const request = (body ?? {}) as { op?: unknown; args?: unknown };
  if (typeof request.op !== 'string' || !Object.hasOwn(OPS, request.op)) throw new InvalidInputError(`unknown op: the hub offers ${Object.keys(OPS).join(', ')}`);
  const args = request.args !== null && typeof request.args === 'object' && !Array.isArray(request.args) ? (request.args as Args) : {};
  return perform(OPS[request.op as CallName] as Operation<CallName>, context, args);
}
