/**
 * Sessions of a client: a starting server takes a session address (decided inside the write lock
 * by core/sessions.ts), a stopping one ends it and may hand its mail to the client address, a
 * rename moves its mail with it. Liveness is judged on evidence only (the process table, or for a
 * hub's session whether it is still heard from); which session a hook speaks for is decided here too.
 */
import { sessionRow, type AuditRow } from '../audit/record.js';
import { formatStamp, stampOf, type Clock } from '../model/clock.js';
import { InvalidInputError, ConflictError } from '../model/errors.js';
import type { LineageEntry } from './liveness.js';
import type { ClientRoute, SessionRowKey, SessionRecord } from '../model/records.js';
import { quoted } from '../model/quote.js';
import type { AddressMove, RosterPort, SessionsPort } from '../store/ports.js';
import type { AuditSink } from './audit-sink.js';
import { heldBy, hubSessionLive, hubSessionRow, HUB_SESSION_TOUCH_MICROS, isHubSession } from './hub-sessions.js';
import type { SessionLiveness } from './liveness.js';
import { clientAddressOf, composeName, repoOf, parseNameLenient } from './names.js';
import { registrationsFor, repoMembers } from './roster.js';
import { clientProcessOfRow, decideSessionStart, isNumbered, rowKeyOf, routeUnchanged, type SessionStarter, type SessionStartContext } from './sessions.js';
import type { BusSettings } from './settings.js';

export interface SessionStart {
  name: string;
  warnings: string[];
}

/** What decides which session a hook speaks for, besides the rows. */
export interface HookSessionFacts {
  /** AGENT_BUS_SESSIONS is not 0. */
  sessionsOn: boolean;
  /** One client process hosts many sessions (its hooks are matched by session id alone). */
  manySessionsPerProcess: boolean;
  /** The client process the hook runs under (its pid and start), read from the process table when asked. */
  ownClientProcess(): LineageEntry | null;
}

function rowKeyText(row: SessionRowKey): string {
  return `${row.serverPid}|${row.serverStarted}|${row.clientAddress}`;
}

function onlyName(rows: SessionRecord[]): string | null {
  const names = new Set(rows.map((row) => row.name));
  return names.size === 1 ? ([...names][0] as string) : null;
}

export class Sessions {
  private liveness: SessionLiveness | undefined;

  /** `liveness` judges whether a session's server still runs (from the process table): made on first use, since most operations never ask. */
  constructor(
    private readonly store: SessionsPort & Pick<RosterPort, 'agentsOfRepo'>,
    private readonly audit: AuditSink,
    private readonly clock: Clock,
    private readonly settings: Pick<BusSettings, 'hubSessionIdleMinutes'>,
    private readonly makeLiveness: () => SessionLiveness,
  ) {}

  /**
   * One more turn a stop hook starts for `session`'s mail, in the run of turns that began at `since`
   * (when the agent last began working): which turn in a row it is.
   */
  countKeptTurn(session: string, since: string): Promise<number> {
    return this.store.tick(session, `stop-kept:${since}`, stampOf(this.clock));
  }

  /** Whether a session row's server is still running. */
  isRunning(row: SessionRecord): boolean {
    // A hub's session has no process to look for: it runs while it is heard from.
    if (isHubSession(row)) return hubSessionLive(row, this.clock.nowMicros(), this.settings.hubSessionIdleMinutes);
    this.liveness ??= this.makeLiveness();
    return this.liveness(row);
  }

  /**
   * Whether a session's client runs on though its server has ended: hooks its server answers reach
   * nothing then, and its mail waits. A hub's session has no process to judge: never.
   */
  clientRunsOn(row: SessionRecord): boolean {
    if (isHubSession(row) || this.isRunning(row)) return false;
    this.liveness ??= this.makeLiveness();
    return this.liveness.clientRunsOn?.(row) ?? false;
  }

  /** Every session row of a client address (or of every client), ended or not. */
  rows(clientAddress?: string): Promise<SessionRecord[]> {
    return this.store.sessionRows(clientAddress);
  }

  /** The session rows of a client address whose server is running. */
  async running(clientAddress: string): Promise<SessionRecord[]> {
    return (await this.store.sessionRows(clientAddress)).filter((row) => this.isRunning(row));
  }

  /** Names held by running sessions (for a client address, or everywhere). */
  async liveNames(clientAddress?: string): Promise<Set<string>> {
    const rows = await this.store.sessionRows(clientAddress);
    return new Set(rows.filter((row) => this.isRunning(row)).map((row) => row.name));
  }

