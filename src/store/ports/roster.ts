/** The roster: who is on the bus, in which repo, seen when. */
import type { AgentRecord, Registration, SessionRecord } from '../../model/records.js';
import type { AttemptsOf } from './attempts.js';

/** Which roster rows a send needs to see to decide its recipients. */
export type RosterQuery = { kind: 'all' } | { kind: 'name'; name: string } | { kind: 'repo'; repo: string };

/** An unread message to a name nobody holds, which may still be waiting for a repo's first reader. */
export interface OrphanMail {
  toAgent: string;
  messageId: string;
  fanoutId: string | null;
}

/** The roster and its unread mail, read in one snapshot. */
export interface RosterSnapshot {
  agents: AgentRecord[];
  /** Unread messages per recipient name, whoever holds it. */
  unread: Array<{ toAgent: string; n: number }>;
  /** The unread mail of the recipients `orphansOf` picked. */
  orphans: OrphanMail[];
  /** For each fan-out among the orphans: every recipient it has a copy for. */
  copyHolders: Map<string, string[]>;
  /** Session rows not marked ended: who may still be holding a session address. */
  sessionHolders: SessionRecord[];
}

export interface ForgetOutcome {
  removed: boolean;
  /** Unread mail still addressed to the forgotten name. */
  pending: number;
}

export interface RosterPort {
  register(registrations: Registration[], now: string): Promise<void>;
  touch(names: string[], now: string): Promise<void>;
  getAgent(name: string): Promise<AgentRecord | null>;
  /**
   * Every row that may belong to repo `repo`: its repo column (group_name) is `repo`, its name
   * is `repo`, or it has no repo column and its name begins `repo/`. A superset: the core
   * decides membership (core/roster.ts).
   */
  agentsOfRepo(repo: string): Promise<AgentRecord[]>;
  /**
   * The roster, its unread counts and its session holders in one snapshot. `orphansOf` is
   * called once, with the roster and the names unread mail is addressed to, and names the
   * recipients (not on the roster) whose unread mail and fan-out copy holders to read too.
   */
  roster(orphansOf: (agents: AgentRecord[], recipients: string[]) => string[]): Promise<RosterSnapshot>;
  forget(name: string): Promise<ForgetOutcome>;
  /** Take these names off the roster, in one transaction; the names that were there. */
  removeAgents(names: string[]): Promise<string[]>;
  /** Roster rows registered for a repo path. */
  agentsAt(repoPath: string): Promise<AgentRecord[]>;
  setTopic(name: string, topic: string | null): Promise<void>;
  /**
   * Take a name init replaced off the roster. With `moveTo`, its unread mail is re-addressed
   * there; without, it stays (and is counted) for whoever reads that name next.
   */
  retire(old: string, moveTo: string | null): Promise<{ removed: boolean; moved: number; left: number }>;
}

export const ROSTER_ATTEMPTS = {
  register: 'retryable',
  touch: 'retryable',
  getAgent: 'retryable',
  agentsOfRepo: 'retryable',
  roster: 'retryable',
  // A second run finds the name gone and says it removed nothing.
  forget: 'once',
  removeAgents: 'once',
  agentsAt: 'retryable',
  setTopic: 'retryable',
  retire: 'once',
} as const satisfies AttemptsOf<RosterPort>;
