/**
 * Opening databases written by the Python agent-bus 0.4, 0.5 and 0.6 (fixtures
 * in test/fixtures, written by hand from the reference schema), brand-new,
 * newer, corrupt and contended databases: migration in place, one private
 * backup, no row rewritten, and the rules for mail left at a bare repo name.
 */
import { livenessFrom } from '../../src/core/liveness.js';
import { systemProcessTable } from '../../src/adapters/procs.js';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { test } from 'node:test';
import { connectSqlite, type SqliteConnection } from '../../src/store/sqlite/driver.js';
import { openAuditLog } from '../../src/runtime.js';
import { Bus } from '../../src/core/bus.js';
import { SchemaTooNewError, StoreUnavailableError } from '../../src/model/errors.js';
import { registrationsFor } from '../../src/core/roster.js';
import { busSettings } from '../../src/core/settings.js';
import type { AgentView, MessageView } from '../../src/core/views.js';
import { STEPS, TARGET_VERSION } from '../../src/store/sqlite/schema.js';
import { SqliteStore } from '../../src/store/sqlite/store.js';
import { json, readAudit, runCli, runCliAsync, tempBus, ROOT, type CliResult, type TempBus } from '../helpers/bus-env.js';

type Row = Record<string, unknown>;
type FixtureName = '0.4' | '0.5' | '0.6';

// The columns and indexes each Python step wrote (reference §2.2), listed here by hand.
const AGENTS_STEP1 = ['name', 'repo_path', 'registered_at', 'last_seen'];
const AGENTS_STEP2 = [...AGENTS_STEP1, 'group_name', 'client'];
const AGENTS_STEP3 = [...AGENTS_STEP2, 'topic'];
const MESSAGES_STEP1 = ['message_id', 'from_agent', 'to_agent', 'body', 'thread_id', 'sent_at', 'read_at', 'delivered_at'];
const MESSAGES_STEP2 = [...MESSAGES_STEP1, 'addressed_to', 'fanout_id', 'to_group', 'claimed_by'];
const SESSIONS_STEP3 = [
  'server_pid', 'server_started', 'name', 'client_address', 'repo_path', 'lineage',
  'session_key', 'boot_id', 'pid_ns', 'started_at', 'last_seen', 'ended_at',
];
const INDEXES_STEP1 = ['idx_messages_inbox', 'idx_messages_thread'];
const INDEXES_STEP2 = [...INDEXES_STEP1, 'idx_agents_group', 'idx_messages_fanout'];
const INDEXES_STEP3 = [...INDEXES_STEP2, 'idx_sessions_address'];

interface FixtureSpec {
  name: FixtureName;
  userVersion: number;
  journal: string;
  columns: Record<string, string[]>;
  indexes: string[];
  agents: string[];
  messages: number;
  /** Roster rows whose group_name the migration files (session-shaped names 0.5 left bare). */
  backfilled: Record<string, string>;
}

const FIXTURES: FixtureSpec[] = [
  {
    name: '0.4',
    userVersion: 0,
    journal: 'delete',
    columns: { agents: AGENTS_STEP1, messages: MESSAGES_STEP1 },
    indexes: INDEXES_STEP1,
    agents: ['human', 'repo-a', 'repo-b'],
    messages: 5,
    backfilled: {},
  },
  {
    name: '0.5',
    userVersion: 1002,
    journal: 'wal',
    columns: { agents: AGENTS_STEP2, messages: MESSAGES_STEP2 },
    indexes: INDEXES_STEP2,
    agents: ['human', 'repo-a/claude', 'repo-a/codex', 'repo-b', 'repo-b/codex-docs'],
    messages: 9,
    backfilled: { 'repo-b/codex-docs': 'repo-b' },
  },
  {
    name: '0.6',
    userVersion: 1003,
    journal: 'wal',
    columns: { agents: AGENTS_STEP3, messages: MESSAGES_STEP2, sessions: SESSIONS_STEP3 },
    indexes: INDEXES_STEP3,
    agents: ['human', 'repo-a/claude', 'repo-a/claude-frontend', 'repo-a/codex', 'repo-b'],
    messages: 9,
    backfilled: {},
  },
];

// Message ids in the fixtures.
const LEGACY_UNREAD_TO_REPO_A = ['3bd5c3af-c556-43fb-9b9c-d213e0bcac54', 'aab772af-cb65-426a-b4dc-cf35855cf30d'];
const RETIRED_UNREAD_05 = '3bd5c3af-c556-43fb-9b9c-d213e0bcac54';

const ORDER_BY: Record<string, string> = {
  agents: 'name',
  messages: 'message_id',
  sessions: 'server_pid, server_started, client_address',
};

