/**
 * The ports as both engines present them: every operation of a store is one that a port declares,
 * and says whether it runs once or may be retried.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { STORE_ATTEMPTS } from '../../../src/store/ports.js';
import { PostgresStore } from '../../../src/store/postgres/store.js';
import { SqliteStore } from '../../../src/store/sqlite/store.js';
import { tempBus } from '../../helpers/bus-env.js';

/** The operations a store carries: its functions, less `close`. */
function operations(store: object): string[] {
  return Object.keys(store)
    .filter((key) => typeof (store as Record<string, unknown>)[key] === 'function' && key !== 'close')
    .sort();
}

test('each engine composes every port: its operations are exactly those the ports say once or retryable of', async () => {
  const declared = Object.keys(STORE_ATTEMPTS).sort();
  const sqlite = tempBus({}, { engine: 'sqlite' });
  const local = new SqliteStore(sqlite.db);
  // Made without a connection: the pool connects at the first statement.
  const fleet = new PostgresStore('postgres://nobody@127.0.0.1:1/nothing', { connectTimeoutMs: 1000, poolMax: 1 });
  try {
    assert.deepEqual(operations(local), declared);
    assert.deepEqual(operations(fleet), declared);
    assert.ok(Object.values(STORE_ATTEMPTS).every((attempts) => attempts === 'once' || attempts === 'retryable'));
  } finally {
    await local.close();
    await fleet.close();
    sqlite.cleanup();
  }
});
