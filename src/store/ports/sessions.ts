/** Sessions of a client, the routes to reach them from outside, and their counters. */
import type { AgentRecord, ClientRoute, Registration, SessionRowKey, SessionRecord } from '../../model/records.js';
import type { AttemptsOf } from './attempts.js';

export interface SessionStartDecision {
  /** The address this session takes: a session address, or the client address it must share. */
  name: string;
  /** Rows ended longer ago than the resume window: deleted. */
  expire: SessionRowKey[];
  /** Rows whose process is gone but which never said so: marked ended now. */
  endCrashed: SessionRowKey[];
  /** Numbered addresses nobody holds any more: their unread mail moves to the client address. */
  giveUp: string[];
  /** An ended row whose address this session takes back: replaced by the new row. */
  replace: SessionRowKey[];
  /** The roster rows the session's name needs, written in the same transaction. */
  registrations: Registration[];
}

export interface SessionStart<D extends SessionStartDecision> {
  clientAddress: string;
  /** The client address's repo: its roster rows are read for the decision, and given-up mail stays within it. */
  repo: string;
  /** The new row, without the name the decision gives it. */
  row: Omit<SessionRecord, 'name' | 'endedAt'>;
  now: string;
  /**
   * Called once inside the start's transaction with the client address's session rows and
   * the rows that may belong to its repo (as agentsOfRepo reads them).
   */
  decide(rows: SessionRecord[], roster: AgentRecord[]): D;
}

export interface AddressMove {
  name: string;
  /** Unread messages that moved to the client address. */
  moved: number;
}

export interface SessionStartOutcome<D extends SessionStartDecision> {
  decision: D;
  /**
   * Each address given up: its unread mail moved to the client address, except fan-out
   * copies the client address holds a copy of already; the mail it sent that nobody has
   * read now comes from the client address; its roster row removed.
   */
  givenUp: AddressMove[];
}

export interface RenamePlan {
  from: string;
  /** Ended rows holding the new name (a label left behind): replaced by the renamed row, their mail now its. */
  replace: SessionRowKey[];
  /**
   * False when renaming away from the shared client address: its mail stays for the others.
   * True: unread mail to the old name moves to the new one, mail the old name sent that nobody
   * read now comes from the new one, and the old name leaves the roster.
   */
  moveMail: boolean;
  /** The roster rows the new name needs (it keeps its own topic, else takes the old name's). */
  registrations: Registration[];
}

export interface RenameInput {
  key: SessionRowKey;
  to: string;
  now: string;
  /** Decides the rename, once, from the client's session rows read inside the transaction; throws to refuse it. */
  plan(rows: SessionRecord[]): RenamePlan;
}

export interface SessionsPort {
  sessionRows(clientAddress?: string): Promise<SessionRecord[]>;
  startSession<D extends SessionStartDecision>(input: SessionStart<D>): Promise<SessionStartOutcome<D>>;
  /**
   * Mark a session ended; `giveUp` decides, from the client's rows read inside
   * the transaction, whether its address is given up (mail to the client address).
   */
  endSession(
    key: SessionRowKey,
    repo: string,
    now: string,
    giveUp: (rows: SessionRecord[], own: SessionRecord) => boolean,
  ): Promise<{ name: string; move: AddressMove | null } | null>;
  /** Returns the old name and how many unread messages moved with the rename. */
  renameSession(input: RenameInput): Promise<{ from: string; moved: number }>;
  bindSessionKey(key: SessionRowKey, sessionKey: string): Promise<void>;
  /** Note that a session was heard from at `now` (a hub's sessions live while they are heard from). */
  touchSession(key: SessionRowKey, now: string): Promise<void>;
  route(threadId: string): Promise<ClientRoute | null>;
  /**
   * Write a route (insert or replace its row). A route given no turn state keeps the one
   * stored; one that says `busy` clears the queued mark (a turn has started).
   */
  saveRoute(route: ClientRoute): Promise<void>;
  routes(agent?: string): Promise<ClientRoute[]>;
  /** Mark an idle session as queued to, once until its next turn starts: false when it is busy or already queued. */
  markQueued(threadId: string, now: string): Promise<boolean>;
  /** Add one to a session's counter and return the new value. */
  tick(session: string, counter: string, now: string): Promise<number>;
}

export const SESSIONS_ATTEMPTS = {
  sessionRows: 'retryable',
  // Run again, a start decides anew over the rows its first run wrote.
  startSession: 'once',
  // Run again, it finds the session ended already and answers null.
  endSession: 'once',
  renameSession: 'once',
  bindSessionKey: 'retryable',
  touchSession: 'retryable',
  route: 'retryable',
  saveRoute: 'retryable',
  routes: 'retryable',
  // A compare-and-set: run again, it answers false.
  markQueued: 'once',
  tick: 'once',
} as const satisfies AttemptsOf<SessionsPort>;
