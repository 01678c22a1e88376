/**
 * The turn-boundary hooks. `prompt` (before the model sees a prompt) shows
 * all new mail, then the notices due; `stop` (when the agent is about to
 * finish) keeps the turn open only for mail this agent must act on;
 * `session-start` shows the notices due to a new session; `pre-tool` shows
 * critical notices before each tool call. Each answers in its client's dialect.
 */
import { checkWrites, type WriteCheck } from './write-guard.js';
import { plannedWrites, type PlannedWrites } from './planned-writes.js';
import { printerFor, type HookDialect } from '../clients/dialect.js';
import { nothingToAnswer, preToolPartOf, sessionFromEnvironment, type PreToolPart } from '../clients/profile.js';
import { profileFor } from '../clients/registry/profiles.js';
import { isBusError, isStoreUnavailable } from '../model/errors.js';
import { storeProblem } from '../adapters/store-problem.js';
import { errorLine } from '../model/quote.js';
import { resolveIdentity, sessionsEnabled } from '../adapters/identity.js';
import { clientAddressOf, repoOf } from '../core/names.js';
import type { ReservationView } from '../core/reservation-ops.js';
import { setting, type Env } from '../model/settings.js';
import { busPaths } from '../adapters/paths.js';
import { systemProcessTable, type ProcessTable } from '../adapters/procs.js';
import { payloadDirectory, payloadSessionKey, payloadTimeoutMs, readPayload, type Payload } from './payload.js';
import { recordWakeRoute } from './routes.js';
import { hookSessionFacts } from '../clients/registry/session-facts.js';
import { heldTasksReminder, keptLine, midTurnContext, promptContext, stopReason } from './text.js';
import { presenceOfNotification, type MidTurn } from '../model/hooks.js';
import { noticeBlock, renderNotice } from './notice-text.js';
import { noticeCaps, type NoticeMoment } from '../core/notices.js';
import { parseSubscriptions, type Subscriptions } from '../core/subscriptions.js';
import { busDotEnv } from '../adapters/dot-env.js';
import type { HookBus } from '../core/hook-bus.js';
import type { DeliveryRequest, PendingDelivery } from '../core/inbox-ops.js';
import type { MessageView } from '../core/views.js';
import { brainSettings } from '../brain/settings.js';
import { loadRefresh } from '../brain/load.js';
import { createRequire } from 'node:module';

import { clientOf, type HookKind } from './run-kind.js';
import { remainingText } from '../model/when.js';

export { clientOf, type HookKind } from './run-kind.js';

export interface HookRun {
  kind: HookKind;
  client: string | undefined;
  /** A stop hook that only says whether the agent would be kept working: nothing taken, nothing recorded. */
  peek?: boolean;
  env: Env;
  cwd: string;
  write(text: string): void;
  warn(text: string): void;
  /** Open this machine's bus (the hook's command has asked already whether a hub is set). */
  openBus(): HookBus;
}


/** The notices due to this session at this moment, rendered; info ones shown get their receipt. */
async function noticesText(
  bus: HookBus,
  run: { env: Env; subscriptions: Subscriptions },
  moment: NoticeMoment,
  session: string,
  usedBytes: number,
  alsoIds: string[] = [],
): Promise<string | null> {
  const selection = await bus.notices.deliver({
    moment,
    session,
    subscriptions: run.subscriptions,
    caps: noticeCaps(run.env),
    usedBytes,
    render: renderNotice,
    alsoIds,
  });
  return noticeBlock(selection, moment);
}

/**
 * At Stop, hand the payload to a detached `agent-bus brain markers`: writing
 * markers back to the brain involves the network, and the turn never waits for it.
 */
