/**
 * `agent-bus store copy FROM TO`: a whole bus moved between engines, every
 * table row for row, into an empty target only, and the counts checked.
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { TABLES } from '../../src/store/ports.js';
import { json, runCli, tempBus, type TempBus, messageLines } from '../helpers/bus-env.js';
import { register } from '../helpers/agents.js';

/** A bus with something in every table, made the way users make it (plus the few rows only a running server or watcher writes). */
function populate(bus: TempBus): void {
  const repo = join(bus.dir, 'shop');
  mkdirSync(join(repo, '.git'), { recursive: true });
  const as = (name: string) => ({ ...bus.env, AGENT_BUS_NAME: name, AGENT_BUS_REPO: repo });
  for (const name of ['shop/claude', 'shop/codex']) {
    register(as(name));
  }
  assert.equal(runCli(['send', 'to the repo', '--to', 'shop'], { env: bus.env }).code, 0);
  assert.equal(runCli(['send', 'to claude', '--to', 'shop/claude'], { env: bus.env }).code, 0);
  assert.equal(runCli(['inbox'], { env: as('shop/codex') }).code, 0, 'codex claims the repo-wide one');
  assert.equal(runCli(['channel', 'publish', 'brain', 'an info notice'], { env: bus.env }).code, 0);
  assert.equal(runCli(['channel', 'publish', 'ops', 'a critical notice', '-s', 'critical'], { env: bus.env }).code, 0);
  assert.equal(runCli(['token', 'create', 'shop/claude', '--expires', '30d'], { env: bus.env }).code, 0);
  // The brain: a feed folder, read at session start (brain state, a receipt), a tool call counted.
  mkdirSync(join(bus.folder, 'brain-feed'), { recursive: true });
  writeFileSync(join(bus.folder, 'brain-feed', 'arcs.md'), '---\ntitle: Arcs\n---\nthe hottest arc\n');
  const hookEnv = { ...as('shop/claude'), AGENT_BUS_CHANNELS: 'brain,ops' };
  assert.equal(runCli(['hook-session-start', '--client', 'claude'], { env: hookEnv, input: '{"session_id":"sess-1"}' }).code, 0);
  assert.equal(runCli(['hook-pre-tool', '--client', 'claude'], { env: hookEnv, input: '{"session_id":"sess-1"}' }).code, 0);
  // A Codex turn records its route.
  assert.equal(runCli(['hook-user-prompt', '--client', 'codex'], { env: as('shop/codex'), input: `{"session_id":"thread-9","cwd":"${repo}"}`, cwd: repo }).code, 0);
  bus.sql(
    `INSERT INTO sessions (server_pid, server_started, name, client_address, repo_path, lineage, session_key, boot_id, pid_ns, started_at, last_seen, ended_at)
     VALUES (4242, 'start-1', 'shop/claude-1', 'shop/claude', '${repo}', '[]', 'sess-1', NULL, NULL, '2026-12-01T00:00:00.000000Z', '2026-12-01T00:00:00.000000Z', NULL)`,
  );
  bus.sql("INSERT INTO wakes (agent, woken_at) VALUES ('shop/claude', '2026-12-01T00:00:00.000000Z')");
  bus.sql("INSERT INTO watchers (session, token, pid, started_at, agent) VALUES ('sess-1', 'tok', 4243, '2026-12-01T00:00:00.000000Z', 'shop/claude')");
  bus.sql("INSERT INTO brain_markers (marker_key, session, taken_at) VALUES ('m-1', 'sess-1', '2026-12-01T00:00:00.000000Z')");
  bus.sql("INSERT INTO maintenance (task, last_run_at) VALUES ('retention', '2026-12-01T00:00:00.000000Z')");
  // Urgent mail, a reservation, tasks (one after the other), and the rows only the pre-tool hook and notify_when write.
  assert.equal(runCli(['send', 'urgent one', '--to', 'shop/claude', '--urgent'], { env: bus.env }).code, 0);
  assert.equal(runCli(['reserve', 'src/**', '--reason', 'refactor'], { env: as('shop/claude'), cwd: repo }).code, 0);
  const first = runCli(['task', 'add', 'build', '--to', 'shop/codex'], { env: as('shop/claude') });
  assert.equal(first.code, 0, first.stderr);
  assert.equal(runCli(['task', 'add', 'deploy', '--to', 'shop', '--after', first.stdout.trim()], { env: as('shop/claude') }).code, 0);
  bus.sql("INSERT INTO edits (repo, path, agent, at) VALUES ('shop', 'src/a.ts', 'shop/codex', '2026-12-01T00:00:00.000000Z')");
  bus.sql("INSERT INTO collisions (repo, path, first_agent, second_agent, at) VALUES ('shop', 'src/a.ts', 'shop/claude', 'shop/codex', '2026-12-01T00:00:00.000000Z')");
  bus.sql("INSERT INTO presence_watches (watcher, name, state, created_at) VALUES ('shop/claude', 'shop/codex', 'idle', '2026-12-01T00:00:00.000000Z')");
  // A spawned agent's record: one whose client could not start, kept with its exit.
  assert.equal(runCli(['spawn', 'claude', '--prompt', 'a spawn', '--label', 'copied'], { env: { ...bus.env, AGENT_BUS_CLAUDE_BIN: 'no-such-claude' }, cwd: repo }).code, 1);
  // A runner's offer, and a remote agent's log as it sent it (rows only a hub writes).
  bus.sql(
    `INSERT INTO runners (machine, agent, clients, repos, max_spawned, bus_folder, heartbeat_ms, started_at, seen_at)
     VALUES ('box-2', 'shop/claude', 'claude codex', '[{"repo":"shop","folder":"/srv/shop"}]', 4, '/home/u/.agent-bus', 5000, '2026-12-01T00:00:00.000000Z', '2026-12-01T00:00:05.000000Z')`,
  );
  bus.sql("UPDATE spawns SET log_tail = 'a line' WHERE label = 'copied'");
  // An agent spawned with --tmux, as its supervisor notes its window.
  bus.sql(`UPDATE spawns SET tmux = '{"socket":"/tmp/tmux-1000/default","session":"$1","window":"@3","pane":"%3"}' WHERE label = 'copied'`);
  // An integration, and a delivery it took.
  assert.equal(runCli(['integration', 'add', 'github', '--kind', 'github', '--to', '{repo}'], { env: bus.env }).code, 0);
  bus.sql("INSERT INTO integration_deliveries (integration, delivery_id, received_at) VALUES ('github', 'd-1', '2026-12-01T00:00:00.000000Z')");
  // An integration out, an event queued for it by a notice (made into the outbox's row by a look at it), and one still in the intake.
  assert.equal(runCli(['integration', 'add', 'pager', '--kind', 'webhook', '--url', 'http://127.0.0.1:9/hook', '--on', 'notice:critical'], { env: bus.env }).code, 0);
  assert.equal(runCli(['channel', 'publish', 'ops', 'for the pager', '-s', 'critical'], { env: bus.env }).code, 0);
  assert.equal(runCli(['integration', 'outbox', '--json'], { env: bus.env }).code, 0);
  assert.equal(runCli(['channel', 'publish', 'ops', 'for the pager, later', '-s', 'critical'], { env: bus.env }).code, 0);
}

