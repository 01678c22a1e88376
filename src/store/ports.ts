/**
 * The storage contract, one file per port under ports/, gathered here: the core imports the store
 * from this file alone. Every method is one whole operation whose transaction runs inside the
 * backend, so a backend whose driver is asynchronous (PostgreSQL) can implement it as readily as
 * the embedded SQLite one. Domain decisions that need data read inside the transaction are passed
 * in as synchronous functions from the core (for example, who a send reaches). Each port says of
 * each of its methods whether it runs once or may be retried (ports/attempts.ts).
 */

export type { AgentRecord, BrainState, ClientRoute, MessageRecord, PruneCounts, Registration, SessionRowKey, SessionRecord, TokenRecord } from '../model/records.js';
export type { Attempts, AttemptsOf } from './ports/attempts.js';
export * from './ports/brain.js';
export * from './ports/changes.js';
export * from './ports/copy.js';
export * from './ports/fleet.js';
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
export * from './ports/integrations.js';
export * from './ports/outbox.js';
export * from './ports/wake.js';
export * from './ports/store.js';
export * from './ports/tables.js';
