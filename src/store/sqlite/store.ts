/**
 * The embedded SQLite backend: one connection per process, statements prepared once and reused,
 * every read-modify-write in a `BEGIN IMMEDIATE` transaction. Each port is a module of its own
 * over the connection; this puts them together into the `Store`.
 */
import type { Store } from '../ports/store.js';
import { composedOf } from '../shared/compose.js';
import { sqliteBrain } from './brain.js';
import { sqliteChanges } from './changes.js';
import { sqliteCopy } from './copy.js';
import type { SqliteConnection } from './driver.js';
import { sqliteFollow } from './follow.js';
import { sqliteInbox } from './inbox.js';
import { sqliteMail } from './mail.js';
import { sqliteMaintenance } from './maintenance.js';
import { sqliteNotices } from './notices.js';
import { openSqlite, type SqliteOpenOptions } from './open.js';
import { sqliteOverview } from './overview.js';
import { sqliteReceipts } from './receipts.js';
import { sqliteRoster } from './roster.js';
import { sqliteSearch } from './search.js';
import { sqliteSessions } from './sessions.js';
import { sqliteReservations } from './reservations.js';
import { sqliteTasks } from './tasks.js';
import { sqlitePresence } from './presence.js';
import { sqliteFleet } from './fleet.js';
import { sqliteTokens } from './tokens.js';
import { sqliteIntegrations } from './integrations.js';
import { sqliteOutbox } from './outbox.js';
import { sqliteWake } from './wake.js';

function sqlitePorts(location: string, db: SqliteConnection): Store {
  return {
    location,
    ...sqliteRoster(db),
    ...sqliteMail(db),
    ...sqliteInbox(db),
    ...sqliteReceipts(db),
    ...sqliteFollow(db),
    ...sqliteSessions(db),
    ...sqliteNotices(db),
    ...sqliteBrain(db),
    ...sqliteWake(db),
    ...sqliteTokens(db),
    ...sqliteIntegrations(db),
    ...sqliteOutbox(db),
    ...sqliteReservations(db),
    ...sqliteTasks(db),
    ...sqlitePresence(db),
    ...sqliteFleet(db),
    ...sqliteChanges(db, location),
    ...sqliteCopy(db),
    ...sqliteMaintenance(db),
    ...sqliteOverview(db),
    ...sqliteSearch(db),
    close: async () => db.close(),
  };
}

export class SqliteStore extends composedOf<Store>() {
  /** The underlying connection, for migrations tests and benchmarks that seed data. */
  readonly connection: SqliteConnection;

  constructor(location: string, options: SqliteOpenOptions = {}) {
    const db = openSqlite(location, options);
    super(sqlitePorts(location, db));
    this.connection = db;
  }
}