function fixtureSql(name: FixtureName): string {
  return readFileSync(join(ROOT, 'test', 'fixtures', `python-${name}.sql`), 'utf8');
}

/** Write a fixture to `path` the way the Python program left it, with an optional change on top. */
function buildFixture(path: string, name: FixtureName, tweak?: (db: SqliteConnection) => void): void {
  mkdirSync(dirname(path), { recursive: true });
  const db = connectSqlite(path);
  try {
    db.exec(fixtureSql(name));
    tweak?.(db);
  } finally {
    db.close();
  }
}

/** A private bus whose HOME exists (the CLI runs there). */
function privateBus(): TempBus {
  const bus = tempBus();
  mkdirSync(bus.env.HOME as string, { recursive: true });
  return bus;
}

function fixtureBus(name: FixtureName, tweak?: (db: SqliteConnection) => void): TempBus {
  const bus = privateBus();
  buildFixture(bus.db, name, tweak);
  return bus;
}

function tableColumns(db: SqliteConnection, table: string): string[] {
  return (db.prepare(`PRAGMA table_info(${table})`).all() as Array<{ name: string }>).map((row) => row.name);
}

function tables(db: SqliteConnection): string[] {
  return (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as Array<{ name: string }>).map(
    (row) => row.name,
  );
}

function indexes(db: SqliteConnection): string[] {
  return (
    db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'idx_%' ORDER BY name").all() as Array<{
      name: string;
    }>
  ).map((row) => row.name);
}

interface Snapshot {
  version: number;
  journal: string;
  columns: Record<string, string[]>;
  rows: Record<string, Row[]>;
  indexes: string[];
}

/**
 * The version, columns and rows of a database file. With `only`, read just
 * those columns of those tables (the columns a database had before migrating).
 */
function snapshot(path: string, only?: Record<string, string[]>): Snapshot {
  const db = connectSqlite(path);
  try {
    const present = tables(db).filter((table) => table in ORDER_BY);
    const names = only ? Object.keys(only) : present;
    const columns: Record<string, string[]> = {};
    const rows: Record<string, Row[]> = {};
    for (const table of names) {
      columns[table] = tableColumns(db, table);
      const list = only?.[table] ?? columns[table];
      rows[table] = db.prepare(`SELECT ${list.join(', ')} FROM ${table} ORDER BY ${ORDER_BY[table]}`).all() as Row[];
    }
    return {
      version: db.pragma('user_version') as number,
      journal: db.pragma('journal_mode') as string,
      columns,
      rows,
      indexes: indexes(db),
    };
  } finally {
    db.close();
  }
}

function userVersion(path: string): number {
  const db = connectSqlite(path);
  try {
    return db.pragma('user_version') as number;
  } finally {
    db.close();
  }
}

