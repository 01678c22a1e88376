/**
 * Waking an idle session through its client's own inbox socket, from its MCP server: the server is a
 * child of the client, so the client takes the post as its own (a session in bypass mode too), and no
 * process of ours waits beside it. The server waits on the store's change feed; when mail waits for
 * its session and the session's hooks say it is idle, it posts a short nudge naming the sender. The
 * turn the nudge starts runs the prompt hook, which delivers the mail itself, with its receipts.
 *
 * The server is the session's watcher while it does this (a `socket` row), so a hook-watch started by
 * the client's hooks steps aside, and senders know the session's mail is watched. A socket that
 * refuses a post, or after whose post no turn begins in AGENT_BUS_SOCKET_TURN_SECONDS, is given up:
 * the row says why (doctor shows it), and hook-watch wakes the session from its next turn on.
 */
import type { Bus } from '../core/bus.js';
import type { MessageView } from '../core/views.js';
import type { NudgeDesk, NudgeLook } from '../core/wake-ops.js';
import { eachChange } from '../core/store-changes.js';
import { isStoreUnavailable } from '../model/errors.js';
import { randomId } from '../model/ids.js';
import { quoted } from '../model/quote.js';
import { setting, type Env } from '../model/settings.js';
import { profileFor } from '../clients/registry/profiles.js';
import { loadWakeConfig, lookupWake } from './config.js';
import { wakesPerHour } from './dispatch.js';
import { viewRecord, watchRefusal } from './native.js';
import { postToSession, sessionSocketOf, type SessionSocket } from './session-socket.js';

/** How many of the oldest waiting messages a look goes through for one to nudge the session for. */
export const NUDGE_LOOKAHEAD = 20;

/** The desk over this machine's bus: the server's own process is the watcher. */
export function busNudgeDesk(bus: Bus): NudgeDesk {
  const key = `socket:${process.pid}`;
  const token = randomId();
  return {
    // The row names this process, which the machine's process table vouches for: no heartbeat.
    heartbeatMs: null,
    waitMs: null,
    changes: () => bus.changes(),
    nowMicros: () => bus.clock.nowMicros(),
    look: (reader) => lookForNudge(bus, reader),
    claimShared: (messageId) => bus.wakes.claimSharedNudge(messageId),
    allow: (reader, micros, perHour) => bus.wakes.count(reader, micros, perHour),
    note: async (reader, message, status, micros) => bus.wakes.notePosted(reader, viewRecord(message), status, micros),
    watch: (reader) => bus.wakes.startWatching(key, token, process.pid, reader, 'socket'),
    giveUp: (reason) => bus.wakes.giveUpSocket(key, token, reason),
    stop: () => bus.wakes.stopWatching(key, token),
  };
}

/** Where `reader`'s mail stands: its count, its presence, and (idle, with mail) the oldest waiting. */
export async function lookForNudge(bus: Bus, reader: string): Promise<NudgeLook> {
  const pending = await bus.inbox.pending(reader);
  const presence = pending === 0 ? null : await bus.presence.of(reader);
  const waiting = presence?.state === 'idle' ? await bus.inbox.read({ reader, markRead: false, limit: NUDGE_LOOKAHEAD, via: null }) : [];
  return { reader, pending, presence: presence === null ? null : { state: presence.state, since: presence.since }, waiting };
}

export interface SocketWakeOptions {
  desk: NudgeDesk;
  env: Env;
  client: string | undefined;
  /** The address the session reads now (a rename moves it); over a hub, the hub says (null). */
  reader(): string | null;
  log(line: string): void;
}

export interface SocketWake {
  /** Stop waiting and let the session's watcher row go. */
  stop(): Promise<void>;
}

/** The session's socket, when its client has one and this is a session the bus wakes natively; else null. */
function socketOfSession(client: string | undefined, env: Env): SessionSocket | null {
  const { wake } = profileFor(client);
  if (wake.kind !== 'watch' || wake.socket === null || watchRefusal(client, env) !== null) return null;
  return sessionSocketOf(wake.socket, env);
}

/** What the nudge says: who sent mail; the prompt hook of the turn it starts shows the mail. */
export function nudgeText(from: string, waiting: number, sentAt: string): string {
  const count = waiting === 1 ? '1 message waits' : `${waiting} messages wait`;
  return `agent-bus: new mail from ${quoted(from)} at ${sentAt} (${count}). It is shown with this prompt; if it is not, call read_inbox.`;
}