/** Every table's rows, in key order: what the two sides must agree on. */
function contents(bus: TempBus): Record<string, unknown[]> {
  const all: Record<string, unknown[]> = {};
  for (const table of TABLES) {
    all[table.name] = bus.rows(`SELECT ${table.columns.join(', ')} FROM ${table.name} ORDER BY ${table.key.join(', ')}`).map((row) => ({ ...row }));
  }
  return all;
}

test('a SQLite bus copied to PostgreSQL and back holds the same rows, every table, the messages in the order written', () => {
  const sqlite = tempBus();
  const postgres = tempBus({}, { engine: 'postgres', emptyDatabase: true });
  const back = tempBus();
  try {
    populate(sqlite);
    const before = contents(sqlite);
    for (const table of TABLES) assert.ok((before[table.name] ?? []).length > 0, `the source has rows in ${table.name}`);
    const copied = runCli(['store', 'copy', sqlite.db, postgres.db], { env: sqlite.env });
    assert.equal(copied.code, 0, copied.stderr);
    assert.match(copied.stdout, /^ {2}agents {18}4 rows$/m);
    assert.match(copied.stdout, /copied \d+ rows from .*bus\.db to postgres:\/\/postgres@127\.0\.0\.1:\d+\/agent_bus_t_\w+; every table's count matches\n$/);
    assert.deepEqual(contents(postgres), before, 'PostgreSQL holds exactly what SQLite held');
    const written = (bus: TempBus, order: string) => bus.rows<{ message_id: string }>(`SELECT message_id FROM messages ORDER BY ${order}`).map((row) => row.message_id);
    assert.deepEqual(written(postgres, 'seq'), written(sqlite, 'rowid'), 'the newest stay newest');
    // The copy is a working bus: the same roster and mail, read through the CLI.
    for (const args of [['agents', '--json'], ['inbox', '--name', 'shop/claude', '--peek', '--json'], ['channel', 'list', '--json']]) {
      assert.deepEqual(json(runCli(args, { env: postgres.env })), json(runCli(args, { env: sqlite.env })), args.join(' '));
    }
    const json_ = json<{ tables: Array<{ table: string; rows: number }> }>(runCli(['store', 'copy', postgres.db, back.db, '--json'], { env: postgres.env }));
    assert.deepEqual(json_.tables.map((row) => row.table), TABLES.map((table) => table.name));
    assert.deepEqual(contents(back), before, 'and back to SQLite, the same again');
  } finally {
    sqlite.cleanup();
    postgres.cleanup();
    back.cleanup();
  }
});

test('store copy refuses a target that holds a bus, a missing source, the same store twice, and bad usage; nothing is written', () => {
  const source = tempBus();
  const target = tempBus({}, { engine: 'postgres' });
  try {
    populate(source);
    assert.equal(runCli(['send', 'already here'], { env: target.env }).code, 0);
    const before = contents(target);
    const refused = runCli(['store', 'copy', source.db, target.db], { env: source.env });
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /^agent-bus: store copy: the target postgres:\/\/\S+ already holds a bus \(agents: 1\); copy into an empty database\. Nothing was copied\.\n$/);
    assert.deepEqual(contents(target), before, 'the target is as it was');
    const missing = runCli(['store', 'copy', join(source.dir, 'nope.db'), join(source.dir, 'new.db')], { env: source.env });
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /^agent-bus: store copy: there is no database at .*nope\.db\n$/);
    const same = runCli(['store', 'copy', source.db, source.db], { env: source.env });
    assert.equal(same.code, 1);
    assert.match(same.stderr, /the source and the target are the same store/);
    for (const args of [['store'], ['store', 'move', 'a', 'b'], ['store', 'copy', 'only-one'], ['store', 'copy', 'a', 'b', 'c']]) {
      const usage = runCli(args, { env: source.env });
      assert.equal(usage.code, 2, args.join(' '));
      assert.equal(messageLines(usage.stderr).length, 1);
    }
  } finally {
    source.cleanup();
    target.cleanup();
  }
});
