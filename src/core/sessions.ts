/**
 * Session addresses: which address a starting server takes, and what happens
 * to an address when its session ends. Decisions here are pure; the store
 * applies them in one transaction.
 */
import { composeName, MAX_SESSION_NUMBER, parseNameLenient } from './names.js';
import { formatStamp } from '../model/clock.js';
import { clientProcessOf, type LineageEntry } from './liveness.js';
import { isHubSession } from './hub-sessions.js';
import type { AgentRecord, ClientRoute, SessionRowKey, SessionRecord } from '../model/records.js';
import type { SessionStartDecision } from '../store/ports.js';
import { quoted } from '../model/quote.js';


export interface SessionStarter {
  clientAddress: string;
  /** The nearest non-shell ancestor of the server: the client process. */
  clientProcess: LineageEntry | null;
  sessionKey: string | null;
  /** A handle asked for in the environment (label or number). */
  pinned: string | null;
}

export interface SessionStartContext {
  nowMicros: number;
  resumeHours: number;
  /** Evidence that a row's server process has ended (rows it does not know count as running). */
  ended(row: SessionRecord): boolean;
  maxNumber?: number;
}

export interface SessionStartPlan extends Omit<SessionStartDecision, 'registrations'> {
  /** The names of the rows marked ended now (their process is gone): their end is news for the audit. */
  crashedNames: string[];
  warnings: string[];
}

export function rowKeyOf(row: Pick<SessionRecord, 'serverPid' | 'serverStarted' | 'clientAddress'>): SessionRowKey {
  return { serverPid: row.serverPid, serverStarted: row.serverStarted, clientAddress: row.clientAddress };
}

export function clientProcessOfRow(row: SessionRecord): LineageEntry | null {
  try {
    return clientProcessOf(JSON.parse(row.lineage) as LineageEntry[]);
  } catch {
    return null;
  }
}

function sameProcess(a: LineageEntry | null, b: LineageEntry | null): boolean {
  return a !== null && b !== null && a[0] === b[0] && a[1] === b[1];
}

/**
 * Two servers are the same session when they name the same session id (a hub's session rows have no
 * process, only that); else unless something tells them apart: another client process, or two
 * different session ids.
 */
export function couldBeSameSession(row: SessionRecord, me: SessionStarter): boolean {
  if (row.sessionKey !== null && me.sessionKey !== null) return row.sessionKey === me.sessionKey && (isHubSession(row) || me.clientProcess === null || sameProcess(clientProcessOfRow(row), me.clientProcess));
  return sameProcess(clientProcessOfRow(row), me.clientProcess);
}

export function isNumbered(name: string): boolean {
  const handle = parseNameLenient(name)?.handle ?? null;
  return handle !== null && /^\d+$/.test(handle);
}

export function decideSessionStart(rows: SessionRecord[], roster: AgentRecord[], me: SessionStarter, context: SessionStartContext): SessionStartPlan {
  const warnings: string[] = [];
  const cutoff = formatStamp(context.nowMicros - context.resumeHours * 3_600_000_000);
  const maxNumber = context.maxNumber ?? MAX_SESSION_NUMBER;
  const expire = rows.filter((row) => row.endedAt !== null && row.endedAt < cutoff);
  const kept = rows.filter((row) => !expire.includes(row));
  const crashed = kept.filter((row) => row.endedAt === null && context.ended(row));
  const live = kept.filter((row) => row.endedAt === null && !crashed.includes(row));
  const ended = kept.filter((row) => !live.includes(row));
  const tracked = new Set(rows.map((row) => row.name));
  const [repo, client] = me.clientAddress.split('/') as [string, string];
  const unavailable = new Set(live.map((row) => row.name));
  // Numbered names an older agent-bus registered without a session row: someone may still use them.
  for (const agent of roster) if (isNumbered(agent.name) && agent.name.startsWith(`${me.clientAddress}-`) && !tracked.has(agent.name)) unavailable.add(agent.name);

  const decide = (name: string, replace: SessionRecord[] = []): SessionStartPlan => {
    const stillHeld = new Set([...live.map((row) => row.name), name]);
    const giveUp = [...new Set(crashed.map((row) => row.name))].filter((held) => !stillHeld.has(held) && isNumbered(held));
    // A number taken fresh does not inherit the mail an ended holder left there.
    const leftBehind = ended.filter((row) => row.name === name && !replace.includes(row) && isNumbered(name) && row.endedAt !== null);
    if (leftBehind.length > 0 && !giveUp.includes(name)) giveUp.push(name);
    return { name, expire: expire.map(rowKeyOf), endCrashed: crashed.map(rowKeyOf), crashedNames: crashed.map((row) => row.name), giveUp, replace: replace.map(rowKeyOf), warnings };
  };

  const twin = live.find((row) => couldBeSameSession(row, me));
  if (twin) return decide(twin.name);

  if (me.pinned !== null) {
    const wanted = composeName(repo, client, me.pinned);
    if (!unavailable.has(wanted)) {
      const previous = ended.filter((row) => row.name === wanted);
      return decide(wanted, previous);
    }
    warnings.push(`${quoted(wanted)} is held by another running session, so this one was given a number instead`);
  }

  const comeback = ended
    .filter((row) => !unavailable.has(row.name))
    // The same conversation (session id), or a restarted server of the same client process that no session id tells apart.
    .filter((row) => (row.sessionKey !== null && row.sessionKey === me.sessionKey) || couldBeSameSession(row, me))
    .sort((a, b) => ((b.endedAt ?? '9') < (a.endedAt ?? '9') ? -1 : 1))[0];
  if (comeback) return decide(comeback.name, ended.filter((row) => row.name === comeback.name));

  const reserved = new Set(ended.map((row) => row.name));
  const free: string[] = [];
  for (let number = 1; number <= maxNumber; number++) {
    const name = composeName(repo, client, number);
    if (!unavailable.has(name)) free.push(name);
  }
  const chosen = free.find((name) => !reserved.has(name)) ?? free[0];
  if (chosen) return decide(chosen);
  warnings.push(`every session number of ${quoted(me.clientAddress)} is taken, so this session shares the client address`);
  return decide(me.clientAddress);
}

/** Whether a route a hook would write says nothing new: same session, executable and process, its turn state unchanged (or not given), and fresh. */
export function routeUnchanged(known: ClientRoute | null, route: ClientRoute, staleBefore: string): boolean {
  if (known === null) return false;
  const turnState = route.turnState ?? null;
  return (
    known.agent === route.agent &&
    known.executable === route.executable &&
    known.clientPid === route.clientPid &&
    known.clientStarted === route.clientStarted &&
    (turnState === null || known.turnState === turnState) &&
    known.updatedAt >= staleBefore
  );
}
