/**
 * `POST /v1/call`: the operations the remote CLI needs beyond the MCP tools,
 * as `{op, args}`, each done for the token's agent and no one else. What only
 * the hub's own machine may do (clearing notices for everyone, forgetting
 * another agent) is refused with 403.
 */
import { tailAudit } from '../audit/log.js';
import { brainSettings } from '../brain/settings.js';
import { brainStatus } from '../brain/status.js';
import { refreshBrain } from '../brain/refresh.js';
import type { Bus } from '../core/bus.js';
import { clientAddressOf } from '../core/names.js';
import { receivedCounts } from '../core/notice-ops.js';
import type { Env } from '../core/settings.js';
import { BusError, InvalidInputError } from '../model/errors.js';
import type { TokenRecord } from '../model/records.js';
import { hubSpeaker } from './hub-session.js';
import { sessionKeyArg } from './request-args.js';
import { quoted } from '../model/quote.js';

/** A valid token asking for what it may not. */
export class ForbiddenError extends BusError {}

export interface CallContext {
  bus: Bus;
  env: Env;
  auditPath: string;
  token: TokenRecord;
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

const OPS: Record<string, (context: CallContext, args: Args) => Promise<unknown>> = {
  'notices.publish': ({ bus, token }, args) =>
    bus.notices.publish(
      {
        message: text(args, 'message', true) as string,
        channel: text(args, 'channel') ?? null,
        severity: text(args, 'severity') ?? null,
        ttl: typeof args.ttl === 'number' ? args.ttl : (text(args, 'ttl') ?? null),
        title: text(args, 'title') ?? null,
        priority: typeof args.priority === 'number' ? args.priority : (text(args, 'priority') ?? null),
        // A remote publisher is its token's agent, whatever it says.
        source: token.agent,
      },
      token.agent,
    ),
  'notices.channels': ({ bus }) => bus.notices.channels(),
  'notices.list': ({ bus }, args) => {
    const channel = text(args, 'channel');
    return bus.notices.list({ ...(channel === undefined ? {} : { channel }), includeExpired: args.includeExpired === true });
  },
  'notices.acknowledge': ({ bus }, args) => bus.notices.acknowledge(text(args, 'noticeId', true) as string, text(args, 'session', true) as string),
  'notices.clear': async () => {
    throw new ForbiddenError("clearing notices for everyone is done on the hub's own machine (agent-bus channel clear there)");
  },
  'brain.status': ({ bus, env }) => brainStatus(bus, brainSettings(env), null),
  'brain.refresh': async ({ bus, env }) => {
    const settings = brainSettings(env);
    return { channel: settings.channel, ...(await refreshBrain(bus, settings)) };
  },
  'audit.tail': async ({ auditPath }, args) => {
    const limit = typeof args.limit === 'number' && Number.isInteger(args.limit) ? Math.min(10_000, Math.max(0, args.limit)) : 50;
    return tailAudit(auditPath, limit);
  },
  'mail.recent': ({ bus }, args) => bus.recentMessages(typeof args.limit === 'number' && Number.isInteger(args.limit) ? Math.min(10_000, Math.max(0, args.limit)) : 10),
  'mail.threadIds': ({ bus }, args) => bus.threadIdsStartingWith(text(args, 'prefix', true) as string, typeof args.limit === 'number' && Number.isInteger(args.limit) ? Math.min(100, Math.max(0, args.limit)) : 10),
  'status.counts': async ({ bus, env, token }, args) => {
    // The subscriptions are the asking machine's setting: it says them, the hub counts.
    const given = (args.subscriptions ?? {}) as { all?: unknown; channels?: unknown };
    const channels = Array.isArray(given.channels) ? given.channels.filter((channel): channel is string => typeof channel === 'string').slice(0, 200) : [];
    const subscriptions = { all: given.all === true, channels };
    // A client address's session counts the mail of the session address its session id holds.
    const reader = (await hubSpeaker(bus, env, token, sessionKeyArg(args.session_key)))?.name ?? token.agent;
    return { name: reader, pending_mail: await bus.pendingCount(reader), notices: receivedCounts(await bus.notices.channels(), subscriptions) };
  },
  'roster.forget': async ({ bus, token }, args) => {
    const name = text(args, 'name', true) as string;
    if (!ownName(token, name)) throw new ForbiddenError(`this token speaks for ${quoted(token.agent)}: it may forget only that name and its sessions, not ${quoted(name)}`);
    return bus.forget(name);
  },
};

export async function callOperation(context: CallContext, body: unknown): Promise<unknown> {
  const request = (body ?? {}) as { op?: unknown; args?: unknown };
  const op = typeof request.op === 'string' ? OPS[request.op] : undefined;
  if (op === undefined || !Object.hasOwn(OPS, request.op as string)) throw new InvalidInputError(`unknown op: the hub offers ${Object.keys(OPS).join(', ')}`);
  const args = request.args !== null && typeof request.args === 'object' && !Array.isArray(request.args) ? (request.args as Args) : {};
  return op(context, args);
}
