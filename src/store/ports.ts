/**
 * The storage contract, one file per port under ports/, gathered here: the core imports the store
 * from this file alone. Every method is one whole operation whose transaction runs inside the
 * backend, so a backend whose driver is asynchronous (PostgreSQL) can implement it as readily as
 * the embedded SQLite one. Domain decisions that need data read inside the transaction are passed
 * in as synchronous functions from the core (for example, who a send reaches). Each port says of
 * each of its methods whether it runs once or may be retried (ports/attempts.ts).
 */
import type { AttemptsOf } from './ports/attempts.js';
import { BRAIN_ATTEMPTS, type BrainPort } from './ports/brain.js';
import { CHANGES_ATTEMPTS, type ChangesPort } from './ports/changes.js';
import { COPY_ATTEMPTS, type CopyPort } from './ports/copy.js';
import { FOLLOW_ATTEMPTS, type FollowPort } from './ports/follow.js';
import { INBOX_ATTEMPTS, type InboxPort } from './ports/inbox.js';
import { MAIL_ATTEMPTS, type MailPort } from './ports/mail.js';
import { MAINTENANCE_ATTEMPTS, type MaintenancePort } from './ports/maintenance.js';
import { NOTICES_ATTEMPTS, type NoticesPort } from './ports/notices.js';
import { OVERVIEW_ATTEMPTS, type OverviewPort } from './ports/overview.js';
import { RECEIPTS_ATTEMPTS, type ReceiptsPort } from './ports/receipts.js';
import { ROSTER_ATTEMPTS, type RosterPort } from './ports/roster.js';
import { SEARCH_ATTEMPTS, type SearchPort } from './ports/search.js';
import { SESSIONS_ATTEMPTS, type SessionsPort } from './ports/sessions.js';
import { TOKENS_ATTEMPTS, type TokensPort } from './ports/tokens.js';
import { WAKE_ATTEMPTS, type WakePort } from './ports/wake.js';

export type { AgentRecord, BrainState, ClientRoute, MessageRecord, PruneCounts, Registration, SessionKey, SessionRecord, TokenRecord } from '../model/records.js';
export type { Attempts, AttemptsOf } from './ports/attempts.js';
export * from './ports/brain.js';
export * from './ports/changes.js';
export * from './ports/copy.js';
export * from './ports/follow.js';
export * from './ports/inbox.js';
export * from './ports/mail.js';
export * from './ports/maintenance.js';
export * from './ports/notices.js';
export * from './ports/overview.js';
export * from './ports/receipts.js';
export * from './ports/roster.js';
export * from './ports/search.js';
export * from './ports/sessions.js';
export * from './ports/tokens.js';
export * from './ports/wake.js';

/** A backend: every port, over one database. */
export interface Store
  extends RosterPort,
    MailPort,
    InboxPort,
    ReceiptsPort,
    FollowPort,
    SessionsPort,
    NoticesPort,
    BrainPort,
    WakePort,
    TokensPort,
    ChangesPort,
    CopyPort,
    MaintenancePort,
    OverviewPort,
    SearchPort {
  /** Where the data lives, as shown to the user (a file path, or a URL without its password). */
  readonly location: string;
  close(): Promise<void>;
}

/** Every operation of a store, and whether it runs once or may be retried. */
export const STORE_ATTEMPTS = {
  ...ROSTER_ATTEMPTS,
  ...MAIL_ATTEMPTS,
  ...INBOX_ATTEMPTS,
  ...RECEIPTS_ATTEMPTS,
  ...FOLLOW_ATTEMPTS,
  ...SESSIONS_ATTEMPTS,
  ...NOTICES_ATTEMPTS,
  ...BRAIN_ATTEMPTS,
  ...WAKE_ATTEMPTS,
  ...TOKENS_ATTEMPTS,
  ...CHANGES_ATTEMPTS,
  ...COPY_ATTEMPTS,
  ...MAINTENANCE_ATTEMPTS,
  ...OVERVIEW_ATTEMPTS,
  ...SEARCH_ATTEMPTS,
} as const satisfies AttemptsOf<Omit<Store, 'location' | 'close'>>;
