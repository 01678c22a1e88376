/** File reservations and the edits that reveal collisions. The rules (what overlaps, who conflicts) are the core's. */
import type { EditRecord, ReservationRecord } from '../../model/records.js';
import type { AttemptsOf } from './attempts.js';

/** What a reservation request does, decided by the core over the repo's reservations read inside the transaction. */
export interface ReserveDecision {
  /** New rows to write: all of them, or (when `refused`) none. */
  grant: ReservationRecord[];
  /** The caller's own reservations renewed: their new end. */
  renew: Array<{ reservationId: string; expiresAt: string }>;
  /** Reservations whose holder is known to be gone: removed before the grant. */
  drop: string[];
  /** Why nothing is written: the first conflict found. */
  refused: string | null;
}

export interface ReserveRequest<D extends ReserveDecision> {
  repo: string;
  now: string;
  /** Pure: given the repo's reservations not yet expired at `now`, what to write. Runs once, inside the transaction. */
  decide(current: ReservationRecord[]): D;
}

export interface ReserveOutcome<D extends ReserveDecision> {
  decision: D;
  /** The rows removed as expired or dropped, for the audit. */
  ended: ReservationRecord[];
}

/** Which files a look for the reservations that may cover them is about. */
export interface CoveringRequest {
  repo: string;
  now: string;
  files: string[];
  foldCase: boolean;
}

/**
 * The characters of a pattern the engines' own matchers (SQLite's GLOB, SQL's LIKE) cannot stand in
 * for: a pattern with any of them (a set, braces, an extglob, an escape) is always returned.
 */
export const UNMATCHED_GLOB_CHARS = ['[', '{', '(', '\\'] as const;

/** Which reservations to release: a holder's (all of them, or those with these patterns), in one repo or all. */
export interface ReleaseRequest {
  repo: string | null;
  holder: string | null;
  patterns: string[] | null;
}

/** A write to record, and the window in which another agent's write of the same file is a collision. */
export interface EditRequest {
  edit: EditRecord;
  /** Writes at or after this moment count. */
  since: string;
}

/** Another agent's write of the same file within the window, not yet alerted for this pair and file. */
export interface Collision {
  repo: string;
  path: string;
  /** The agent who wrote first. */
  other: string;
  otherAt: string;
}

export interface ReservationsPort {
  /** Decide and write a reservation request in one transaction: all of its paths or none. */
  reserve<D extends ReserveDecision>(input: ReserveRequest<D>): Promise<ReserveOutcome<D>>;
  /** Remove reservations; the rows removed. */
  releaseReservations(request: ReleaseRequest): Promise<ReservationRecord[]>;
  /** The reservations not expired at `now`, of one repo or all, oldest first. */
  reservationsAt(repo: string | null, now: string): Promise<ReservationRecord[]>;
  /**
   * The reservations of a repo not expired at `now` that may cover one of these files (repo-relative):
   * every one that does and perhaps others, oldest first. Which of them covers a file is the core's to
   * decide (`coversFile`); this only spares it reading the repo's every reservation. With `foldCase`,
   * letter case is no difference.
   */
  reservationsCovering(request: CoveringRequest): Promise<ReservationRecord[]>;
  /** Remove reservations expired at `now` and those with these ids (their holder is gone); the rows removed. */
  endReservations(now: string, gone: string[]): Promise<ReservationRecord[]>;
  /**
   * Record a write, and return the collisions it makes: another agent's write of the same file since
   * `since`, when no collision of that pair and file was recorded since then. The collisions returned
   * are recorded too, so each is returned once per window.
   */
  recordEdit(request: EditRequest): Promise<Collision[]>;
  /** Remove edits and recorded collisions older than `before`; how many rows went. */
  pruneEdits(before: string): Promise<number>;
}

export const RESERVATIONS_ATTEMPTS = {
  // Run again, a grant finds its own rows and renews them; a refusal refuses again.
  reserve: 'once',
  // Run again, it finds them gone and names none.
  releaseReservations: 'once',
  reservationsAt: 'retryable',
  reservationsCovering: 'retryable',
  endReservations: 'once',
  // Run again, the collisions it returned are recorded and not returned again.
  recordEdit: 'once',
  pruneEdits: 'once',
} as const satisfies AttemptsOf<ReservationsPort>;