function startBrainWriter(run: HookTurn, { payload, cwd }: { payload: Payload; cwd: string }): void {
  const launcher = process.argv[1];
  if (launcher === undefined || (typeof payload.transcript_path !== 'string' && typeof payload.last_assistant_message !== 'string')) return;
  if (!brainSettings(run.env).writerEnabled) return;
  try {
    const { spawn } = createRequire(import.meta.filename)('node:child_process') as typeof import('node:child_process');
    const child = spawn(process.execPath, [launcher, 'brain', 'markers'], { detached: true, stdio: ['pipe', 'ignore', 'ignore'], env: run.env, cwd });
    child.on('error', () => undefined);
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(JSON.stringify(payload));
    child.unref();
  } catch (error) {
    run.warn(`agent-bus hook: could not start the brain writer: ${(error as Error).message}`);
  }
}

/**
 * The brain, when it is on: read at once when a session starts, and every
 * BRAIN_REFRESH_TOOL_CALLS tool calls after that (a counter per session, in
 * the store). Returns the notices a refresh published anew, to show now.
 */
async function brainTurn(bus: HookBus, run: { env: Env; warn(text: string): void }, session: string, kind: HookKind): Promise<string[]> {
  const settings = brainSettings(run.env);
  if (!settings.enabled) return [];
  let due = kind === 'session-start';
  if (!due) {
    const count = await bus.brain.countToolCall(session);
    due = count % settings.refreshToolCalls === 0;
  }
  if (!due) return [];
  try {
    const { refreshBrain } = await loadRefresh();
    const result = await refreshBrain(bus, settings);
    if (!result.ok) run.warn(`agent-bus hook: brain source unavailable, keeping its last content: ${result.error}`);
    return result.added;
  } catch (error) {
    run.warn(`agent-bus hook: brain refresh failed: ${(error as Error).message}`);
    return [];
  }
}

function joined(...parts: Array<string | null>): string | null {
  const present = parts.filter((part): part is string => part !== null);
  return present.length === 0 ? null : present.join('\n\n');
}

export async function runHook(run: HookRun): Promise<number> {
  const profile = profileFor(clientOf(run));
  const print = printerFor(profile.dialect, run.kind);
  const nothing = print(null);
  // Always take the payload in, so the client's pipe never blocks on a full buffer.
  const payload = await readPayload(payloadTimeoutMs(run.env));
  if (nothingToAnswer(profile, run.kind, payload)) {
    run.write(nothing);
    return 0;
  }
  let bus;
  try {
    bus = run.openBus();
  } catch (error) {
    return unavailable(run, nothing, error);
  }
  let wrote = false;
  const write = (text: string): void => {
    wrote = true;
    run.write(text);
  };
  try {
    const identity = await resolveIdentity({ env: run.env, client: run.client, payloadDir: payloadDirectory(payload), cwd: run.cwd }, bus.roster, 'hook');
    if (identity.kind !== 'agent') {
      run.write(nothing);
      return 0;
    }
    await answerHook(bus, {
      ...(await turnOfPayload(payload, { kind: run.kind, client: clientOf(run), name: identity.name, repoPath: identity.repoPath, env: run.env, cwd: run.cwd, peek: run.peek ?? false })),
      write,
      warn: run.warn,
    });
    return 0;
  } catch (error) {
    if (isStoreUnavailable(error) && !wrote) return unavailable(run, nothing, error);
    // A hook never breaks its client's turn: whatever went wrong, one line on stderr, the dialect's
    // "nothing" (unless the answer was printed already), exit 0. Not 2 above all: Claude Code reads
    // exit 2 from a Stop hook as "keep working" and from a prompt hook as "drop the prompt".
    const message = error instanceof Error ? error.message : String(error);
    run.warn(`agent-bus hook: ${isBusError(error) ? '' : (storeProblem(error, busPaths(run.env).folder) ?? 'unexpected error') + ': '}${errorLine(message)}`);
    if (setting(run.env, 'AGENT_BUS_DEBUG') && error instanceof Error && error.stack) run.warn(error.stack);
    if (!wrote) run.write(nothing);
    return 0;
  } finally {
    await bus.close().catch(() => undefined);
  }
}

