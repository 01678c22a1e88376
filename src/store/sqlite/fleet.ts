/** The fleet on SQLite: a slot is claimed inside the write lock, so the count it checks is the one it changes. */
import type { FleetPort } from '../ports/fleet.js';
import { columnList, runnerRecordOf, runnerValues, selectList, SPAWN_FIELDS, spawnRecordOf, spawnValues, tmuxText, valuesList, type RunnerRow } from '../shared/columns.js';
import type { SqliteConnection } from './driver.js';

type SpawnRow = Parameters<typeof spawnRecordOf>[0];

export function sqliteFleet(db: SqliteConnection): FleetPort {
  const select = `SELECT ${selectList(SPAWN_FIELDS)} FROM spawns`;
  return {
    async addSpawn(record) {
      db.immediate(() => db.run(`INSERT OR IGNORE INTO spawns (${columnList(SPAWN_FIELDS)}) VALUES (${valuesList(SPAWN_FIELDS, (field) => `@${field}`)})`, spawnValues(record)));
    },

    async claimSpawnSlot(spawnId, supervisor, max, now) {
      return db.immediate(() => {
        const spawn = db.get<{ machine: string; state: string }>('SELECT machine, state FROM spawns WHERE spawn_id = ?', [spawnId]);
        if (spawn?.state !== 'queued') return false;
        const running = db.get<{ n: number }>("SELECT COUNT(*) AS n FROM spawns WHERE machine = ? AND state = 'running'", [spawn.machine])?.n ?? 0;
        if (running >= max) return false;
        db.run("UPDATE spawns SET state = 'running', supervisor = ?, started_at = ? WHERE spawn_id = ?", [supervisor, now, spawnId]);
        return true;
      });
    },

    async noteSpawnWaiter(spawnId, supervisor) {
      db.immediate(() => db.run("UPDATE spawns SET supervisor = ? WHERE spawn_id = ? AND state = 'queued'", [supervisor, spawnId]));
    },

    async noteSpawnFolder(spawnId, folder) {
      db.immediate(() => db.run('UPDATE spawns SET folder = ? WHERE spawn_id = ?', [folder, spawnId]));
    },

    async noteSpawnPid(spawnId, pid, tmux) {
      db.immediate(() => db.run('UPDATE spawns SET pid = ?, tmux = COALESCE(?, tmux) WHERE spawn_id = ?', [pid, tmux === undefined ? null : tmuxText(tmux), spawnId]));
    },

    async noteSpawnSession(spawnId, sessionKey) {
      db.immediate(() => db.run('UPDATE spawns SET session_key = ? WHERE spawn_id = ?', [sessionKey, spawnId]));
    },

    async recordSpawnExit(spawnId, exit) {
      return db.immediate(
        () =>
          db.run(
            "UPDATE spawns SET state = 'exited', ended_at = @endedAt, exit_code = @exitCode, exit_signal = @exitSignal, exit_category = @exitCategory, exit_note = @exitNote WHERE spawn_id = @spawnId AND state <> 'exited'",
            { spawnId, ...exit },
          ).changes > 0,
      );
    },

    async requestSpawnStop(spawnId, now) {
      return db.immediate(() => db.run("UPDATE spawns SET stop_requested_at = COALESCE(stop_requested_at, ?) WHERE spawn_id = ? AND state <> 'exited'", [now, spawnId]).changes > 0);
    },

    async spawns() {
      return db.all<SpawnRow>(`${select} ORDER BY created_at, spawn_id`).map(spawnRecordOf);
    },

    async spawnById(spawnId) {
      const row = db.get<SpawnRow>(`${select} WHERE spawn_id = ?`, [spawnId]);
      return row === undefined ? null : spawnRecordOf(row);
    },

    async spawnOf(name) {
      const row = db.get<SpawnRow>(`${select} WHERE name = ? ORDER BY created_at DESC, spawn_id DESC LIMIT 1`, [name]);
      return row === undefined ? null : spawnRecordOf(row);
    },

    async noteSpawnLog(spawnId, tail) {
      db.immediate(() => db.run('UPDATE spawns SET log_tail = ? WHERE spawn_id = ?', [tail, spawnId]));
    },

    async spawnLog(spawnId) {
      return db.get<{ log_tail: string | null }>('SELECT log_tail FROM spawns WHERE spawn_id = ?', [spawnId])?.log_tail ?? null;
    },

    async offerRunner(runner) {
      db.immediate(() =>
        db.run(
          `INSERT INTO runners (machine, agent, clients, repos, max_spawned, bus_folder, heartbeat_ms, started_at, seen_at)
           VALUES (@machine, @agent, @clients, @repos, @max_spawned, @bus_folder, @heartbeat_ms, @started_at, @seen_at)
           ON CONFLICT (machine) DO UPDATE SET agent = excluded.agent, clients = excluded.clients, repos = excluded.repos,
             max_spawned = excluded.max_spawned, bus_folder = excluded.bus_folder, heartbeat_ms = excluded.heartbeat_ms, started_at = excluded.started_at, seen_at = excluded.seen_at`,
          { ...runnerValues(runner) },
        ),
      );
    },

    async runners() {
      return db.all<RunnerRow>('SELECT * FROM runners ORDER BY machine').map(runnerRecordOf);
    },
  };
}

