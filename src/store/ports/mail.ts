/** Mail: sending, and reading threads and the newest mail back. */
import type { AgentRecord, MessagePriority, MessageRecord, OutboundIntake, OutletRecord, Registration } from '../../model/records.js';
import type { AttemptsOf } from './attempts.js';
import type { IdLookup } from '../../model/short-id.js';
import type { RosterQuery } from './roster.js';

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
  /** Every copy's priority (null: plain mail). */
  priority: MessagePriority | null;
  /** The task whose result this mail is, and its state (absent: it is none). */
  taskResult?: { id: string; state: string } | null;
  roster: RosterQuery;
  /** Decides the recipients from the roster rows read inside the transaction; may throw to abort. */
  plan(candidates: AgentRecord[]): SendPlan;
  /**
   * Decides, from the rows the send writes and the outbound integrations read inside the same
   * transaction, the events queued for them (written in it too). Called only when there are any.
   */
  outbound?(records: MessageRecord[], outlets: OutletRecord[]): OutboundIntake[];
}

export interface MailPort {
  /**
   * Store a send: its speaker's registrations, the roster rows `roster` names read, `plan` called
   * once with them, and the rows it plans written, in one transaction. Sends made together may share
   * that transaction; one that fails (its plan refuses it) writes nothing and undoes no other.
   */
  send(input: SendInput): Promise<MessageRecord[]>;
  thread(threadId: string, limit: number): Promise<MessageRecord[]>;
  /** Thread ids that begin with one of `lookup.prefixes`, in order, at most `limit` of them. */
  threadIdsNamed(lookup: IdLookup, limit: number): Promise<string[]>;
  /** The newest `limit` messages of the bus, oldest first. */
  recentMessages(limit: number): Promise<MessageRecord[]>;
}

export const MAIL_ATTEMPTS = {
  // Run again, a send stores its mail twice.
  send: 'once',
  thread: 'retryable',
  threadIdsNamed: 'retryable',
  recentMessages: 'retryable',
} as const satisfies AttemptsOf<MailPort>;
