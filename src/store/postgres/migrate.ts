/**
 * Bringing a PostgreSQL database to the schema this agent-bus needs: every
 * missing step in one transaction, under a transaction-level advisory lock,
 * so processes starting at once run each step once (the others wait, then
 * find the work done). A database from a newer epoch is refused before
 * anything is written.
 */
import type pg from 'pg';
import { SchemaTooNewError } from '../../model/errors.js';
import { EPOCH_SIZE, SCHEMA_EPOCH, STEPS, TARGET_VERSION } from './schema.js';

/** The advisory lock every migrating process takes (its two keys: "agent-bus", "migrate"). */
const MIGRATION_LOCK = [0x61627573, 0x6d696772] as const;

async function currentVersion(client: pg.PoolClient): Promise<number> {
  // The catalog read as a table (a fresh snapshot per statement), not through to_regclass's cache:
  // after waiting for the lock it must see the table another starter just created.
  const table = await client.query<{ exists: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relname = 'agent_bus_schema' AND n.nspname = current_schema()) AS exists`,
  );
  if (!table.rows[0]?.exists) return 0;
  const row = await client.query<{ version: number }>('SELECT version FROM agent_bus_schema');
  return row.rows[0]?.version ?? 0;
}

function refuseNewer(version: number): void {
  if (Math.floor(version / EPOCH_SIZE) > SCHEMA_EPOCH) {
    throw new SchemaTooNewError(
      `this database was written by a newer agent-bus (schema ${version}; this one knows ${TARGET_VERSION}). Upgrade agent-bus to use it.`,
    );
  }
}

/** The version in one round trip, when the table is there (nearly every start); 0 when it is not. */
async function quickVersion(client: pg.PoolClient): Promise<number> {
  try {
    return (await client.query<{ version: number }>('SELECT version FROM agent_bus_schema')).rows[0]?.version ?? 0;
  } catch (error) {
    if ((error as { code?: string }).code === '42P01') return 0; // No such table yet: a new database.
    throw error;
  }
}

/** Migrate if needed; returns the version the database is at afterwards. */
export async function migrate(pool: pg.Pool): Promise<number> {
  const client = await pool.connect();
  try {
    // Most starts find the schema current: one read, no lock.
    const seen = await quickVersion(client);
    refuseNewer(seen);
    if (seen >= TARGET_VERSION) return seen;
    await client.query('BEGIN');
    try {
      await client.query("SET LOCAL lock_timeout = '60s'");
      await client.query('SELECT pg_advisory_xact_lock($1, $2)', [...MIGRATION_LOCK]);
      const version = await currentVersion(client);
      refuseNewer(version);
      if (version === 0) await client.query('CREATE TABLE agent_bus_schema (version INTEGER NOT NULL)');
      for (const step of STEPS) {
        if (SCHEMA_EPOCH * EPOCH_SIZE + step.step <= version) continue;
        await client.query(step.sql);
      }
      if (version === 0) await client.query('INSERT INTO agent_bus_schema (version) VALUES ($1)', [TARGET_VERSION]);
      else if (version < TARGET_VERSION) await client.query('UPDATE agent_bus_schema SET version = $1', [TARGET_VERSION]);
      await client.query('COMMIT');
      return Math.max(version, TARGET_VERSION);
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  } finally {
    client.release();
  }
}
