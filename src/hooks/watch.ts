/**
 * `agent-bus hook-watch`: run in the background by a client after each turn,
 * it waits for mail for its session. When mail arrives it takes it (audited
 * `read` and `deliver`), prints what the prompt hook would print on stderr
 * (what Claude Code shows the model when it rewakes a session) and exits 10.
 * It exits 0 when it gives up, when a newer watcher of the session takes
 * over, when its client exits, or when waking is not its job.
 *
 * Waiting is event-driven: file-system events in the database's folder (its
 * WAL grows at every commit) and SQLite's data_version say when to look; the
 * poll (AGENT_BUS_WATCH_POLL_SECONDS) is only the fallback.
 */
import { IdentityError, resolveIdentity, sessionsEnabled } from '../adapters/identity.js';
import { isStoreUnavailable } from '../model/errors.js';
import { clientAddressOf } from '../core/names.js';
import { setting, type Env } from '../model/settings.js';
import { randomId } from '../model/ids.js';
import { eachChange } from '../core/store-changes.js';
import { clientProcessOf, lineageOf, processEnded, systemProcessTable, type LineageEntry, type ProcessTable } from '../adapters/procs.js';
import { payloadDirectory, hookSessionKey, payloadTimeoutMs, readPayload, type Payload } from './payload.js';
import { hookSessionFacts } from '../clients/registry/session-facts.js';
import { promptContext } from './text.js';
import { loadWakeConfig, lookupWake } from '../wake/config.js';
import { socketWatching, viewRecord, watchRefusal } from '../wake/native.js';
import { wakesPerHour } from '../wake/dispatch.js';
import type { Bus } from '../core/bus.js';
import type { PendingDelivery } from '../core/inbox-ops.js';
import type { MessageView } from '../core/views.js';
import type { MessageRecord } from '../model/records.js';

/** Claude Code reads a background hook's exit 2 as "wake the model"; its command maps our 10 to it. */
export const WOKE_EXIT = 10;

export interface WatchRun {
  client: string | undefined;
  maxSeconds: number | undefined;
  env: Env;
  cwd: string;
  /** What the model is shown on a rewake (stderr). */
  say(text: string): void;
  warn(text: string): void;
}

/** What every watcher, here or over a hub, reads first: its payload, its session's id, how long it waits. */
export interface WatchStart {
  payload: Payload;
  sessionKey: string | null;
  /** How long it waits before it gives up. */
  maxMs: number;
}

/**
 * The client a watcher waits for: the process AGENT_BUS_WATCH_CLIENT_PID names (the opencode plugin
 * names its own) while it is among the watcher's ancestors, else the nearest ancestor that is not a
 * shell. 'gone': the named client quit before the watcher looked, and the watcher was handed to
 * another parent (init, a subreaper) that it must not mistake for its client and wait on for a day.
 */
export function watchedClient(env: Env, table: ProcessTable): LineageEntry | null | 'gone' {
  const lineage = lineageOf(process.pid, table);
  const named = setting(env, 'AGENT_BUS_WATCH_CLIENT_PID');
  if (named === 0) return clientProcessOf(lineage);
  return lineage.find(([pid]) => pid === named) ?? 'gone';
}

/** The watcher's start: null when waking is not its job, or its client is gone already (it exits 0 at once). */
export async function startWatch(run: WatchRun): Promise<WatchStart | null> {
  if (watchRefusal(run.client, run.env) !== null) return null;
  const payload = await readPayload(payloadTimeoutMs(run.env));
  if (watchedClient(run.env, systemProcessTable(run.env)) === 'gone') return null;
  const maxMs = (run.maxSeconds ?? setting(run.env, 'AGENT_BUS_WATCH_HOURS') * 3600) * 1000;
  return { payload, sessionKey: hookSessionKey(payload, run.env), maxMs };
}