/** Who a hook on this machine speaks for, and where: what its payload does not say. */
export interface LocalHookContext {
  kind: HookKind;
  client: string | null;
  /** The agent the hook speaks for (a client address, or the session address its server holds). */
  name: string;
  repoPath: string;
  env: Env;
  /** The folder the hook runs in, where the payload names none. */
  cwd: string;
  peek: boolean;
  /** The address whose mail the turn reads, where it is known already (the session's own server): no lookup. */
  reader?: string;
}

/**
 * A hook's turn on the agent's own machine, from its payload: one reading for a hook's own process
 * and for the session's MCP server answering the client's hook call.
 */
export async function turnOfPayload(payload: Payload, context: LocalHookContext): Promise<Omit<HookTurn, 'write' | 'warn'>> {
  const { kind, env } = context;
  const profile = profileFor(context.client);
  const preToolPart = kind === 'pre-tool' ? preToolPartOf(profile, payload) : 'both';
  const folder = payloadDirectory(payload) ?? context.cwd;
  return {
    kind,
    client: context.client,
    name: context.name,
    repoPath: context.repoPath,
    ...(context.reader === undefined ? {} : { reader: context.reader }),
    sessionKey: payloadSessionKey(payload) ?? sessionFromEnvironment(profile, env),
    threadId: payloadSessionKey(payload),
    subscriptions: parseSubscriptions(env, () => busDotEnv(env)),
    peek: context.peek,
    env,
    preToolPart,
    stopKeepLimit: kind === 'stop' && profile.stopKeepsCounted ? setting(env, 'AGENT_BUS_STOP_KEEPS') : null,
    writes: kind === 'pre-tool' && preToolPart !== 'context' ? await plannedWrites(profile, payload, () => context.repoPath, folder, env) : null,
    midTurn: setting(env, 'AGENT_BUS_MIDTURN') as MidTurn,
    notification: typeof payload.notification_type === 'string' ? payload.notification_type : null,
    local: { table: systemProcessTable(env), sessionsOn: sessionsEnabled(env), payload, cwd: context.cwd },
  };
}

/** One hook's turn, once it is known who asks: on this machine, or on the hub for a remote agent. */
export interface HookTurn {
  kind: HookKind;
  client: string | null;
  /** The agent the hook speaks for. */
  name: string;
  /** The address whose mail the turn reads, where it is known already (the session's own server holds it): no lookup. */
  reader?: string;
  repoPath: string;
  /** The client's id for the conversation: whose notice receipts and counters count. */
  sessionKey: string | null;
  /** The payload's session id (Codex's thread id). */
  threadId: string | null;
  subscriptions: Subscriptions;
  /** A stop hook asked only whether mail this agent must act on waits (`hook-stop --peek`): it takes and records nothing. */
  peek?: boolean;
  /** Which mail the pre-tool hook shows between tool calls (AGENT_BUS_MIDTURN on the agent's machine); urgent unless said. */
  midTurn?: MidTurn;
  /** Where the notice caps and the brain's settings come from. */
  env: Env;
  /** A notification hook's type (Claude Code's `notification_type`): whether it says the session waits on a person. */
  notification?: string | null;
  /** Before a tool call: the repo's files it writes, as the agent's machine read them (null: none, or the check is off). */
  writes?: PlannedWrites | null;
  /** A pre-tool hook's part, where the client splits it over two events (ClientProfile.preToolSplit); both unless said. */
  preToolPart?: PreToolPart;
  /**
   * A stop hook whose client sets no limit of its own (ClientProfile.stopKeepsCounted): the most turns
   * in a row it may start for mail (AGENT_BUS_STOP_KEEPS on the agent's machine; 0: no limit). Absent
   * where the client keeps the count.
   */
  stopKeepLimit?: number | null;
  /**
   * What only a hook on the agent's own machine has: the process table (which session address
   * reads, the Codex route for waking), and the payload and folder for the brain's writer.
   * Null on the hub: a remote agent reads as its token's name.
   */
  local: { table: ProcessTable; sessionsOn: boolean; payload: Payload; cwd: string } | null;
  /** On the hub: when it last noted each name active (ms), shared by all its requests. */
  touched?: Map<string, number>;
  /**
   * On the hub: the mail is printed by the remote hook, not here. It is taken and handed over
   * (this says what to confirm once it is printed) instead of being marked delivered now.
   */
  defer?: (pending: PendingDelivery) => void;
  /** How the answer is printed, where not in the client's own hook dialect (an MCP tool's answer is always JSON). */
  dialect?: HookDialect;
  write(text: string): void;
  warn(text: string): void;
}