  /** Session rows not ended whose process is gone: each holds an address until the next start gives it back. */
  async stale(): Promise<SessionRecord[]> {
    return (await this.store.sessionRows()).filter((row) => row.endedAt === null && !this.isRunning(row));
  }

  /**
   * Which inbox a hook drains. A hook runs for one session of its client, but only the client's
   * session id or the process table can say which: a running session whose session id matches;
   * else, for a client that runs one session per process, the running session of the hook's own
   * client process (this wins over a stale id, e.g. after Claude Code's /clear). A hook that cannot
   * tell reads the address all sessions share, never a session's own.
   */
  async readerFor(name: string, sessionKey: string | null, facts: HookSessionFacts): Promise<string> {
    const shared = clientAddressOf(name);
    if (shared === null) return name;
    if (!facts.sessionsOn) return shared;
    const live = await this.running(shared);
    if (live.length === 0) return shared;
    if (sessionKey !== null) {
      const byKey = onlyName(live.filter((row) => row.sessionKey === sessionKey));
      if (byKey !== null) return byKey;
    }
    if (facts.manySessionsPerProcess) return shared;
    const mine = facts.ownClientProcess();
    if (mine !== null) {
      const byProcess = onlyName(
        live.filter((row) => {
          const theirs = clientProcessOfRow(row);
          return theirs !== null && theirs[0] === mine[0] && theirs[1] === mine[1];
        }),
      );
      if (byProcess !== null) return byProcess;
    }
    return shared;
  }

  /**
   * Take a session address for a starting server. Which processes have ended is read before the
   * write lock (a `ps` can be slow); rows that appear meanwhile count as running.
   */
  async start(starter: SessionStarter, row: Omit<SessionRecord, 'name' | 'endedAt'>, context: Omit<SessionStartContext, 'ended'>): Promise<SessionStart> {
    const before = await this.store.sessionRows(starter.clientAddress);
    const endedBefore = new Set(before.filter((candidate) => candidate.endedAt === null && !this.isRunning(candidate)).map(rowKeyText));
    const now = formatStamp(context.nowMicros);
    const outcome = await this.store.startSession({
      clientAddress: starter.clientAddress,
      repo: repoOf(starter.clientAddress),
      row,
      now,
      decide: (rows, roster) => {
        const plan = decideSessionStart(rows, repoMembers(roster, repoOf(starter.clientAddress)), starter, {
          ...context,
          ended: (candidate) => endedBefore.has(rowKeyText(candidate)),
        });
        return { ...plan, registrations: registrationsFor(plan.name, row.repoPath, true) };
      },
    });
    const { name, crashedNames, warnings } = outcome.decision;
    const rows: AuditRow[] = [sessionRow(now, name, name, name, 'claim', `${quoted(name)} started`)];
    // A crashed session's end is news; an ended number handing over mail that arrived later is news only if there was some.
    for (const move of outcome.givenUp) if (crashedNames.includes(move.name) || move.moved > 0) rows.push(this.givenUpRow(now, move, starter.clientAddress));
    this.audit.append(rows);
    return { name, warnings };
  }

  /**
   * The session address a session id holds over the hub, for a token that speaks for a client
   * address: the one it holds already (noted as heard from), else one taken by the rules a
   * starting server follows. Any hub finds the same row: no sticky sessions. `readAlready`: the
   * client address's rows, read a moment ago by the caller. `pinned`: the handle the agent's name
   * asks for (`writer` of `shop/claude-writer`), taken as a local server's AGENT_BUS_NAME takes it.
   */
  async hubSession(
    clientAddress: string,
    repoPath: string,
    sessionKey: string,
    resumeHours: number,
    readAlready: SessionRecord[] | null = null,
    pinned: string | null = null,
  ): Promise<{ name: string; key: SessionRowKey; warnings: string[] }> {
    const micros = this.clock.nowMicros();
    const held = heldBy(readAlready ?? (await this.store.sessionRows(clientAddress)), sessionKey);
    if (held !== null) {
      // Noted at most once a minute, and at least twice in each idle period.
      const touchEvery = Math.min(HUB_SESSION_TOUCH_MICROS, (this.settings.hubSessionIdleMinutes * 60_000_000) / 2);
      if (held.lastSeen < formatStamp(micros - touchEvery)) await this.store.touchSession(rowKeyOf(held), formatStamp(micros));
      return { name: held.name, key: rowKeyOf(held), warnings: [] };
    }
    const row = hubSessionRow(clientAddress, repoPath, sessionKey, micros);
    const started = await this.start({ clientAddress, clientProcess: null, sessionKey, pinned }, row, { nowMicros: micros, resumeHours });
    return { ...started, key: rowKeyOf(row) };
  }

