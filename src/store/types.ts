/**
 * The storage contract. Every method is one whole operation whose transaction
 * runs inside the backend, so a backend whose driver is asynchronous
 * (PostgreSQL) can implement it as readily as the embedded SQLite one.
 * Domain decisions that need data read inside the transaction are passed in
 * as synchronous functions from the core (for example, who a send reaches).
 */

export interface AgentRecord {
  name: string;
  repoPath: string;
  registeredAt: string;
  lastSeen: string;
  groupName: string | null;
  client: string | null;
  topic: string | null;
}

export interface MessageRecord {
  messageId: string;
  fromAgent: string;
  toAgent: string;
  body: string;
  threadId: string;
  sentAt: string;
  readAt: string | null;
  deliveredAt: string | null;
  addressedTo: string | null;
  fanoutId: string | null;
  toGroup: string | null;
  claimedBy: string | null;
}

/** How an agent is put on the roster. */
export interface Registration {
  name: string;
  repoPath: string;
  groupName: string | null;
  client: string | null;
  /**
   * The identity's owner registers authoritatively (its repo path is updated);
   * someone merely speaking as a name only inserts it when missing.
   */
  authoritative: boolean;
}

/** Which roster rows a send needs to see to decide its recipients. */
export type RosterQuery = { kind: 'all' } | { kind: 'name'; name: string } | { kind: 'group'; group: string };

export interface PlannedRow {
  messageId: string;
  toAgent: string;
  toGroup: string | null;
}

export interface SendPlan {
  kind: 'direct' | 'group' | 'broadcast';
  fanoutId: string | null;
  threadId: string | null;
  rows: PlannedRow[];
}

export interface SendInput {
  /** Registrations of the speaker, made in the same transaction as the send. */
  register: Registration[];
  from: string;
  addressedTo: string;
  body: string;
  sentAt: string;
  roster: RosterQuery;
  /** Decides the recipients from the roster rows read inside the transaction; may throw to abort. */
  plan(candidates: AgentRecord[]): SendPlan;
}

export interface ReaderIdentity {
  name: string;
  group: string;
  /** The client address the reader shares with sibling sessions, or null. */
  clientAddress: string | null;
  isSession: boolean;
}

export interface ReadInput {
  reader: ReaderIdentity;
  markRead: boolean;
  limit: number;
  /** Leave out fan-out copies a repo-mate already claimed (the Stop hook's view). */
  actionableOnly: boolean;
  now: string;
}

export interface ReadOutcome {
  /** The rows as they are after the read: read_at, delivered_at and claimed_by updated. */
  messages: MessageRecord[];
  /** Ids of rows whose fan-out this read claimed while a repo-mate also holds a copy. */
  contestedClaims: Set<string>;
}

export interface SessionHolder {
  name: string;
  serverPid: number;
  serverStarted: string;
}

export interface RosterSnapshot {
  agents: AgentRecord[];
  /** Unread mail per roster name, counted as that name's own inbox would see it. */
  pending: Map<string, number>;
  /** Session rows not marked ended: who may still be holding a session address. */
  sessionHolders: SessionHolder[];
}

export interface ForgetOutcome {
  removed: boolean;
  /** Unread mail still addressed to the forgotten name. */
  pending: number;
}

export interface Store {
  readonly location: string;
  register(registrations: Registration[], now: string): Promise<void>;
  touch(names: string[], now: string): Promise<void>;
  getAgent(name: string): Promise<AgentRecord | null>;
  /** Agents whose group is `group` (client and session rows) or whose name is `group`. */
  groupMembers(group: string): Promise<AgentRecord[]>;
  roster(): Promise<RosterSnapshot>;
  send(input: SendInput): Promise<MessageRecord[]>;
  readInbox(input: ReadInput): Promise<ReadOutcome>;
  pendingCount(reader: ReaderIdentity): Promise<number>;
  forget(name: string): Promise<ForgetOutcome>;
  forgetGroup(group: string): Promise<string[]>;
  thread(threadId: string, limit: number): Promise<MessageRecord[]>;
  /** The newest `limit` messages of the bus, oldest first. */
  recentMessages(limit: number): Promise<MessageRecord[]>;
  close(): Promise<void>;
}