export async function answerHook(bus: HookBus, turn: HookTurn): Promise<void> {
  const print = printerFor(dialectOf(turn), turn.kind);
  const { sessionKey, local } = turn;
  const noticeRun = { env: turn.env, subscriptions: turn.subscriptions };
  if (turn.kind === 'notification' || turn.kind === 'session-end') {
    // Presence alone: a permission prompt or a question waits on a person; a session's end is its end.
    const state = turn.kind === 'session-end' ? 'ended' : presenceOfNotification(turn.notification);
    if (state !== null) await bus.presence.note(await readerOf(bus, turn), state);
    turn.write(print(null));
    return;
  }
  if (turn.kind === 'session-start' || turn.kind === 'pre-tool') {
    // Notices only: no mail, no process table. A hook without a session id keys receipts by its agent.
    const session = sessionKey ?? turn.name;
    const part = turn.kind === 'pre-tool' ? (turn.preToolPart ?? 'both') : 'both';
    // Before a tool call: a write of another's reserved file is refused or warned of, and recorded.
    const writes = turn.kind === 'pre-tool' && part !== 'context' && turn.writes ? await guardWrites(bus, turn, turn.writes) : null;
    const deny = writes?.deny ?? null;
    const refuse = dialectOf(turn).denyTool;
    if (deny !== null && refuse !== undefined) {
      turn.write(refuse(deny));
      return;
    }
    // A new session is idle until its first prompt; a tool call ends a wait on a person.
    if (turn.kind === 'session-start') await bus.presence.started(await readerOf(bus, turn));
    else if (part !== 'context') await bus.presence.toolCalled(() => readerOf(bus, turn));
    if (part === 'guard') {
      // Where the client shows no context before a call, its check says nothing more (a warning would
      // reach no model): notices, mail and the brain's count wait for the hook after the call.
      turn.write(print(null));
      return;
    }
    const restored = await brainTurn(bus, turn, session, turn.kind);
    const notices = await noticesText(bus, noticeRun, turn.kind, session, 0, restored);
    const context = joined(writes?.context ?? null, notices);
    // Before a tool call, mail that cannot wait for the turn's end (urgent, unless AGENT_BUS_MIDTURN says
    // all or off). Most calls find none, and a look that cheap is all they pay.
    const midTurn = turn.kind === 'pre-tool' ? (turn.midTurn ?? 'urgent') : 'off';
    if (midTurn !== 'off' && (await bus.inbox.midTurnMailMayWait(turn.name, midTurn === 'urgent'))) {
      const reader = await readerOf(bus, turn);
      await deliverTurn(bus, turn, { reader, via: 'hook-pre-tool', actionableOnly: true, urgentOnly: midTurn === 'urgent' }, (messages) => {
        turn.write(print(joined(midTurnContext(messages, reader, clientAddressOf(reader)), context)));
      });
      return;
    }
    turn.write(print(context));
    return;
  }
  const reader = await readerOf(bus, turn);
  // Noting the activity needs nothing of the turn: on the hub, whose connections are open already, it
  // runs beside the turn's reads. A hook of its own opens one connection and keeps to it.
  if (local === null) await Promise.all([bus.roster.touchIfStale(reader, turn.touched), answerTurn(bus, turn, reader)]);
  else {
    await bus.roster.touchIfStale(reader);
    await answerTurn(bus, turn, reader);
  }
}