/** Start waking the session through its socket; null when it has none (hook-watch wakes it, as before). */
export async function startSocketWake(options: SocketWakeOptions): Promise<SocketWake | null> {
  const socket = socketOfSession(options.client, options.env);
  if (socket === null) return null;
  const { desk, env, log } = options;
  const heartbeatMs = desk.heartbeatMs ?? Number.POSITIVE_INFINITY;
  let armedFor = options.reader() ?? (await desk.look('')).reader;
  await desk.watch(armedFor);
  let armedAt = Date.now();

  const feed = desk.changes();
  let stopping = false;
  const pollMs = desk.waitMs ?? setting(env, 'AGENT_BUS_WATCH_POLL_SECONDS') * 1000;
  const turnMs = setting(env, 'AGENT_BUS_SOCKET_TURN_SECONDS') * 1000;
  /** Mail a nudge was posted for, or held back for, once each. */
  const nudged = new Set<string>();
  /** The nudge whose turn has not begun yet: no other is posted meanwhile. */
  let awaiting: { reader: string; idleSince: string; deadline: number } | null = null;

  /**
   * The oldest waiting message the session has not been nudged for, or null. Mail its sibling sessions
   * share (sent to their client address, or their repo) wakes one of them, the first idle one to claim it;
   * a message another took is passed over, so the session's own mail behind it still wakes it.
   */
  const mailToNudgeFor = async (reader: string, waiting: MessageView[]): Promise<MessageView | null> => {
    for (const message of waiting) {
      if (nudged.has(message.message_id)) continue;
      nudged.add(message.message_id);
      if (message.to === reader || (await desk.claimShared(message.message_id))) return message;
    }
    return null;
  };

  const giveUp = async (reason: string): Promise<void> => {
    await desk.giveUp(reason).catch(() => undefined);
    log(`agent-bus: this session's inbox socket is given up (${reason}); hook-watch wakes it from its next turn on`);
  };

  const step = async (): Promise<true | undefined> => {
    const look = await desk.look(options.reader() ?? armedFor);
    const reader = look.reader;
    if (reader !== armedFor || Date.now() - armedAt >= heartbeatMs) {
      armedFor = reader;
      armedAt = Date.now();
      await desk.watch(reader);
    }
    if (awaiting !== null) {
      const then = awaiting.reader === reader ? look : await desk.look(awaiting.reader);
      // The nudge's turn has begun (the prompt hook noted it working, so its presence moved on from the idle
      // it was posted in: compared as the bus stamped it, never against this machine's clock), or the mail went another way.
      if ((then.presence !== null && then.presence.since !== awaiting.idleSince) || then.pending === 0) awaiting = null;
      else if (Date.now() >= awaiting.deadline) {
        await giveUp(`no turn began within ${turnMs / 1000} s of a post`);
        return true;
      } else return undefined;
    }
    if (look.pending === 0) return undefined;
    // A session at work is told between tool calls and before it stops; one waiting on a person is left be.
    if (look.presence?.state !== 'idle') return undefined;
    const config = loadWakeConfig(env);
    if (config.problem === null && lookupWake(config, reader).status !== 'no-config') return undefined; // wake.json wins.
    const first = await mailToNudgeFor(reader, look.waiting);
    if (first === null) return undefined;
    const micros = desk.nowMicros();
    if (!(await desk.allow(reader, micros, wakesPerHour(env)))) {
      // Past the hourly limit the mail waits for the session's next turn.
      await desk.note(reader, first, 'rate-limited', micros);
      return undefined;
    }
    const outcome = await postToSession(socket, nudgeText(first.from, look.pending, first.sent_at));
    if (!outcome.ok) {
      await desk.note(reader, first, 'refused', micros);
      await giveUp(outcome.reason);
      return true;
    }
    await desk.note(reader, first, 'posted', micros);
    awaiting = { reader, idleSince: look.presence.since, deadline: Date.now() + turnMs };
    return undefined;
  };

  const loop = eachChange({ feed, pollMs: Math.min(pollMs, turnMs, heartbeatMs), stopped: () => stopping }, async (changed) => {
    // Only a change can bring mail; a nudge awaiting its turn, and the heartbeat, are looked at on every pass.
    if (!changed && awaiting === null && Date.now() - armedAt < heartbeatMs) return undefined;
    try {
      return await step();
    } catch (error) {
      // A store that goes away (a server restarting) is waited out: the feed reconnects.
      if (isStoreUnavailable(error)) return undefined;
      log(`agent-bus: socket wake: ${(error as Error).message}`);
      return undefined;
    }
  }).catch((error: unknown) => {
    if (!stopping) log(`agent-bus: socket wake stopped: ${(error as Error).message}`);
  });

  return {
    async stop() {
      stopping = true;
      feed.interrupt();
      await loop;
      await feed.close().catch(() => undefined);
      // A socket given up keeps its row while the server runs (doctor says why); at the end both go.
      await desk.stop().catch(() => undefined);
    },
  };
}
