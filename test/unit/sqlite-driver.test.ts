/**
 * The SQLite driver seam (src/store/sqlite/driver.ts): the choice of driver, the one warning held
 * back as node:sqlite loads, and what each driver that works here gives back alike.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { availableSqliteDrivers, connectSqlite, hasBuiltinSqlite, isBusy, sqliteDriverName } from '../../src/store/sqlite/driver.js';
import { SqliteStore } from '../../src/store/sqlite/store.js';
import { ROOT, runCli, tempBus } from '../helpers/bus-env.js';

test('the driver: the built-in one wherever this Node.js has it, the addon elsewhere, unless AGENT_BUS_SQLITE_DRIVER says', () => {
  assert.equal(sqliteDriverName('auto'), hasBuiltinSqlite() ? 'builtin' : 'better-sqlite3');
  assert.equal(sqliteDriverName('better-sqlite3'), 'better-sqlite3');
  assert.equal(sqliteDriverName('builtin'), 'builtin');
  const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
  assert.equal(hasBuiltinSqlite(), major > 22 || (major === 22 && minor >= 13), `Node.js ${process.versions.node}`);
});

test('loading node:sqlite holds back exactly its experimental warning, and no other', () => {
  // A stand-in for node:sqlite that announces itself as Node.js 22's does, and says one thing more.
  const script = [
    "process.getBuiltinModule = () => { process.emitWarning('SQLite is an experimental feature and might change at any time', 'ExperimentalWarning');",
    "  process.emitWarning('another feature is experimental too', 'ExperimentalWarning'); return { DatabaseSync: class {} }; };",
    "const { builtinSqlite } = require('./src/store/sqlite/builtin-driver.ts');",
    "if (builtinSqlite() === null) throw new Error('not loaded');",
    "process.emitWarning('SQLite is an experimental feature and might change at any time', 'ExperimentalWarning');",
  ].join('\n');
  const result = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(result.status, 0, result.stderr);
  assert.match(result.stderr, /ExperimentalWarning: another feature is experimental too/, 'another warning while it loads is shown');
  // The one held back is held back only while the module loads: said again afterwards, it is shown.
  assert.equal(result.stderr.match(/SQLite is an experimental feature/g)?.length, 1, result.stderr);
});

test('AGENT_BUS_SQLITE_DRIVER=builtin on a Node.js without it: one line saying so, exit 1', { skip: hasBuiltinSqlite() ? 'this Node.js has SQLite built in' : false }, () => {
  const bus = tempBus({ AGENT_BUS_SQLITE_DRIVER: 'builtin' });
  try {
    const result = runCli(['agents'], { env: bus.env });
    assert.equal(result.code, 1);
    assert.match(result.stderr, /^agent-bus: AGENT_BUS_SQLITE_DRIVER is builtin, but Node\.js [\d.]+ has no built-in SQLite \(node:sqlite, in Node\.js 22\.13 and later\): unset it to use the better-sqlite3 addon\n$/);
  } finally {
    bus.cleanup();
  }
});

for (const driver of availableSqliteDrivers()) {
  test(`${driver}: rows are plain objects, parameters by name or position, integers exact to 2^53 - 1, a held lock is busy, a failed transaction leaves nothing`, () => {
    const dir = mkdtempSync(join(tmpdir(), 'agent-bus-driver-'));
    try {
      const path = join(dir, 'x.db');
      const db = connectSqlite(path, { driver, timeoutMs: 50 });
      const other = connectSqlite(path, { driver, timeoutMs: 50 });
      try {
        assert.equal(db.driver, driver);
        db.exec('PRAGMA journal_mode = WAL; CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER, s TEXT)');
        // Extra keys in a named set are ignored, as they are for both drivers.
        db.run('INSERT INTO t (n, s) VALUES (@n, @s)', { n: Number.MAX_SAFE_INTEGER, s: 'a', unused: 'x' });
        db.run('INSERT INTO t (n, s) VALUES (?, ?)', [2, 'b']);
        const rows = db.all<{ n: number; s: string }>('SELECT n, s FROM t ORDER BY id');
        assert.deepStrictEqual(rows, [{ n: Number.MAX_SAFE_INTEGER, s: 'a' }, { n: 2, s: 'b' }]);
        assert.equal(Object.getPrototypeOf(rows[0]), Object.prototype);
        assert.deepStrictEqual([...db.iterate<{ s: string }>('SELECT s FROM t ORDER BY id')], [{ s: 'a' }, { s: 'b' }]);
        assert.equal(db.pragma('journal_mode'), 'wal');
        assert.throws(() => db.immediate(() => {
          db.run('INSERT INTO t (n, s) VALUES (3, ?)', ['c']);
          // A savepoint inside rolls back alone.
          assert.throws(() => db.savepoint(() => {
            db.run("INSERT INTO t (n, s) VALUES (4, 'd')");
            throw new Error('inner');
          })(undefined), /inner/);
          assert.equal(db.get<{ c: number }>('SELECT COUNT(*) AS c FROM t')?.c, 3);
          throw new Error('outer');
        }), /outer/);
        assert.equal(db.get<{ c: number }>('SELECT COUNT(*) AS c FROM t')?.c, 2, 'the failed transaction left nothing');
        assert.equal(db.inTransaction, false);
        db.exec('BEGIN IMMEDIATE');
        try {
          assert.throws(() => other.immediate(() => other.run("INSERT INTO t (n, s) VALUES (5, 'e')")), (error: unknown) => isBusy(error));
        } finally {
          db.exec('COMMIT');
        }
        assert.throws(() => db.run('INSERT INTO nowhere VALUES (1)'), (error: unknown) => (error as { code?: string }).code === 'SQLITE_ERROR');
      } finally {
        other.close();
        db.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

for (const driver of availableSqliteDrivers()) {
  test(`${driver}: the store's connection reads through a memory map, with a 16 MB page cache, in WAL, synchronous NORMAL`, () => {
    const dir = mkdtempSync(join(tmpdir(), 'agent-bus-driver-'));
    const store = new SqliteStore(join(dir, 'bus.db'), { driver });
    try {
      const db = store.connection;
      assert.deepEqual(
        ['mmap_size', 'cache_size', 'journal_mode', 'synchronous'].map((name) => db.pragma(name)),
        [268_435_456, -16_000, 'wal', 1],
      );
    } finally {
      void store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