/** The prompt or stop hook's work for `reader`: the wake route, the mail, the notices. */
async function answerTurn(bus: HookBus, turn: HookTurn, reader: string): Promise<void> {
  const profile = profileFor(turn.client);
  const dialect = dialectOf(turn);
  const { sessionKey, local } = turn;
  const noticeRun = { env: turn.env, subscriptions: turn.subscriptions };
  // A client whose idle sessions the sender queues a turn for: its hooks note where the thread is.
  const wakeThread = profile.wake.kind === 'queue' && local !== null ? turn.threadId : null;
  if (wakeThread !== null && local !== null && turn.kind === 'prompt') await recordWakeRoute(bus, profile.id, reader, wakeThread, turn.repoPath, local.table, 'busy');
  const shared = clientAddressOf(reader);
  if (turn.kind === 'prompt') {
    // Its turn has begun (presence: working).
    await bus.presence.note(reader, 'working');
    // Without a pre-tool event, the brain's refresh cadence counts turns instead.
    if (!profile.preToolEvent) await brainTurn(bus, turn, sessionKey ?? reader, 'pre-tool');
    const session = sessionKey ?? reader;
    // On the hub, whose connections are open already, whether any notice is due is asked beside the
    // inbox (most turns have neither); a hook of its own keeps to its one connection. A failed look
    // only means the delivery looks again.
    const anyDue = local === null ? bus.notices.anyDue({ moment: 'prompt', session, subscriptions: turn.subscriptions }).catch(() => true) : Promise.resolve(true);
    // A client whose hooks are not told which file a call writes is told what others hold instead, at each prompt.
    const held = profile.writtenFiles === null && setting(turn.env, 'AGENT_BUS_RESERVATIONS') !== 'off' ? heldNote(await bus.reservations.othersIn(reader, repoOf(reader))) : null;
    await deliverTurn(bus, turn, { reader, via: 'hook-user-prompt' }, async (messages) => {
      const mail = promptContext(messages, reader, shared);
      const notices = (await anyDue) ? await noticesText(bus, noticeRun, 'prompt', session, mail === null ? 0 : Buffer.byteLength(mail, 'utf8')) : null;
      turn.write(dialect.prompt(joined(mail, held, notices)));
    });
    return;
  }
  if (turn.peek) {
    // Whether the agent would be kept working, and nothing more: no mail is taken and no receipt
    // recorded, since this answer is not shown to the model. The opencode plugin asks this when a
    // session goes idle: the follow-up turn it then starts may never reach the model (`opencode run`
    // exits at idle), so the mail is taken by the stop hook that turn's model request runs.
    const waiting = await bus.inbox.read({ reader, markRead: false, actionableOnly: true, via: null });
    const reason = stopReason(waiting, reader, shared);
    turn.write(dialect.stop(reason));
    // Its session went idle; with mail to act on, the plugin starts the turn that takes it at once.
    if (reason === null) await bus.presence.note(reader, 'idle');
    return;
  }
  if (local !== null) startBrainWriter(turn, local);
  const keptTurn = await countKeptTurn(bus, turn, reader, shared);
  if (keptTurn !== null && keptTurn.turn > keptTurn.limit) {
    // The loop guard: as many turns in a row as it may start. This one ends; its mail, unread, waits for the next prompt.
    turn.write(dialect.stop(null));
    await bus.presence.note(reader, 'idle');
    return;
  }
  let keptWorking = false;
  // Tasks it took and has not closed: each named once, so the reminder never holds it in a loop.
  const reminder = heldTasksReminder(await bus.taskReminders.remindersFor(reader));
  await deliverTurn(bus, turn, { reader, via: 'hook-stop', actionableOnly: true }, (messages) => {
    const reason = joined(stopReason(messages, reader, shared), reminder);
    keptWorking = reason !== null;
    // Where the hook counts the turns it starts, the reason tells the model which of them this is.
    const counted = reason !== null && keptTurn !== null ? `${reason}\n${keptLine(keptTurn.turn, keptTurn.limit)}` : reason;
    turn.write(dialect.stop(counted));
  });
  // Idle once it is let stop: from then on a sender may queue it a turn.
  await bus.presence.note(reader, keptWorking ? 'working' : 'idle');
  if (wakeThread !== null && local !== null) await recordWakeRoute(bus, profile.id, reader, wakeThread, turn.repoPath, local.table, keptWorking ? 'busy' : 'idle');
}