function sha256(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

function mode(path: string): number {
  return statSync(path).mode & 0o777;
}

/** The backup files (and leftovers of unfinished ones) next to a database. */
function backupFiles(db: string): string[] {
  const prefix = `${basename(db)}.pre-migrate-`;
  return readdirSync(dirname(db))
    .filter((name) => name.startsWith(prefix))
    .sort();
}

/** A backup read through a copy, so that opening it never touches the backup itself. */
function backupSnapshot(bus: TempBus, backup: string, only: Record<string, string[]>): Snapshot {
  const copy = join(bus.dir, `inspect-${basename(backup)}`);
  copyFileSync(backup, copy);
  return snapshot(copy, only);
}

function ok(result: CliResult, what: string): CliResult {
  assert.equal(result.code, 0, `${what} failed (${result.code}): ${result.stderr}`);
  return result;
}

function assertOneLineError(result: CliResult, what: string): void {
  const lines = result.stderr.split('\n').filter((line) => line.trim() !== '');
  assert.equal(lines.length, 1, `${what}: expected one stderr line, got:\n${result.stderr}`);
  assert.match(lines[0] as string, /^agent-bus: /, what);
  assert.doesNotMatch(result.stderr, /^\s+at /m, `${what}: no stack trace`);
  assert.doesNotMatch(result.stderr, /unexpected error/, `${what}: a known failure, not an unexpected one`);
}

/** What a fixture looks like once migrated: its rows as they were, plus the documented backfill. */
function expectedRows(spec: FixtureSpec, before: Snapshot): Record<string, Row[]> {
  const expected = structuredClone(before.rows);
  for (const row of expected.agents ?? []) {
    const group = spec.backfilled[row.name as string];
    if (group !== undefined && 'group_name' in row) row.group_name = group;
  }
  return expected;
}

function checkMigrated(bus: TempBus, spec: FixtureSpec, before: Snapshot): void {
  const after = snapshot(bus.db, before.columns);
  assert.equal(after.version, TARGET_VERSION, 'user_version is the target');
  assert.equal(after.journal, 'wal', 'the database is in WAL mode');
  for (const table of Object.keys(before.rows)) {
    assert.equal(after.rows[table]?.length, before.rows[table]?.length, `${table}: same number of rows`);
  }
  assert.deepEqual(after.rows, expectedRows(spec, before), 'every original row is there with its values');

  // The whole reference schema is there, and columns it added are empty unless backfilled.
  const full = snapshot(bus.db);
  for (const column of AGENTS_STEP3) assert.ok(full.columns.agents?.includes(column), `agents.${column}`);
  for (const column of MESSAGES_STEP2) assert.ok(full.columns.messages?.includes(column), `messages.${column}`);
  for (const column of SESSIONS_STEP3) assert.ok(full.columns.sessions?.includes(column), `sessions.${column}`);
  for (const index of INDEXES_STEP3) assert.ok(full.indexes.includes(index), `index ${index}`);
  for (const table of ['agents', 'messages']) {
    const added = (full.columns[table] ?? []).filter((column) => !(before.columns[table] ?? []).includes(column));
    for (const column of added) {
      for (const row of full.rows[table] ?? []) {
        const backfilled = table === 'agents' && column === 'group_name' ? spec.backfilled[row.name as string] : undefined;
        assert.equal(row[column], backfilled ?? null, `${table}.${column} of ${String(row.name ?? row.message_id)}`);
      }
    }
  }
  if (!before.columns.sessions) assert.deepEqual(full.rows.sessions, [], 'a new sessions table is empty');

  // One backup of the database as it was, private.
  const expectedBackup = `${basename(bus.db)}.pre-migrate-${spec.userVersion}`;
  assert.deepEqual(backupFiles(bus.db), [expectedBackup], 'exactly one backup, no leftover .partial');
  const backup = join(dirname(bus.db), expectedBackup);
  assert.equal(mode(backup), 0o600, 'the backup is private (0600)');
  const saved = backupSnapshot(bus, backup, before.columns);
  assert.equal(saved.version, spec.userVersion, 'the backup keeps the old user_version');
  assert.deepEqual(saved.columns, before.columns, 'the backup has the old columns only');
  assert.deepEqual(saved.rows, before.rows, 'the backup has the old rows');
}

// ---------------------------------------------------------------------------
// The fixtures themselves, then migrating each one through the CLI and the store.

for (const spec of FIXTURES) {
  test(`fixture python-${spec.name}.sql has the ${spec.name} schema, version and rows`, () => {
    const bus = fixtureBus(spec.name);
    try {
      const state = snapshot(bus.db);
      assert.equal(state.version, spec.userVersion);
      assert.equal(state.journal, spec.journal);
      assert.deepEqual(state.columns, spec.columns);
      assert.deepEqual([...state.indexes].sort(), [...spec.indexes].sort());
      assert.deepEqual(state.rows.agents?.map((row) => row.name), spec.agents);
      assert.equal(state.rows.messages?.length, spec.messages);
      const stamp = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
      for (const row of state.rows.agents ?? []) {
        assert.match(String(row.registered_at), stamp);
        assert.match(String(row.last_seen), stamp);
      }
      for (const row of state.rows.messages ?? []) {
        assert.match(String(row.sent_at), stamp);
        for (const key of ['read_at', 'delivered_at']) if (row[key] !== null) assert.match(String(row[key]), stamp);
      }
    } finally {
      bus.cleanup();
    }
  });

  test(`a Python ${spec.name} database is migrated in place when the CLI opens it (agents --json)`, () => {
    const bus = fixtureBus(spec.name);
    try {
      const before = snapshot(bus.db);
      const roster = json<AgentView[]>(ok(runCli(['agents', '--json'], { env: bus.env }), 'agents'));
      assert.deepEqual(roster.map((agent) => agent.name), spec.agents);
      if (spec.name === '0.4') {
        const pending = Object.fromEntries(roster.map((agent) => [agent.name, agent.pending_count]));
        assert.deepEqual(pending, { human: 1, 'repo-a': 2, 'repo-b': 0 });
      }
      checkMigrated(bus, spec, before);
      // Opening it again changes nothing and makes no second backup.
      ok(runCli(['agents', '--json'], { env: bus.env }), 'agents again');
      checkMigrated(bus, spec, before);
    } finally {
      bus.cleanup();
    }
  });

  test(`a Python ${spec.name} database is migrated in place by new SqliteStore(path)`, async () => {
    const bus = fixtureBus(spec.name);
    try {
      const before = snapshot(bus.db);
      const store = new SqliteStore(bus.db);
      try {
        assert.equal(store.connection.pragma('user_version'), TARGET_VERSION);
        const roster = await store.roster(() => []);
        assert.deepEqual(roster.agents.map((agent) => agent.name), spec.agents);
      } finally {
        await store.close();
      }
      checkMigrated(bus, spec, before);
      const again = new SqliteStore(bus.db);
      await again.close();
      checkMigrated(bus, spec, before);
    } finally {
      bus.cleanup();
    }
  });
}

test('steps tolerate columns that are already there (added by hand to a 0.4 database)', () => {
  const bus = fixtureBus('0.4', (db) =>
    db.exec(`
      ALTER TABLE agents ADD COLUMN topic TEXT;
      ALTER TABLE messages ADD COLUMN fanout_id TEXT;
      UPDATE agents SET topic = 'hand-made' WHERE name = 'repo-b';
    `),
  );
  try {
    const before = snapshot(bus.db);
    ok(runCli(['agents', '--json'], { env: bus.env }), 'agents');
    const after = snapshot(bus.db, before.columns);
    assert.equal(after.version, TARGET_VERSION);
    assert.deepEqual(after.rows, before.rows, 'rows and hand-added values kept');
    assert.deepEqual(backupFiles(bus.db), [`${basename(bus.db)}.pre-migrate-0`]);
  } finally {
    bus.cleanup();
  }
});

test('a .partial left by an interrupted backup is replaced; an existing backup is kept, not overwritten', () => {
  const interrupted = fixtureBus('0.4');
  const earlier = fixtureBus('0.5');
  try {
    const partial = `${interrupted.db}.pre-migrate-0.partial`;
    writeFileSync(partial, 'half a backup', { mode: 0o644 });
    const before = snapshot(interrupted.db);
    ok(runCli(['agents', '--json'], { env: interrupted.env }), 'agents');
    assert.deepEqual(backupFiles(interrupted.db), [`${basename(interrupted.db)}.pre-migrate-0`], 'the .partial is gone');
    const saved = backupSnapshot(interrupted, `${interrupted.db}.pre-migrate-0`, before.columns);
    assert.deepEqual(saved.rows, before.rows);
    assert.equal(mode(`${interrupted.db}.pre-migrate-0`), 0o600);

    const existing = `${earlier.db}.pre-migrate-1002`;
    writeFileSync(existing, 'an earlier backup', { mode: 0o600 });
    ok(runCli(['agents', '--json'], { env: earlier.env }), 'agents');
    assert.equal(readFileSync(existing, 'utf8'), 'an earlier backup', 'an existing backup is never overwritten');
    assert.equal(userVersion(earlier.db), TARGET_VERSION);
  } finally {
    interrupted.cleanup();
    earlier.cleanup();
  }
});

// ---------------------------------------------------------------------------
// Mail left at a bare repo name by an older version.

test('0.4 mail to a retired bare repo name goes to the first of its agents to read, never to the second', async () => {
  // `init` retired `repo-a` (its roster row is gone) while two messages to it were unread.
  const paths = fixtureBus('0.4', (db) => db.prepare("DELETE FROM agents WHERE name = 'repo-a'").run());
  const store = new SqliteStore(paths.db);
  const bus = new Bus(store, openAuditLog(paths.audit, paths.env), busSettings(paths.env), { liveness: () => livenessFrom(systemProcessTable()) });
  try {
    for (const name of ['repo-a/claude', 'repo-a/codex']) await bus.roster.register(registrationsFor(name, '/home/dev/src/repo-a', true));
    const pending = Object.fromEntries((await bus.roster.agents()).map((agent) => [agent.name, agent.pending_count]));
    assert.equal(pending['repo-a/claude'], 2, 'counted for each member before anyone reads');
    assert.equal(pending['repo-a/codex'], 2);

    const first = await bus.inbox.read({ reader: 'repo-a/codex', via: 'read_inbox' });
    assert.deepEqual(first.map((message) => message.message_id), LEGACY_UNREAD_TO_REPO_A);
    for (const message of first) {
      assert.equal(message.to, 'repo-a');
      assert.equal(message.kind, 'direct', 'a pre-0.5 row reads as direct');
      assert.equal(message.addressed_to, null);
    }
    const second = await bus.inbox.read({ reader: 'repo-a/claude', via: 'read_inbox' });
    assert.deepEqual(second, [], 'the second member never gets it');
    assert.equal(await bus.inbox.pending('repo-a/claude'), 0);
    assert.equal(await bus.inbox.pending('repo-a/codex'), 0);
  } finally {
    await bus.close();
    paths.cleanup();
  }
});

test('0.4 mail to a bare name stays with the agent of exactly that name while it exists', () => {
  const bus = fixtureBus('0.4');
  try {
    ok(runCli(['send', 'joining', '--to', 'human', '--name', 'repo-a/claude'], { env: bus.env }), 'send');
    const mate = json<MessageView[]>(runCli(['inbox', '--name', 'repo-a/claude', '--json'], { env: bus.env }));
    assert.deepEqual(mate, [], "a repo mate does not take `repo-a`'s mail");
    const owner = json<MessageView[]>(runCli(['inbox', '--name', 'repo-a', '--json'], { env: bus.env }));
    assert.deepEqual(owner.map((message) => message.message_id), LEGACY_UNREAD_TO_REPO_A);
  } finally {
    bus.cleanup();
  }
});

test('0.5 mail to the retired `repo-a` is read by the first of repo-a/claude and repo-a/codex only (CLI)', () => {
  const bus = fixtureBus('0.5');
  try {
    const claude = json<MessageView[]>(runCli(['inbox', '--name', 'repo-a/claude', '--json'], { env: bus.env }));
    assert.deepEqual(claude.map((message) => message.message_id), [RETIRED_UNREAD_05]);
    assert.equal(claude[0]?.to, 'repo-a');
    assert.equal(claude[0]?.body, "Please bump the client SDK to 2.3 before Friday's release.");

    const codex = json<MessageView[]>(runCli(['inbox', '--name', 'repo-a/codex', '--json'], { env: bus.env }));
    const ids = codex.map((message) => message.message_id);
    assert.ok(!ids.includes(RETIRED_UNREAD_05), 'the second reader never gets it');
    assert.deepEqual(ids, [
      'bd31187d-352c-46af-a628-f62a9df3862e',
      '7a20e4e2-a481-4633-99d3-33de7a5c607a',
      'f85c1892-c8bb-4ef2-a089-c50edaa8a7cb',
    ]);
    assert.equal(codex[0]?.claimed_by, 'repo-a/claude', 'the 0.5 claim is kept');
    assert.equal(codex[1]?.claimed_by, 'repo-a/codex', 'the broadcast copy is claimed by its first reader');

    const reads = readAudit(bus.audit).filter((row) => row.op === 'read' && row.message_id === RETIRED_UNREAD_05);
    assert.deepEqual(reads.map((row) => row.actor), ['repo-a/claude'], 'read exactly once');
  } finally {
    bus.cleanup();
  }
});

test('0.5: roster pending counts equal what each agent would read (retired bare-name mail plus own mail)', async () => {
  const paths = fixtureBus('0.5');
  const store = new SqliteStore(paths.db);
  const bus = new Bus(store, openAuditLog(paths.audit, paths.env), busSettings(paths.env), { liveness: () => livenessFrom(systemProcessTable()) });
  try {
    // What each reader would drain: claude only the row at the retired `repo-a`;
    // codex that row, its copy of the group send, the broadcast and a direct message.
    assert.equal(await bus.inbox.pending('repo-a/claude'), 1);
    assert.equal(await bus.inbox.pending('repo-a/codex'), 4);
    const roster = await bus.roster.agents();
    for (const agent of roster) {
      assert.equal(agent.pending_count, await bus.inbox.pending(agent.name), `pending_count of ${agent.name} in the roster`);
    }
    const cli = json<AgentView[]>(runCli(['agents', '--json'], { env: paths.env }));
    assert.equal(cli.find((agent) => agent.name === 'repo-a/codex')?.pending_count, 4, 'agents --json for repo-a/codex');
  } finally {
    await bus.close();
    paths.cleanup();
  }
});

// ---------------------------------------------------------------------------
// Brand-new, newer and unusable databases.

test('a brand-new database is created at the target version, private, without a backup (CLI)', () => {
  const bus = privateBus();
  try {
    const folder = dirname(bus.db);
    assert.ok(!existsSync(folder), 'the folder does not exist yet');
    assert.deepEqual(json(ok(runCli(['agents', '--json'], { env: bus.env }), 'agents')), []);
    assert.equal(mode(folder), 0o700, 'folder 0700');
    assert.equal(mode(bus.db), 0o600, 'file 0600');
    const state = snapshot(bus.db);
    assert.equal(state.version, TARGET_VERSION);
    assert.deepEqual(state.columns.agents?.slice(0, AGENTS_STEP3.length), AGENTS_STEP3);
    assert.deepEqual(state.columns.messages?.slice(0, MESSAGES_STEP2.length), MESSAGES_STEP2);
    assert.deepEqual(state.columns.sessions, SESSIONS_STEP3);
    assert.deepEqual(backupFiles(bus.db), [], 'a brand-new database is not backed up');
  } finally {
    bus.cleanup();
  }
});

test('a brand-new database is created at the target version, private, without a backup (SqliteStore)', async () => {
  const bus = privateBus();
  try {
    const outer = join(bus.dir, 'state');
    const db = join(outer, 'agent-bus', 'bus.db');
    const store = new SqliteStore(db);
    try {
      assert.equal(store.connection.pragma('user_version'), TARGET_VERSION);
      assert.equal(mode(outer), 0o700, 'every created folder is 0700');
      assert.equal(mode(dirname(db)), 0o700);
      assert.equal(mode(db), 0o600);
      for (const side of [`${db}-wal`, `${db}-shm`]) if (existsSync(side)) assert.equal(mode(side), 0o600, side);
    } finally {
      await store.close();
    }
    assert.deepEqual(backupFiles(db), []);
  } finally {
    bus.cleanup();
  }
});

const FOREIGN_COMMANDS = [['agents'], ['inbox'], ['send', 'x', '--to', 'y']];

function newerEpochBus(journal: 'wal' | 'delete'): TempBus {
  return fixtureBus('0.6', (db) => {
    db.exec(`
      CREATE TABLE mailboxes (address TEXT PRIMARY KEY, kind TEXT NOT NULL);
      PRAGMA user_version = 2001;
    `);
    db.exec(`PRAGMA journal_mode = ${journal}`);
  });
}

function checkNewerEpochRefused(bus: TempBus): void {
  const hash = sha256(bus.db);
  for (const args of FOREIGN_COMMANDS) {
    const result = runCli(args, { env: bus.env });
    assert.equal(result.code, 3, `${args.join(' ')} exits 3: ${result.stderr}`);
    assertOneLineError(result, args.join(' '));
    assert.match(result.stderr, /upgrade agent-bus/);
    assert.match(result.stderr, /epoch 2/);
    assert.equal(result.stdout, '');
  }
  assert.equal(sha256(bus.db), hash, 'the file is byte for byte unchanged');
  assert.throws(() => new SqliteStore(bus.db), SchemaTooNewError);
  assert.equal(sha256(bus.db), hash, 'the file is byte for byte unchanged after SqliteStore');
  assert.deepEqual(backupFiles(bus.db), [], 'no backup is made of a database that is not migrated');
  assert.equal(userVersion(bus.db), 2001, 'not downgraded');
}

test('a database from a newer epoch (2001, WAL) is refused by every command with exit 3 and left unchanged', () => {
  const bus = newerEpochBus('wal');
  try {
    checkNewerEpochRefused(bus);
  } finally {
    bus.cleanup();
  }
});

test('a database from a newer epoch (2001, rollback journal) is refused with exit 3 and left unchanged', () => {
  // A newer agent-bus may well not use WAL; refusing the file must not rewrite its header.
  const bus = newerEpochBus('delete');
  try {
    checkNewerEpochRefused(bus);
  } finally {
    bus.cleanup();
  }
});

test('a newer step of the same epoch (1099) is used as is and not downgraded', async () => {
  const bus = fixtureBus('0.6', (db) => {
    db.exec(`
      ALTER TABLE messages ADD COLUMN priority TEXT;
      CREATE TABLE read_receipts (message_id TEXT NOT NULL, reader TEXT NOT NULL, read_at TEXT NOT NULL);
      UPDATE messages SET priority = 'high' WHERE message_id = '3578de92-6aaa-41d9-9ebb-370eaa748193';
      PRAGMA user_version = 1099;
    `);
  });
  try {
    const before = snapshot(bus.db);
    const roster = json<AgentView[]>(ok(runCli(['agents', '--json'], { env: bus.env }), 'agents'));
    assert.deepEqual(roster.map((agent) => agent.name), FIXTURES[2]?.agents);
    const after = snapshot(bus.db, before.columns);
    assert.equal(after.version, 1099, 'not downgraded');
    assert.deepEqual(after.rows, before.rows, 'nothing rewritten');
    for (const [table, columns] of Object.entries(before.columns)) {
      // Every column stays; ours that a file from a newer step lacks are added beside them.
      for (const column of columns) assert.ok(after.columns[table]?.includes(column), `${table}.${column} is kept`);
    }
    assert.ok(after.columns.messages?.includes('priority'), 'the newer column is kept');
    assert.deepEqual(backupFiles(bus.db), [], 'nothing migrated, nothing backed up');

    ok(runCli(['send', 'ping', '--to', 'repo-b', '--name', 'human'], { env: bus.env }), 'send');
    const inbox = json<MessageView[]>(runCli(['inbox', '--name', 'repo-b', '--json'], { env: bus.env }));
    assert.deepEqual(inbox.map((message) => message.body).slice(-1), ['ping']);
    // Our later steps (notices among them) are there too, so every command works on the file.
    ok(runCli(['notice', 'still works'], { env: bus.env }), 'notice');
    assert.equal(json<Array<{ message: string }>>(runCli(['channel', 'list', '--notices', '--json'], { env: bus.env }))[0]?.message, 'still works');
    const store = new SqliteStore(bus.db);
    await store.close();
    assert.equal(userVersion(bus.db), 1099);
    assert.deepEqual(backupFiles(bus.db), []);
  } finally {
    bus.cleanup();
  }
});

test('a newer step of the same epoch that has every table but the notices still gets them', () => {
  // As if written by a build that has steps 1-6 and a step of its own past ours.
  const bus = fixtureBus('0.6', (db) => {
    for (const step of STEPS.filter((candidate) => candidate.step >= 4 && candidate.step <= 6)) step.apply(db);
    db.exec('PRAGMA user_version = 1099');
  });
  try {
    ok(runCli(['notice', 'still works'], { env: bus.env }), 'notice');
    assert.equal(json<Array<{ message: string }>>(runCli(['channel', 'list', '--notices', '--json'], { env: bus.env }))[0]?.message, 'still works');
    assert.equal(userVersion(bus.db), 1099, 'not downgraded');
  } finally {
    bus.cleanup();
  }
});

test('a corrupt database (random text) fails every command with one clear line and is left unchanged', () => {
  const bus = privateBus();
  try {
    mkdirSync(dirname(bus.db), { recursive: true, mode: 0o700 });
    const printable = Buffer.from([...randomBytes(16_384)].map((byte) => (byte % 8 === 0 ? 0x0a : 0x20 + (byte % 95))));
    writeFileSync(bus.db, printable, { mode: 0o600 });
    const hash = sha256(bus.db);
    for (const args of FOREIGN_COMMANDS) {
      const result = runCli(args, { env: bus.env });
      assert.notEqual(result.code, 0, `${args.join(' ')} fails`);
      assert.notEqual(result.code, null, `${args.join(' ')} exits by itself`);
      assertOneLineError(result, args.join(' '));
      assert.match(result.stderr, /cannot use the database|cannot open/);
      assert.equal(result.stdout, '');
    }
    assert.throws(() => new SqliteStore(bus.db), StoreUnavailableError);
    assert.equal(sha256(bus.db), hash, 'the file is byte for byte unchanged');
    assert.deepEqual(readdirSync(dirname(bus.db)), [basename(bus.db)], 'no backup, journal or WAL file beside it');
  } finally {
    bus.cleanup();
  }
});

// ---------------------------------------------------------------------------
// Processes starting together on an old database.

test('4 processes starting together on a 0.5 database migrate it once and all register', async () => {
  const bus = fixtureBus('0.5');
  try {
    const before = snapshot(bus.db);
    const speakers = ['repo-c/claude', 'repo-c/codex', 'repo-d/gemini', 'ops'];
    const results = await Promise.all(
      speakers.map((name) => runCliAsync(['send', `hello from ${name}`, '--to', '*', '--name', name, '--json'], { env: bus.env })),
    );
    results.forEach((result, index) => ok(result, `send as ${speakers[index]}`));
    assert.deepEqual(backupFiles(bus.db), [`${basename(bus.db)}.pre-migrate-1002`], 'exactly one backup');
    const after = snapshot(bus.db);
    assert.equal(after.version, TARGET_VERSION);
    const names = after.rows.agents?.map((row) => row.name) ?? [];
    for (const speaker of speakers) assert.ok(names.includes(speaker), `${speaker} is registered`);
    assert.equal(names.length, before.rows.agents!.length + speakers.length);
    const sent = results.map((result) => (JSON.parse(result.stdout) as { message_ids: string[] }).message_ids.length);
    assert.equal(after.rows.messages?.length, before.rows.messages!.length + sent.reduce((sum, n) => sum + n, 0));
    const saved = backupSnapshot(bus, join(dirname(bus.db), `${basename(bus.db)}.pre-migrate-1002`), before.columns);
    assert.equal(saved.version, 1002);
    assert.deepEqual(saved.rows, before.rows, 'the backup is the database before any of them wrote');
  } finally {
    bus.cleanup();
  }
});

test('6 processes starting together on a pre-WAL 0.4 database all succeed and leave it in WAL mode', async () => {
  const bus = fixtureBus('0.4');
  try {
    assert.equal(snapshot(bus.db).journal, 'delete');
    const runs = [
      ['agents', '--json'],
      ['send', 'one', '--to', 'repo-a', '--name', 'repo-b'],
      ['agents', '--json'],
      ['send', 'two', '--to', '*', '--name', 'repo-x/claude'],
      ['inbox', '--name', 'repo-b', '--json'],
      ['send', 'three', '--to', 'human', '--name', 'repo-y/codex'],
    ];
    const results = await Promise.all(runs.map((args) => runCliAsync(args, { env: bus.env })));
    results.forEach((result, index) => ok(result, (runs[index] ?? []).join(' ')));
    const after = snapshot(bus.db);
    assert.equal(after.version, TARGET_VERSION);
    assert.equal(after.journal, 'wal');
    assert.deepEqual(backupFiles(bus.db), [`${basename(bus.db)}.pre-migrate-0`]);
    const names = after.rows.agents?.map((row) => row.name) ?? [];
    for (const speaker of ['repo-x/claude', 'repo-y/codex']) assert.ok(names.includes(speaker), `${speaker} is registered`);
  } finally {
    bus.cleanup();
  }
});

// ---------------------------------------------------------------------------
// An older program on a migrated database.

test('an older program keeps working on a migrated 0.6 database; its bare-repo mail goes to the first reader', () => {
  const bus = fixtureBus('0.6');
  try {
    ok(runCli(['agents', '--json'], { env: bus.env }), 'agents');
    assert.equal(userVersion(bus.db), TARGET_VERSION);

    const oldIds = ['0d2f6b8e-91a4-4c37-b5e0-7c3a9f14d2b6', '6a9c4e21-3f7b-4d08-a2c5-e81b0f93d7a4'];
    const old = connectSqlite(bus.db, { timeoutMs: 30_000 });
    try {
      // The way 0.4 wrote mail: only the step-1 columns, to the bare repo name.
      old
        .prepare(
          `INSERT INTO messages (message_id, from_agent, to_agent, body, thread_id, sent_at, read_at, delivered_at)
           VALUES (?, ?, ?, ?, ?, ?, NULL, NULL)`,
        )
        .run([oldIds[0], 'repo-b', 'repo-a', 'written by an old agent-bus', '5d0e7a3c-b2f1-4c69-8e47-19a6d3c0f852', '2025-03-05T08:00:00.000001Z']);
      // The way 0.6 names its columns (none of ours), still to the bare repo name.
      old
        .prepare(
          `INSERT INTO messages (message_id, from_agent, to_agent, body, thread_id, sent_at, read_at, delivered_at,
                                 addressed_to, fanout_id, to_group, claimed_by)
           VALUES (?, ?, ?, ?, ?, ?, NULL, NULL, ?, NULL, NULL, NULL)`,
        )
        .run([oldIds[1], 'human', 'repo-a', 'also from an old agent-bus', '5d0e7a3c-b2f1-4c69-8e47-19a6d3c0f852', '2025-03-05T08:00:01.000002Z', 'repo-a']);
      // And registers an agent the 0.6 way.
      old
        .prepare(
          `INSERT INTO agents (name, repo_path, registered_at, last_seen, group_name, client, topic)
           VALUES (?, ?, ?, ?, ?, ?, NULL)`,
        )
        .run(['repo-e/claude', '/home/dev/src/repo-e', '2025-03-05T08:00:02.000003Z', '2025-03-05T08:00:02.000003Z', 'repo-e', 'claude']);
    } finally {
      old.close();
    }

    const roster = json<AgentView[]>(runCli(['agents', '--json'], { env: bus.env }));
    assert.ok(roster.some((agent) => agent.name === 'repo-e/claude' && agent.kind === 'client'));

    const first = json<MessageView[]>(runCli(['inbox', '--name', 'repo-a/codex', '--json'], { env: bus.env }));
    for (const id of oldIds) assert.ok(first.some((message) => message.message_id === id), `the first reader gets ${id}`);
    for (const reader of ['repo-a/claude', 'repo-a/claude-frontend']) {
      const later = json<MessageView[]>(runCli(['inbox', '--name', reader, '--json'], { env: bus.env }));
      for (const id of oldIds) assert.ok(!later.some((message) => message.message_id === id), `${reader} never gets ${id}`);
    }

    // The old program reads back what the new one wrote, naming its columns.
    const reader = connectSqlite(bus.db, { readonly: true });
    try {
      const rows = reader
        .prepare(
          `SELECT message_id, from_agent, to_agent, body, thread_id, sent_at, read_at, delivered_at
             FROM messages WHERE message_id IN (?, ?) ORDER BY message_id`,
        )
        .all(oldIds) as Row[];
      assert.equal(rows.length, 2);
      for (const row of rows) {
        assert.equal(row.to_agent, 'repo-a', 'left addressed as written');
        assert.notEqual(row.read_at, null, 'marked read');
      }
    } finally {
      reader.close();
    }
  } finally {
    bus.cleanup();
  }
});
