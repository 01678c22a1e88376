/** Sessions, their routes and their counters on SQLite. */
import { lazy } from '../shared/lazy.js';
import type { ClientRoute, SessionRowKey, SessionRecord } from '../../model/records.js';
import type { AddressMove, SessionsPort } from '../ports/sessions.js';
import { ROUTE_FIELDS, selectList, SESSION_FIELDS } from '../shared/columns.js';
import type { Params, SqliteConnection } from './driver.js';
import { registerNow, repoRows } from './roster.js';

const SESSION_COLUMNS = lazy(() => selectList(SESSION_FIELDS));
const ROUTE_COLUMNS = lazy(() => selectList(ROUTE_FIELDS));

const SESSION_KEY = 'server_pid = @serverPid AND server_started = @serverStarted AND client_address = @clientAddress';

function keyParams(key: SessionRowKey): Params {
  return { serverPid: key.serverPid, serverStarted: key.serverStarted, clientAddress: key.clientAddress };
}

function rowsOf(db: SqliteConnection, clientAddress: string): SessionRecord[] {
  return db.all<SessionRecord>(`SELECT ${SESSION_COLUMNS()} FROM sessions WHERE client_address = ?`, [clientAddress]);
}

/** Give up an address no running session holds (QUERIES.md, "Giving up an address"). */
function giveUpAddress(db: SqliteConnection, name: string, clientAddress: string, repo: string): AddressMove {
  const moved = db.run(
    `UPDATE messages SET to_agent = @shared
      WHERE to_agent = @name AND read_at IS NULL
        AND (fanout_id IS NULL OR NOT EXISTS (
          SELECT 1 FROM messages s WHERE s.fanout_id = messages.fanout_id AND s.to_group = @repo AND s.to_agent = @shared))`,
    { name, shared: clientAddress, repo },
  ).changes;
  db.run('UPDATE messages SET from_agent = @shared WHERE from_agent = @name AND read_at IS NULL', { name, shared: clientAddress });
  db.run('DELETE FROM agents WHERE name = ?', [name]);
  return { name, moved };
}

