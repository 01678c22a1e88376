/** A backend: every port over one database, and whether each operation runs once or may be retried. */
import type { AttemptsOf } from './attempts.js';
import { BRAIN_ATTEMPTS, type BrainPort } from './brain.js';
import { CHANGES_ATTEMPTS, type ChangesPort } from './changes.js';
import { COPY_ATTEMPTS, type CopyPort } from './copy.js';
import { FOLLOW_ATTEMPTS, type FollowPort } from './follow.js';
import { INBOX_ATTEMPTS, type InboxPort } from './inbox.js';
import { MAIL_ATTEMPTS, type MailPort } from './mail.js';
import { MAINTENANCE_ATTEMPTS, type MaintenancePort } from './maintenance.js';
import { NOTICES_ATTEMPTS, type NoticesPort } from './notices.js';
import { OVERVIEW_ATTEMPTS, type OverviewPort } from './overview.js';
import { RECEIPTS_ATTEMPTS, type ReceiptsPort } from './receipts.js';
import { ROSTER_ATTEMPTS, type RosterPort } from './roster.js';
import { SEARCH_ATTEMPTS, type SearchPort } from './search.js';
import { SESSIONS_ATTEMPTS, type SessionsPort } from './sessions.js';
import { RESERVATIONS_ATTEMPTS, type ReservationsPort } from './reservations.js';
import { TASKS_ATTEMPTS, type TasksPort } from './tasks.js';
import { FLEET_ATTEMPTS, type FleetPort } from './fleet.js';
import { PRESENCE_ATTEMPTS, type PresencePort } from './presence.js';
import { TOKENS_ATTEMPTS, type TokensPort } from './tokens.js';
import { INTEGRATIONS_ATTEMPTS, type IntegrationsPort } from './integrations.js';
import { OUTBOX_ATTEMPTS, type OutboxPort } from './outbox.js';
import { WAKE_ATTEMPTS, type WakePort } from './wake.js';

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
    IntegrationsPort,
    OutboxPort,
    ReservationsPort,
    TasksPort,
    FleetPort,
    PresencePort,
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
  ...INTEGRATIONS_ATTEMPTS,
  ...OUTBOX_ATTEMPTS,
  ...RESERVATIONS_ATTEMPTS,
  ...TASKS_ATTEMPTS,
  ...FLEET_ATTEMPTS,
  ...PRESENCE_ATTEMPTS,
  ...CHANGES_ATTEMPTS,
  ...COPY_ATTEMPTS,
  ...MAINTENANCE_ATTEMPTS,
  ...OVERVIEW_ATTEMPTS,
  ...SEARCH_ATTEMPTS,
} as const satisfies AttemptsOf<Omit<Store, 'location' | 'close'>>;