/**
 * Where the stop hook counts the turns it starts (its client sets no limit), and mail would keep this
 * one going: which turn in a row that would be, and the limit. The count is the session's, for the run
 * of turns since the agent last began working (its presence's `since`: a person's prompt starts a new
 * one). Null where nothing is counted.
 */
async function countKeptTurn(bus: HookBus, turn: HookTurn, reader: string, shared: string | null): Promise<{ turn: number; limit: number } | null> {
  const limit = turn.stopKeepLimit ?? 0;
  if (limit <= 0) return null;
  const waiting = await bus.inbox.read({ reader, markRead: false, actionableOnly: true, via: null });
  if (stopReason(waiting, reader, shared) === null) return null;
  // The run of turns began when the agent began working; one whose start no prompt hook noted begins now.
  await bus.presence.note(reader, 'working');
  const since = (await bus.presence.of(reader))?.since ?? '';
  return { turn: await bus.sessions.countKeptTurn(turn.sessionKey ?? reader, since), limit };
}

/** The most of others' reservations a prompt names. */
const HELD_SHOWN = 10;

/** Others' reservations in the agent's repo, for a client whose edits the pre-tool hook cannot check. */
function heldNote(held: ReservationView[]): string | null {
  if (held.length === 0) return null;
  const lines = held.slice(0, HELD_SHOWN).map((row) => `  ${row.path} — ${row.holder} ${remainingText(row.until)}${row.reason ? ` (${row.reason})` : ''}`);
  const more = held.length > HELD_SHOWN ? [`  … and ${held.length - HELD_SHOWN} more (list_reservations)`] : [];
  return ['[agent-bus] Files other agents have reserved in this repo: do not edit them; ask the holder with send_message.', ...lines, ...more].join('\n');
}

/** A turn's mail shown: marked delivered once `show` has printed it here, or handed over unmarked when the printing is elsewhere. */
async function deliverTurn(bus: HookBus, turn: HookTurn, request: DeliveryRequest, show: (messages: MessageView[]) => void | Promise<void>): Promise<void> {
  if (turn.defer === undefined) {
    await bus.inbox.deliver(request, show);
    return;
  }
  const { pending } = await bus.inbox.show(request, show);
  if (pending !== null) turn.defer(pending);
}

/** The store cannot be used (a server down, a file that is no database): the turn goes on without mail, saying why on stderr. */
function unavailable(run: HookRun, nothing: string, error: unknown): number {
  const problem = storeProblem(error, busPaths(run.env).folder);
  run.warn(`agent-bus hook: ${problem === null ? '' : `${problem}: `}${errorLine((error as Error).message)}`);
  run.write(nothing);
  return 0;
}

/** How the turn's answer is printed: as asked, else in its client's dialect. */
function dialectOf(turn: HookTurn): HookDialect {
  return turn.dialect ?? profileFor(turn.client).dialect;
}

/** The address whose mail the turn reads: on the hub, the hook speaks as the session address already. */
function readerOf(bus: HookBus, turn: HookTurn): Promise<string> {
  const { local } = turn;
  if (turn.reader !== undefined) return Promise.resolve(turn.reader);
  return local === null ? Promise.resolve(turn.name) : bus.sessions.readerFor(turn.name, turn.sessionKey, hookSessionFacts(turn.name, local.sessionsOn, local.table));
}

/** The pre-tool hook's check of the files a tool call writes. */
function guardWrites(bus: HookBus, turn: HookTurn, writes: PlannedWrites): Promise<WriteCheck> {
  return checkWrites(bus, { profile: profileFor(turn.client), writes, name: turn.name, reader: () => readerOf(bus, turn) });
}