  private givenUpRow(now: string, move: AddressMove, clientAddress: string): AuditRow {
    return sessionRow(now, move.name, move.name, clientAddress, 'end', `${quoted(move.name)} ended; ${move.moved} unread message(s) moved to ${quoted(clientAddress)} for its other sessions`);
  }

  /**
   * Which rows of a client address are running, read from the process table before the write
   * lock (a `ps` can be slow). Rows that appear after the look count as running.
   */
  private async runningJudge(clientAddress: string): Promise<(row: SessionRecord) => boolean> {
    const before = await this.store.sessionRows(clientAddress);
    const ended = new Set(before.filter((row) => row.endedAt !== null || !this.isRunning(row)).map(rowKeyText));
    return (row) => row.endedAt === null && !ended.has(rowKeyText(row));
  }

  /** A session's server is stopping: mark it ended and, for a numbered address nobody else holds, hand its mail to the client address. */
  async end(key: SessionRowKey): Promise<void> {
    const running = await this.runningJudge(key.clientAddress);
    const now = stampOf(this.clock);
    const outcome = await this.store.endSession(key, repoOf(key.clientAddress), now, (rows, own) => {
      const others = rows.filter((row) => row.name === own.name && rowKeyText(row) !== rowKeyText(key) && running(row));
      return own.name !== key.clientAddress && isNumbered(own.name) && others.length === 0;
    });
    if (!outcome) return;
    if (outcome.move) this.audit.append([this.givenUpRow(now, outcome.move, key.clientAddress)]);
    else if (!isNumbered(outcome.name) && outcome.name !== key.clientAddress) {
      this.audit.append([sessionRow(now, outcome.name, outcome.name, outcome.name, 'end', `${quoted(outcome.name)} ended; its address and mail wait for that label to be taken again`)]);
    }
  }

  /** Rename a session to `<repo>/<client>-<label>`; its unread mail moves with it. Decided inside the write lock. */
  async rename(key: SessionRowKey, label: string): Promise<string> {
    const running = await this.runningJudge(key.clientAddress);
    const target = composeName(repoOf(key.clientAddress), parseNameLenient(key.clientAddress)?.client ?? null, label);
    const now = stampOf(this.clock);
    const outcome = await this.store.renameSession({
      key,
      to: target,
      now,
      plan: (rows) => {
        const own = rows.find((row) => rowKeyText(row) === rowKeyText(key));
        if (!own || own.endedAt !== null) throw new InvalidInputError('this server holds no session address to rename');
        const registrations = registrationsFor(target, own.repoPath, true);
        if (own.name === target) return { from: own.name, replace: [], moveMail: false, registrations };
        if (rows.some((row) => row !== own && row.name === own.name && running(row))) {
          throw new InvalidInputError(
            `${quoted(own.name)} is shared with other sessions the bus cannot tell apart, so a label would rename all of them; set only a topic instead`,
          );
        }
        if (rows.some((row) => row !== own && row.name === target && running(row))) {
          throw new ConflictError(`${quoted(target)} is held by another running session; pick another label`);
        }
        return {
          from: own.name,
          replace: rows.filter((row) => row !== own && row.name === target).map(rowKeyOf),
          moveMail: own.name !== key.clientAddress,
          registrations,
        };
      },
    });
    if (outcome.from !== target) {
      this.audit.append([sessionRow(now, target, outcome.from, target, 'rename', `${quoted(outcome.from)} is now ${quoted(target)}; ${outcome.moved} unread message(s) moved`)]);
    }
    return target;
  }

  /** Remember the client's id for a session whose server learned it late (Codex's first call). */
  bindKey(key: SessionRowKey, sessionKey: string): Promise<void> {
    return this.store.bindSessionKey(key, sessionKey);
  }

  /**
   * Record how to reach a client's session from outside; false when nothing changed and the
   * route is fresh. Hooks run at every turn: the route is read first, and written only then.
   */
  async recordRoute(route: ClientRoute, staleBefore: string): Promise<boolean> {
    if (routeUnchanged(await this.store.route(route.threadId), route, staleBefore)) return false;
    await this.store.saveRoute(route);
    return true;
  }
}
