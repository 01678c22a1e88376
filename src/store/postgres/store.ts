/**
 * The PostgreSQL backend, for a fleet on many machines: a small pool per process (pool.ts), every
 * read-modify-write one transaction, advisory and row locks where SQLite has its single writer, a
 * NOTIFY as each write commits. Each port is a module of its own over the pool; this puts them
 * together into the `Store`. This file is the engine's bundle (store-postgres.cjs), loaded only when
 * the database setting is a postgres:// URL.
 */
import type { Store } from '../ports/store.js';
import { composedOf } from '../shared/compose.js';
import { postgresBrain } from './brain.js';
import { postgresChanges } from './changes.js';
import { connectionConfig, displayUrl, type PostgresOptions } from './connection.js';
import { postgresCopy } from './copy.js';
import { postgresFollow } from './follow.js';
import { postgresInbox } from './inbox.js';
import { postgresMail } from './mail.js';
import { postgresMaintenance } from './maintenance.js';
import { postgresNotices } from './notices.js';
import { postgresOverview } from './overview.js';
import { PostgresPool } from './pool.js';
import { postgresReceipts } from './receipts.js';
import { postgresRoster } from './roster.js';
import { postgresSearch } from './search.js';
import { postgresSessions } from './sessions.js';
import { postgresReservations } from './reservations.js';
import { postgresTasks } from './tasks.js';
import { postgresPresence } from './presence.js';
import { postgresFleet } from './fleet.js';
import { postgresTokens } from './tokens.js';
import { postgresIntegrations } from './integrations.js';
import { postgresOutbox } from './outbox.js';
import { postgresWake } from './wake.js';

function postgresPorts(url: string, options: PostgresOptions): Store {
  const pool = new PostgresPool(url, options);
  const { sendsCommitted, close: stopIndexing, ...search } = postgresSearch(pool);
  let closed = false;
  return {
    location: displayUrl(url),
    ...postgresRoster(pool),
    ...postgresMail(pool, sendsCommitted),
    ...postgresInbox(pool),
    ...postgresReceipts(pool),
    ...postgresFollow(pool),
    ...postgresSessions(pool),
    ...postgresNotices(pool),
    ...postgresBrain(pool),
    ...postgresWake(pool),
    ...postgresTokens(pool),
    ...postgresIntegrations(pool),
    ...postgresOutbox(pool),
    ...postgresReservations(pool),
    ...postgresTasks(pool),
    ...postgresPresence(pool),
    ...postgresFleet(pool),
    ...postgresChanges(connectionConfig(url, options)),
    ...postgresCopy(pool),
    ...postgresMaintenance(pool),
    ...postgresOverview(pool),
    ...search,
    async close() {
      if (closed) return;
      closed = true;
      await stopIndexing();
      await pool.close();
    },
  };
}

export class PostgresStore extends composedOf<Store>() {
  constructor(url: string, options: PostgresOptions) {
    super(postgresPorts(url, options));
  }
}