export function sqliteSessions(db: SqliteConnection): SessionsPort {
  return {
    async sessionRows(clientAddress) {
      if (clientAddress === undefined) return db.all<SessionRecord>(`SELECT ${SESSION_COLUMNS()} FROM sessions`);
      return rowsOf(db, clientAddress);
    },

    async startSession(input) {
      return db.immediate(() => {
        const decision = input.decide(rowsOf(db, input.clientAddress), repoRows(db, input.repo));
        for (const key of [...decision.expire, ...decision.replace]) db.run(`DELETE FROM sessions WHERE ${SESSION_KEY}`, keyParams(key));
        for (const key of decision.endCrashed) db.run(`UPDATE sessions SET ended_at = @now WHERE ${SESSION_KEY} AND ended_at IS NULL`, { ...keyParams(key), now: input.now });
        const givenUp = decision.giveUp.map((name) => giveUpAddress(db, name, input.clientAddress, input.repo));
        const row = input.row;
        db.run(
          `INSERT OR REPLACE INTO sessions (server_pid, server_started, name, client_address, repo_path, lineage, session_key,
             boot_id, pid_ns, started_at, last_seen, ended_at)
           VALUES (@serverPid, @serverStarted, @name, @clientAddress, @repoPath, @lineage, @sessionKey, @bootId, @pidNs,
             @startedAt, @lastSeen, NULL)`,
          {
            serverPid: row.serverPid,
            serverStarted: row.serverStarted,
            name: decision.name,
            clientAddress: row.clientAddress,
            repoPath: row.repoPath,
            lineage: row.lineage,
            sessionKey: row.sessionKey,
            bootId: row.bootId,
            pidNs: row.pidNs,
            startedAt: row.startedAt,
            lastSeen: row.lastSeen,
          },
        );
        registerNow(db, decision.registrations, input.now);
        return { decision, givenUp };
      });
    },

    async endSession(key, repo, now, giveUp) {
      return db.immediate(() => {
        const rows = rowsOf(db, key.clientAddress);
        const row = rows.find((candidate) => candidate.serverPid === key.serverPid && candidate.serverStarted === key.serverStarted);
        if (!row || row.endedAt !== null) return null;
        db.run(`UPDATE sessions SET ended_at = @now, last_seen = @now WHERE ${SESSION_KEY}`, { ...keyParams(key), now });
        const move = giveUp(rows, row) ? giveUpAddress(db, row.name, key.clientAddress, repo) : null;
        return { name: row.name, move };
      });
    },

    async renameSession(input) {
      return db.immediate(() => {
        const plan = input.plan(rowsOf(db, input.key.clientAddress));
        const from = plan.from;
        for (const key of plan.replace) db.run(`DELETE FROM sessions WHERE ${SESSION_KEY}`, keyParams(key));
        // The new name keeps a topic of its own, else takes the old name's (QUERIES.md, "Renaming a session").
        const oldTopic = db.get<{ topic: string | null }>('SELECT topic FROM agents WHERE name = ?', [from])?.topic ?? null;
        registerNow(db, plan.registrations, input.now);
        db.run('UPDATE agents SET topic = COALESCE(topic, @topic) WHERE name = @name', { topic: oldTopic, name: input.to });
        let moved = 0;
        if (plan.moveMail) {
          moved = db.run('UPDATE messages SET to_agent = @to WHERE to_agent = @from AND read_at IS NULL', { from, to: input.to }).changes;
          // A session never reads back what it sent to its client address, under any of its names.
          db.run('UPDATE messages SET from_agent = @to WHERE from_agent = @from AND read_at IS NULL', { from, to: input.to });
          db.run('DELETE FROM agents WHERE name = ?', [from]);
        }
        db.run(`UPDATE sessions SET name = @to, last_seen = @now WHERE ${SESSION_KEY}`, { ...keyParams(input.key), to: input.to, now: input.now });
        return { from, moved };
      });
    },

    async bindSessionKey(key, sessionKey) {
      db.immediate(() => db.run(`UPDATE sessions SET session_key = @sessionKey WHERE ${SESSION_KEY}`, { ...keyParams(key), sessionKey }));
    },

    async touchSession(key, now) {
      db.immediate(() => db.run(`UPDATE sessions SET last_seen = @now WHERE ${SESSION_KEY} AND last_seen < @now`, { ...keyParams(key), now }));
    },

    async route(threadId) {
      return db.get<ClientRoute>(`SELECT ${ROUTE_COLUMNS()} FROM client_routes WHERE thread_id = ?`, [threadId]) ?? null;
    },

    async saveRoute(route) {
      db.immediate(() =>
        db.run(
          `INSERT INTO client_routes (thread_id, agent, client, executable, client_pid, client_started, repo_path, updated_at, turn_state)
           VALUES (@threadId, @agent, @client, @executable, @clientPid, @clientStarted, @repoPath, @updatedAt, @turnState)
           ON CONFLICT(thread_id) DO UPDATE SET agent = excluded.agent, client = excluded.client, executable = excluded.executable,
             client_pid = excluded.client_pid, client_started = excluded.client_started, repo_path = excluded.repo_path,
             updated_at = excluded.updated_at, turn_state = COALESCE(excluded.turn_state, turn_state),
             queued_at = CASE WHEN excluded.turn_state = 'busy' THEN NULL ELSE queued_at END`,
          {
            threadId: route.threadId,
            agent: route.agent,
            client: route.client,
            executable: route.executable,
            clientPid: route.clientPid,
            clientStarted: route.clientStarted,
            repoPath: route.repoPath,
            updatedAt: route.updatedAt,
            turnState: route.turnState ?? null,
          },
        ),
      );
    },

    async routes(agent) {
      if (agent === undefined) return db.all<ClientRoute>(`SELECT ${ROUTE_COLUMNS()} FROM client_routes ORDER BY updated_at`);
      return db.all<ClientRoute>(`SELECT ${ROUTE_COLUMNS()} FROM client_routes WHERE agent = ? ORDER BY updated_at`, [agent]);
    },

    async markQueued(threadId, now) {
      return db.immediate(() => db.run("UPDATE client_routes SET queued_at = ? WHERE thread_id = ? AND turn_state = 'idle' AND queued_at IS NULL", [now, threadId]).changes > 0);
    },

    async tick(session, counter, now) {
      return db.immediate(
        () =>
          db.get<{ value: number }>(
            `INSERT INTO session_counters (session, counter, value, updated_at) VALUES (@session, @counter, 1, @now)
             ON CONFLICT(session, counter) DO UPDATE SET value = value + 1, updated_at = excluded.updated_at
             RETURNING value`,
            { session, counter, now },
          )?.value ?? 1,
      );
    },
  };
}
