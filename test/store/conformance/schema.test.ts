/**
 * Opening a store, on both engines: one schema version, processes migrating a new database at once,
 * a newer epoch refused.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { CLI, runCli, tempBus } from '../../helpers/bus-env.js';
import { TARGET_VERSION as SQLITE_VERSION } from '../../../src/store/sqlite/schema.js';
import { TARGET_VERSION as POSTGRES_VERSION } from '../../../src/store/postgres/schema.js';
import { ENGINES } from './harness.js';

test('both engines carry the same schema version', () => {
  assert.equal(POSTGRES_VERSION, SQLITE_VERSION);
});

for (const engine of ENGINES) {
  test(`${engine}: processes starting together on a new database migrate it once`, async () => {
    const bus = tempBus({}, { engine, emptyDatabase: true });
    try {
      const starters = Array.from({ length: 6 }, () =>
        new Promise<{ code: number | null; stderr: string }>((resolve) => {
          const child = spawn(process.execPath, [CLI, 'agents', '--json'], { env: bus.env, stdio: ['ignore', 'pipe', 'pipe'] });
          let stderr = '';
          child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
          child.on('close', (code) => resolve({ code, stderr }));
        }),
      );
      for (const started of await Promise.all(starters)) assert.equal(started.code, 0, started.stderr);
      if (engine === 'postgres') {
        assert.deepEqual(bus.rows('SELECT version FROM agent_bus_schema'), [{ version: POSTGRES_VERSION }], 'one version row, at the target');
      } else {
        assert.deepEqual(bus.rows('PRAGMA user_version'), [{ user_version: SQLITE_VERSION }]);
      }
      // Every table the steps create is there, once.
      const tables = engine === 'postgres'
        ? bus.rows<{ name: string }>("SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename")
        : bus.rows<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name");
      for (const table of ['agents', 'messages', 'sessions', 'notices', 'notice_receipts', 'brain_state', 'session_counters', 'brain_markers', 'wakes', 'watchers', 'client_routes']) {
        assert.ok(tables.some((row) => row.name === table), `${table} exists`);
      }
    } finally {
      bus.cleanup();
    }
  });
}

test('postgres: a database from a newer schema epoch is refused with exit 3', () => {
  const bus = tempBus({}, { engine: 'postgres', emptyDatabase: true });
  try {
    const seeded = runCli(['agents'], { env: bus.env });
    assert.equal(seeded.code, 0, seeded.stderr);
    bus.sql('UPDATE agent_bus_schema SET version = 2001');
    const refused = runCli(['send', 'hi', '--to', '*'], { env: bus.env });
    assert.equal(refused.code, 3, refused.stderr);
    assert.match(refused.stderr, /^agent-bus: this database was written by a newer agent-bus \(schema 2001; this one knows \d+\)\. Upgrade agent-bus to use it\.\n$/);
    assert.equal(bus.rows('SELECT name FROM agents').length, 0, 'nothing was written');
  } finally {
    bus.cleanup();
  }
});
