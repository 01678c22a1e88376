/** The inbox: what a reader has waiting, reading it or leasing it to a hook that shows it, the repo-wide claims, and what is pending. */
import type { MessageRecord } from '../../model/records.js';
import type { ReceiptWay } from '../../model/receipts.js';
import type { AttemptsOf } from './attempts.js';

export interface ReaderIdentity {
  name: string;
  /** The repo the reader is in: its fan-out copies are filed under it. */
  repo: string;
  /** The client address the reader shares with sibling sessions, or null. */
  clientAddress: string | null;
  isSession: boolean;
}

/**
 * A reader's inbox, as the store selects it (see QUERIES.md beside this folder): the
 * reader's own unread mail; for a session, unread mail at its client address that
 * it did not send, unless it holds its own copy of that fan-out; and unread mail to
 * its bare repo name while no agent holds that name, unless it or its client
 * address holds its own copy. Mail leased past `now` is left out. Oldest first
 * (sent_at, then message_id), at most `limit`.
 */
export interface InboxQuery {
  reader: ReaderIdentity;
  limit: number;
  /** Leave out fan-out copies a repo-mate already claimed (the Stop hook's view). */
  actionableOnly: boolean;
  /** Only urgent mail, without the copies a repo-mate claimed (what the pre-tool hook shows mid-turn). */
  urgentOnly?: boolean;
  now: string;
}

/** Whose mail a look before the pre-tool hook resolves its reader is about. */
export interface MidTurnLook {
  /** An agent or client address: its own mail, and its session addresses' (`name-…`). */
  name: string;
  /** Its repo: mail to the bare repo name. */
  repo: string;
  urgentOnly: boolean;
}

/** One copy of a fan-out in the reader's repo, as a read or a lease sees it. */
export interface FanoutCopy {
  messageId: string;
  fanoutId: string;
  toAgent: string;
  claimedBy: string | null;
  readAt: string | null;
}

/** What the core decides about the rows a read or a lease selects (core/inbox.ts). */
export interface InboxDecision {
  /** The rows as they are after the read or the lease: claimed_by set where it claims. */
  rows: MessageRecord[];
  /** Fan-outs to claim for the reader in its repo: every unclaimed copy there gets claimed_by = the reader. */
  claims: string[];
  /** Ids of rows whose claim a repo-mate's copy contested (audited as `claim`). */
  contested: string[];
  /** Other copies (ids) that reading these rows settles: marked read with them. */
  settle: string[];
}

/**
 * What a lease holds, as its reader gives it back: rows leased by `lease`, and the fan-outs it claimed
 * (a claim is given back only for a fan-out among those rows, where the reader still holds it).
 */
export interface HeldLease {
  lease: string;
  messageIds: string[];
  claims: string[];
}

/** Mail a lease showed, as its reader confirms it (over the hub, in a request of its own): the lease proves it. */
export interface ShownLease {
  reader: ReaderIdentity;
  lease: string;
  messageIds: string[];
  settle: string[];
}

/** What a read or a lease selects, and the decision over it. */
export interface InboxSelection {
  query: InboxQuery;
  /**
   * Called once inside the transaction with the rows selected and every copy, in
   * the reader's repo, of the fan-outs among them.
   */
  decide(rows: MessageRecord[], copies: FanoutCopy[]): InboxDecision;
}

export interface ReadOutcome {
  /** The rows as they are after the read: read_at, delivered_at and claimed_by updated. */
  messages: MessageRecord[];
  decision: InboxDecision;
}

export interface LeaseOutcome extends ReadOutcome {
  /** The lease held on the rows. */
  lease: string;
}

export interface InboxPort {
  /** The inbox, unchanged (a peek). */
  peekInbox(query: InboxQuery): Promise<MessageRecord[]>;
  /**
   * Read: select, decide once, then in the same transaction claim what the decision
   * claims and mark the rows and the copies it settles read and delivered at `now`, by `via`.
   */
  readInbox(input: InboxSelection & { via: ReceiptWay }): Promise<ReadOutcome>;
  /**
   * Lease, for a hook that marks mail delivered only once it has printed it (so a hook
   * that dies first loses nothing): select, decide once, claim, and lease the rows with
   * `lease` (a stamp, compared as text with later queries' `now`, then a token), leaving them unread.
   */
  leaseInbox(input: InboxSelection & { lease: string }): Promise<LeaseOutcome>;
  /**
   * Mark mail a lease showed read and delivered at `now` by `via`: each of its rows still unread,
   * still under that lease and addressed to a name the reader reads (its own, its client
   * address, its bare repo name); and each copy the read settles that is still unread, at the
   * reader's client address, of a fan-out among the rows marked. The rows marked, as they now stand.
   */
  markDelivered(shown: ShownLease, now: string, via: ReceiptWay): Promise<MessageRecord[]>;
  /**
   * Give back mail a lease could not show: its leases (only where they are still this lease),
   * and its claims where the reader still holds them and the copy is unread.
   */
  releaseLeases(reader: ReaderIdentity, held: HeldLease): Promise<void>;
  /** How much of the reader's inbox is unread: the inbox's rows, leased ones too (mail being shown is still unread). */
  pendingCount(reader: ReaderIdentity): Promise<number>;
  /**
   * Whether unread mail (urgent only, with `urgentOnly`) is addressed to `name`, to one of its
   * session addresses, or to its bare repo: a look cheap enough for every tool call, made before the
   * reader is known. It may say yes when that mail is not the reader's to take; never no when it is.
   */
  midTurnMailMayWait(look: MidTurnLook): Promise<boolean>;
  /** The copies of a fan-out in one repo, with whether each is leased. */
  fanoutCopies(fanoutId: string, repo: string): Promise<Array<FanoutCopy & { leased: boolean }>>;
}

export const INBOX_ATTEMPTS = {
  peekInbox: 'retryable',
  // A read or a lease run again finds its rows read or leased already: it answers with nothing.
  readInbox: 'once',
  leaseInbox: 'once',
  markDelivered: 'once',
  // Gives back only what is still the lease's: a second run finds nothing left to give back.
  releaseLeases: 'retryable',
  pendingCount: 'retryable',
  midTurnMailMayWait: 'retryable',
  fanoutCopies: 'retryable',
} as const satisfies AttemptsOf<InboxPort>;
