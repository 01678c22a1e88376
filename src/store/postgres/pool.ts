/**
 * The pool one process uses and the transactions over it: the schema migrated once before the first
 * statement, every read-modify-write one transaction. What SQLite serializes with its single writer is
 * serialized here by transaction-level advisory locks on what the operation decides about (a repo's
 * inbox, a session's notices, a channel, a client address, an agent's wakes). Every write transaction
 * sends a NOTIFY (a distinct payload) as it commits. Errors that mean the server cannot be used come
 * out as one clear StoreUnavailableError.
 */
import type pg from 'pg';
import { StoreUnavailableError } from '../../model/errors.js';
import { uniqueToken } from '../../model/ids.js';
import { CHANGE_CHANNEL } from './changes.js';
import { createPool, isUnreachable, unreachable, type PostgresOptions } from './connection.js';
import { migrate } from './migrate.js';

/** One statement inside a transaction. */
export type Query = (sql: string, params?: unknown[]) => Promise<pg.QueryResult>;

/** Advisory lock spaces: the first key of pg_advisory_xact_lock(int, int). */
export const LOCK = { inbox: 1, notices: 2, channel: 3, client: 4, wakes: 5, searchIndex: 6, reservations: 7, edits: 8, fleet: 9 } as const;

/** An advisory lock: its space, and the bus's own name it is taken on (a repo, a session, a channel). */
export type AdvisoryLock = [number, string];

export class PostgresPool {
  private readonly pool: pg.Pool;
  private ready: Promise<void> | null = null;

  constructor(
    private readonly url: string,
    options: PostgresOptions,
  ) {
    this.pool = createPool(url, options);
  }

  /** The schema, migrated once per process before the first statement. */
  private prepare(): Promise<void> {
    this.ready ??= migrate(this.pool).then(
      () => undefined,
      (error: unknown) => {
        this.ready = null;
        throw this.translate(error);
      },
    );
    return this.ready;
  }

  /** An error as the store's caller sees it: a server that cannot be used is one clear error naming host and port. */
  translate(error: unknown): unknown {
    if (error instanceof StoreUnavailableError) return error;
    return isUnreachable(error) ? unreachable(this.url, error) : error;
  }

  /** One statement, a transaction of its own: its rows. */
  async read<T>(sql: string, params: unknown[] = []): Promise<T[]> {
    await this.prepare();
    try {
      return (await this.pool.query(sql, params)).rows as T[];
    } catch (error) {
      throw this.translate(error);
    }
  }

  async one<T>(sql: string, params: unknown[] = []): Promise<T | undefined> {
    return (await this.read<T>(sql, params))[0];
  }

  /**
   * One transaction: the advisory locks first (in a fixed order, so two transactions never
   * wait on each other), then the work, then the NOTIFY that tells waiters to look again.
   */
  async transaction<T>(locks: AdvisoryLock[], work: (query: Query) => Promise<T>, notify = true): Promise<T> {
    await this.prepare();
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw this.translate(error);
    }
    const query: Query = (sql, params) => client.query(sql, params);
    try {
      // BEGIN and the locks in one round trip, the NOTIFY and COMMIT in another: hooks pay for each.
      // The lock keys are the bus's own names (repos, sessions, channels), quoted as literals.
      const ordered = [...locks].sort((a, b) => a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
      await query(['BEGIN', ...ordered.map(([space, key]) => `SELECT pg_advisory_xact_lock(${space}, hashtext(${client.escapeLiteral(key)}))`)].join('; '));
      const result = await work(query);
      // Each payload distinct: PostgreSQL folds identical ones within a transaction.
      await query(notify ? `SELECT ${notifySql()}; COMMIT` : 'COMMIT');
      return result;
    } catch (error) {
      await query('ROLLBACK').catch(() => undefined);
      throw this.translate(error);
    } finally {
      client.release();
    }
  }

  /**
   * One statement as a transaction of its own (the implicit one PostgreSQL gives a single
   * statement): one round trip instead of BEGIN, the statement and COMMIT. With `notify`, the
   * NOTIFY rides in the same statement, so it still goes out only if the write commits.
   * Returns the rows the write touched.
   */
  async writeAlone(sql: string, params: unknown[], notify = true): Promise<number> {
    if (!notify) {
      await this.prepare();
      try {
        return (await this.pool.query(sql, params)).rowCount ?? 0;
      } catch (error) {
        throw this.translate(error);
      }
    }
    // A data-modifying WITH runs exactly once whether or not it is read; reading it gives the count.
    const statement = `WITH written AS (${sql} RETURNING 1)
      SELECT (SELECT COUNT(*) FROM written)::int AS n, ${notifySql()}`;
    return (await this.one<{ n: number }>(statement, params))?.n ?? 0;
  }

  async close(): Promise<void> {
    await this.pool.end().catch(() => undefined);
  }
}

/** The NOTIFY a write sends as it commits, as an expression: its payload distinct (PostgreSQL folds identical ones in a transaction). */
export function notifySql(): string {
  return `pg_notify('${CHANGE_CHANNEL}', '${uniqueToken()}')`;
}
