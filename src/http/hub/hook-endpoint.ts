/**
 * `POST /v1/hook`: a remote machine's hook, answered here for the token's agent.
 * The request says which hook, for which client's dialect, the client's session
 * id (which session of a client address's token it is) and what the session
 * subscribes to; never who is asking.
 */
import type { Bus } from '../../core/bus.js';
import type { PendingDelivery } from '../../core/inbox-ops.js';
import { registrationsFor } from '../../core/roster.js';
import type { Env } from '../../model/settings.js';
import type { Subscriptions } from '../../core/subscriptions.js';
import { answerHook, type HookKind } from '../../hooks/run.js';
import { jsonDialect } from '../../clients/dialect.js';
import { InvalidInputError } from '../../model/errors.js';
import { hubSpeaker, type HubMemory, type SessionsRead } from './hub-session.js';
import { optionalText, plannedWritesArg, sessionKeyArg } from './request-args.js';
import type { TokenRecord } from '../../model/records.js';
import type { HookAnswer } from '../../protocol/hub.js';
import { HOOK_KINDS, MID_TURN_MODES, type MidTurn } from '../../model/hooks.js';


function subscriptionsOf(value: unknown): Subscriptions {
  if (value === undefined || value === null) return { all: false, channels: [] };
  const given = value as { all?: unknown; channels?: unknown };
  const channels = Array.isArray(given.channels) ? given.channels : [];
  if (typeof given !== 'object' || (given.all !== undefined && typeof given.all !== 'boolean') || channels.length > 200 || channels.some((channel) => typeof channel !== 'string' || channel.length > 200)) {
    throw new InvalidInputError('subscriptions must be {all: boolean, channels: [names]}');
  }
  return { all: given.all === true, channels: channels as string[] };
}

/** Which mail a pre-tool hook shows between tool calls, as the agent's machine set it: urgent unless said. */
function midTurnOf(value: unknown): MidTurn {
  if (value === undefined || value === null) return 'urgent';
  if (typeof value !== 'string' || !(MID_TURN_MODES as readonly string[]).includes(value)) throw new InvalidInputError(`midturn must be one of ${MID_TURN_MODES.join(', ')}`);
  return value as MidTurn;
}

/** A stop hook's limit on the turns it starts in a row, as the agent's machine set it; null when it counts none. */
function stopKeepsArg(value: unknown): number | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 1_000_000) throw new InvalidInputError('stop_keeps must be a whole number ≥ 0');
  return value;
}

/** A split pre-tool hook's part, as the agent's machine read it from the payload: both unless said. */
function preToolPartArg(value: unknown): 'guard' | 'context' | 'both' {
  if (value === undefined || value === null) return 'both';
  if (value !== 'guard' && value !== 'context') throw new InvalidInputError('pre_tool_part must be guard or context');
  return value;
}

/**
 * The hook's answer, and the mail it holds that the remote hook confirms once it has printed it
 * (POST /v1/delivered): until then the mail is leased, not delivered.
 */
export async function answerRemoteHook(
  bus: Bus,
  env: Env,
  token: TokenRecord,
  memory: HubMemory,
  body: unknown,
  warn: (line: string) => void,
  sessions: SessionsRead | null = null,
  pinned: string | null = null,
): Promise<HookAnswer> {
  const { registered } = memory;
  const request = (body ?? {}) as Record<string, unknown>;
  const kind = request.kind as HookKind;
  if (!(HOOK_KINDS as readonly string[]).includes(kind)) throw new InvalidInputError(`kind must be one of ${HOOK_KINDS.join(', ')}`);
  const turn = {
    client: optionalText(request.client, 'client', 64),
    sessionKey: sessionKeyArg(request.session_key),
    threadId: optionalText(request.thread_id, 'thread_id', 200),
    subscriptions: subscriptionsOf(request.subscriptions),
    // A stop hook's peek (`hook-stop --peek`) takes and records nothing.
    peek: kind === 'stop' && request.peek === true,
    // The files a pre-tool call writes, read on the agent's machine: the hub checks them in the token's repo.
    writes: kind === 'pre-tool' ? plannedWritesArg(request.writes) : null,
    midTurn: midTurnOf(request.midturn),
    preToolPart: kind === 'pre-tool' ? preToolPartArg(request.pre_tool_part) : ('both' as const),
    stopKeepLimit: kind === 'stop' ? stopKeepsArg(request.stop_keeps) : null,
    notification: kind === 'notification' ? optionalText(request.notification, 'notification', 64) : null,
    // A hook the session's server relays (mcp_tool) is answered in JSON, the only form it reads.
    ...(request.json === true ? { dialect: jsonDialect } : {}),
  };
  // A client address's session reads as the session address its session id holds (one not yet held takes the address its agent's name pins).
  const held = await hubSpeaker(bus, env, token, turn.sessionKey, sessions, pinned);
  if (held === null && !registered.has(token.agent)) {
    await bus.roster.register(registrationsFor(token.agent, token.repoPath, true));
    registered.add(token.agent);
  }
  let output = '';
  let delivery: PendingDelivery | null = null;
  await answerHook(bus, {
    kind,
    ...turn,
    name: held?.name ?? token.agent,
    repoPath: token.repoPath,
    env,
    local: null,
    touched: memory.touched,
    write: (text) => (output += text),
    warn,
    defer: (pending) => (delivery = pending),
  });
  return { output, delivery };
}
