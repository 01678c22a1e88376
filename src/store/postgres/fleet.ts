/** The fleet on PostgreSQL: a slot is claimed under a lock on its machine, so two supervisors never both take the last one. */
import type { FleetPort } from '../ports/fleet.js';
import { columnList, runnerRecordOf, runnerValues, selectList, SPAWN_FIELDS, spawnRecordOf, spawnValues, tmuxText, valuesList, type RunnerRow } from '../shared/columns.js';
import { LOCK, type PostgresPool } from './pool.js';

type SpawnRow = Parameters<typeof spawnRecordOf>[0];

export function postgresFleet(pool: PostgresPool): FleetPort {
  const select = `SELECT ${selectList(SPAWN_FIELDS)} FROM spawns`;
  const fields = Object.keys(SPAWN_FIELDS);
  return {
    async addSpawn(record) {
      const values = spawnValues(record);
      await pool.transaction([], (query) =>
        query(`INSERT INTO spawns (${columnList(SPAWN_FIELDS)}) VALUES (${valuesList(SPAWN_FIELDS, (_, index) => `$${index + 1}`)}) ON CONFLICT DO NOTHING`, fields.map((field) => values[field] ?? null)),
      );
    },

    async claimSpawnSlot(spawnId, supervisor, max, now) {
      const spawn = await pool.one<{ machine: string }>('SELECT machine FROM spawns WHERE spawn_id = $1', [spawnId]);
      if (spawn === undefined) return false;
      return pool.transaction([[LOCK.fleet, spawn.machine]], async (query) => {
        const running = (await query("SELECT COUNT(*)::int AS n FROM spawns WHERE machine = $1 AND state = 'running'", [spawn.machine])).rows[0] as { n: number };
        if (running.n >= max) return false;
        const claimed = await query("UPDATE spawns SET state = 'running', supervisor = $2, started_at = $3 WHERE spawn_id = $1 AND state = 'queued'", [spawnId, supervisor, now]);
        return (claimed.rowCount ?? 0) > 0;
      });
    },

    async noteSpawnWaiter(spawnId, supervisor) {
      await pool.transaction([], (query) => query("UPDATE spawns SET supervisor = $2 WHERE spawn_id = $1 AND state = 'queued'", [spawnId, supervisor]));
    },

    async noteSpawnFolder(spawnId, folder) {
      await pool.transaction([], (query) => query('UPDATE spawns SET folder = $2 WHERE spawn_id = $1', [spawnId, folder]));
    },

    async noteSpawnPid(spawnId, pid, tmux) {
      await pool.transaction([], (query) => query('UPDATE spawns SET pid = $2, tmux = COALESCE($3, tmux) WHERE spawn_id = $1', [spawnId, pid, tmux === undefined ? null : tmuxText(tmux)]));
    },

    async noteSpawnSession(spawnId, sessionKey) {
      await pool.transaction([], (query) => query('UPDATE spawns SET session_key = $2 WHERE spawn_id = $1', [spawnId, sessionKey]));
    },

    async recordSpawnExit(spawnId, exit) {
      return pool.transaction([], async (query) => {
        const result = await query(
          "UPDATE spawns SET state = 'exited', ended_at = $2, exit_code = $3, exit_signal = $4, exit_category = $5, exit_note = $6 WHERE spawn_id = $1 AND state <> 'exited'",
          [spawnId, exit.endedAt, exit.exitCode, exit.exitSignal, exit.exitCategory, exit.exitNote],
        );
        return (result.rowCount ?? 0) > 0;
      });
    },

    async requestSpawnStop(spawnId, now) {
      return pool.transaction([], async (query) => ((await query("UPDATE spawns SET stop_requested_at = COALESCE(stop_requested_at, $2) WHERE spawn_id = $1 AND state <> 'exited'", [spawnId, now])).rowCount ?? 0) > 0);
    },

    async spawns() {
      return (await pool.read<SpawnRow>(`${select} ORDER BY created_at, spawn_id`)).map(spawnRecordOf);
    },

    async spawnById(spawnId) {
      const row = await pool.one<SpawnRow>(`${select} WHERE spawn_id = $1`, [spawnId]);
      return row === undefined ? null : spawnRecordOf(row);
    },

    async spawnOf(name) {
      const row = await pool.one<SpawnRow>(`${select} WHERE name = $1 ORDER BY created_at DESC, spawn_id DESC LIMIT 1`, [name]);
      return row === undefined ? null : spawnRecordOf(row);
    },

    async noteSpawnLog(spawnId, tail) {
      await pool.transaction([], (query) => query('UPDATE spawns SET log_tail = $2 WHERE spawn_id = $1', [spawnId, tail]));
    },

    async spawnLog(spawnId) {
      return (await pool.one<{ log_tail: string | null }>('SELECT log_tail FROM spawns WHERE spawn_id = $1', [spawnId]))?.log_tail ?? null;
    },

    async offerRunner(runner) {
      const row = runnerValues(runner);
      await pool.transaction([], (query) =>
        query(
          `INSERT INTO runners (machine, agent, clients, repos, max_spawned, bus_folder, heartbeat_ms, started_at, seen_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
           ON CONFLICT (machine) DO UPDATE SET agent = EXCLUDED.agent, clients = EXCLUDED.clients, repos = EXCLUDED.repos,
             max_spawned = EXCLUDED.max_spawned, bus_folder = EXCLUDED.bus_folder, heartbeat_ms = EXCLUDED.heartbeat_ms, started_at = EXCLUDED.started_at, seen_at = EXCLUDED.seen_at`,
          [row.machine, row.agent, row.clients, row.repos, row.max_spawned, row.bus_folder, row.heartbeat_ms, row.started_at, row.seen_at],
        ),
      );
    },

    async runners() {
      return (await pool.read<RunnerRow>('SELECT * FROM runners ORDER BY machine')).map(runnerRecordOf);
    },
  };
}