/** The watcher on a machine with the bus: it waits on the store's change feed. */
export async function runWatch(run: WatchRun, start: WatchStart, bus: Bus): Promise<number> {
  const { payload, sessionKey, maxMs } = start;
  const pollMs = setting(run.env, 'AGENT_BUS_WATCH_POLL_SECONDS') * 1000;
  const deadline = Date.now() + maxMs;
  const table = systemProcessTable(run.env);
  const watched = watchedClient(run.env, table);
  if (watched === 'gone') return 0;
  const client = watched;
  const current = { bootId: table.bootId(), pidNs: table.pidNamespace() };
  const feed = bus.changes();
  let stopping = false;
  const stop = (): void => {
    stopping = true;
    feed.interrupt();
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  process.once('SIGHUP', stop);
  let token: string | null = null;
  let watchKey = '';
  try {
    let identity;
    try {
      identity = await resolveIdentity({ env: run.env, client: run.client, payloadDir: payloadDirectory(payload), cwd: run.cwd }, bus.roster, 'hook');
    } catch (error) {
      if (error instanceof IdentityError) return 0;
      throw error;
    }
    if (identity.kind !== 'agent') return 0;
    const facts = hookSessionFacts(identity.name, sessionsEnabled(run.env), table);
    let reader = await bus.sessions.readerFor(identity.name, sessionKey, facts);
    // Its MCP server wakes it through the client's inbox socket: no process of ours need wait.
    if (await socketWatching(bus.wakes, reader)) return 0;
    watchKey = sessionKey ?? reader;
    const watchToken = randomId();
    token = watchToken;
    await bus.wakes.startWatching(watchKey, watchToken, process.pid, reader);
    // A store that goes away while the watcher waits (a server restarting) is waited out: the feed
    // reconnects and says so, and the watcher looks again then.
    let missed = false;
    const outcome = await eachChange({ feed, pollMs, deadline, stopped: () => stopping }, async (changed) => {
      try {
        if (!(await bus.wakes.isWatching(watchKey, watchToken))) return 0; // A newer watcher took over.
        if (changed && (await socketWatching(bus.wakes, reader))) return 0; // So did the session's MCP server, through the socket.
        if (client !== null && processEnded({ pid: client[0], started: client[1], bootId: current.bootId, pidNs: current.pidNs }, table, current)) return 0;
        if (!changed && !missed) return undefined;
        missed = false;
        // A rename moves the session's mail to its new address: follow it.
        const latest = await bus.sessions.readerFor(identity.name, sessionKey, facts);
        if (latest !== reader) {
          reader = latest;
          await bus.wakes.startWatching(watchKey, watchToken, process.pid, reader);
        }
        const config = loadWakeConfig(run.env);
        if (config.problem === null && lookupWake(config, reader).status !== 'no-config') return 0; // wake.json wins.
        return (await wakeIfMail(bus, run, reader)) ?? undefined;
      } catch (error) {
        if (!isStoreUnavailable(error)) throw error;
        missed = true;
        return undefined;
      }
    });
    return outcome ?? 0;
  } catch (error) {
    // No store to watch (a server down): this watcher gives up; the next turn starts another.
    if (!isStoreUnavailable(error)) throw error;
    run.warn(`agent-bus hook-watch: ${(error as Error).message}`);
    return 0;
  } finally {
    await feed.close();
    if (token !== null) await bus.wakes.stopWatching(watchKey, token).catch(() => undefined);
    await bus.close();
  }
}

/**
 * Take the session's mail and say it: WOKE_EXIT, 0 past the rate limit, null when there is none.
 * `defer`: the text is said elsewhere (a remote watcher prints what the hub answered): the mail is
 * handed over leased, to be confirmed once printed, instead of being marked delivered here.
 */
export async function wakeIfMail(bus: Bus, run: Pick<WatchRun, 'env' | 'say'> & { defer?: (pending: PendingDelivery) => void }, reader: string): Promise<number | null> {
  if ((await bus.inbox.pending(reader)) === 0) return null;
  const micros = bus.clock.nowMicros();
  if (!(await bus.wakes.count(reader, micros, wakesPerHour(run.env)))) {
    // Past the hourly limit the mail waits for the agent's next turn.
    const [first] = (await bus.inbox.read({ reader, markRead: false, limit: 1, via: null })) as unknown as MessageRecord[];
    if (first) bus.wakes.noteWatched(reader, viewRecord(first), 'rate-limited', micros);
    return 0;
  }
  const shared = clientAddressOf(reader);
  const request = { reader, via: 'hook-watch' as const };
  const say = (messages: MessageView[]): void => {
    const text = promptContext(messages, reader, shared);
    if (text !== null) run.say(`agent-bus: new mail\n${text}`);
  };
  let views: MessageView[];
  if (run.defer === undefined) views = await bus.inbox.deliver(request, say);
  else {
    const taken = await bus.inbox.show(request, say);
    if (taken.pending !== null) run.defer(taken.pending);
    views = taken.views;
  }
  const shown = views.map(viewRecord);
  if (shown.length === 0) return null;
  bus.wakes.noteWatched(reader, shown[0] as MessageRecord, 'woke', micros);
  return WOKE_EXIT;
}
