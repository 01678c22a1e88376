/** Sessions, their routes and their counters on PostgreSQL: a client address's lock serializes its starts, ends and renames. */
import type { AgentRecord, ClientRoute, SessionRowKey, SessionRecord } from '../../model/records.js';
import type { AddressMove, SessionsPort } from '../ports/sessions.js';
import { ROUTE_FIELDS, selectList, SESSION_FIELDS } from '../shared/columns.js';
import { LOCK, type PostgresPool, type Query } from './pool.js';
import { registerWith, REPO_ROWS, repoParams } from './roster.js';

const SESSION_COLUMNS = selectList(SESSION_FIELDS);
const ROUTE_COLUMNS = selectList(ROUTE_FIELDS);

const SESSION_KEY = 'server_pid = $1 AND server_started = $2 AND client_address = $3';

function keyParams(key: SessionRowKey): unknown[] {
  return [key.serverPid, key.serverStarted, key.clientAddress];
}

async function rowsOf(query: Query, clientAddress: string): Promise<SessionRecord[]> {
  return (await query(`SELECT ${SESSION_COLUMNS} FROM sessions WHERE client_address = $1 ORDER BY started_at, server_pid`, [clientAddress])).rows as SessionRecord[];
}

/** Give up an address (QUERIES.md): its unread mail to the client address, unless that holds a copy; its sent mail from it; its row gone. */
async function giveUpWith(query: Query, name: string, clientAddress: string, repo: string): Promise<AddressMove> {
  const moved =
    (
      await query(
        `UPDATE messages m SET to_agent = $2
          WHERE m.to_agent = $1 AND m.read_at IS NULL
            AND (m.fanout_id IS NULL OR NOT EXISTS (
              SELECT 1 FROM messages s WHERE s.fanout_id = m.fanout_id AND s.to_group = $3 AND s.to_agent = $2))`,
        [name, clientAddress, repo],
      )
    ).rowCount ?? 0;
  await query('UPDATE messages SET from_agent = $2 WHERE from_agent = $1 AND read_at IS NULL', [name, clientAddress]);
  await query('DELETE FROM agents WHERE name = $1', [name]);
  return { name, moved };
}

export function postgresSessions(pool: PostgresPool): SessionsPort {
  return {
    async sessionRows(clientAddress) {
      if (clientAddress === undefined) return pool.read<SessionRecord>(`SELECT ${SESSION_COLUMNS} FROM sessions ORDER BY started_at, server_pid`);
      return pool.read<SessionRecord>(`SELECT ${SESSION_COLUMNS} FROM sessions WHERE client_address = $1 ORDER BY started_at, server_pid`, [clientAddress]);
    },

    async startSession(input) {
      return pool.transaction(
        [
          [LOCK.client, input.clientAddress],
          [LOCK.inbox, input.repo],
        ],
        async (query) => {
          const rows = await rowsOf(query, input.clientAddress);
          const roster = (await query(REPO_ROWS, repoParams(input.repo))).rows as AgentRecord[];
          const decision = input.decide(rows, roster);
          for (const key of [...decision.expire, ...decision.replace]) await query(`DELETE FROM sessions WHERE ${SESSION_KEY}`, keyParams(key));
          for (const key of decision.endCrashed) await query(`UPDATE sessions SET ended_at = $4 WHERE ${SESSION_KEY} AND ended_at IS NULL`, [...keyParams(key), input.now]);
          const givenUp: AddressMove[] = [];
          for (const name of decision.giveUp) givenUp.push(await giveUpWith(query, name, input.clientAddress, input.repo));
          const row = input.row;
          await query(
            `INSERT INTO sessions (server_pid, server_started, name, client_address, repo_path, lineage, session_key, boot_id, pid_ns, started_at, last_seen, ended_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, NULL)
             ON CONFLICT (server_pid, server_started, client_address) DO UPDATE SET name = excluded.name, repo_path = excluded.repo_path,
               lineage = excluded.lineage, session_key = excluded.session_key, boot_id = excluded.boot_id, pid_ns = excluded.pid_ns,
               started_at = excluded.started_at, last_seen = excluded.last_seen, ended_at = NULL`,
            [row.serverPid, row.serverStarted, decision.name, row.clientAddress, row.repoPath, row.lineage, row.sessionKey, row.bootId, row.pidNs, row.startedAt, row.lastSeen],
          );
          await registerWith(query, decision.registrations, input.now);
          return { decision, givenUp };
        },
      );
    },

    async endSession(key, repo, now, giveUp) {
      return pool.transaction(
        [
          [LOCK.client, key.clientAddress],
          [LOCK.inbox, repo],
        ],
        async (query) => {
          const rows = await rowsOf(query, key.clientAddress);
          const row = rows.find((candidate) => candidate.serverPid === key.serverPid && candidate.serverStarted === key.serverStarted);
          if (!row || row.endedAt !== null) return null;
          await query(`UPDATE sessions SET ended_at = $4, last_seen = $4 WHERE ${SESSION_KEY}`, [...keyParams(key), now]);
          const move = giveUp(rows, row) ? await giveUpWith(query, row.name, key.clientAddress, repo) : null;
          return { name: row.name, move };
        },
      );
    },

    async renameSession(input) {
      return pool.transaction([[LOCK.client, input.key.clientAddress]], async (query) => {
        const plan = input.plan(await rowsOf(query, input.key.clientAddress));
        const from = plan.from;
        for (const key of plan.replace) await query(`DELETE FROM sessions WHERE ${SESSION_KEY}`, keyParams(key));
        // The new name keeps a topic of its own, else takes the old name's (QUERIES.md, "Renaming a session").
        const oldTopic = ((await query('SELECT topic FROM agents WHERE name = $1', [from])).rows[0]?.topic as string | null | undefined) ?? null;
        await registerWith(query, plan.registrations, input.now);
        await query('UPDATE agents SET topic = COALESCE(topic, $1) WHERE name = $2', [oldTopic, input.to]);
        let moved = 0;
        if (plan.moveMail) {
          moved = (await query('UPDATE messages SET to_agent = $1 WHERE to_agent = $2 AND read_at IS NULL', [input.to, from])).rowCount ?? 0;
          await query('UPDATE messages SET from_agent = $1 WHERE from_agent = $2 AND read_at IS NULL', [input.to, from]);
          await query('DELETE FROM agents WHERE name = $1', [from]);
        }
        await query(`UPDATE sessions SET name = $4, last_seen = $5 WHERE ${SESSION_KEY}`, [...keyParams(input.key), input.to, input.now]);
        return { from, moved };
      });
    },

    async bindSessionKey(key, sessionKey) {
      await pool.writeAlone(`UPDATE sessions SET session_key = $4 WHERE ${SESSION_KEY}`, [...keyParams(key), sessionKey]);
    },

    async touchSession(key, now) {
      await pool.writeAlone(`UPDATE sessions SET last_seen = $4 WHERE ${SESSION_KEY} AND last_seen < $4`, [...keyParams(key), now]);
    },

    async route(threadId) {
      return (await pool.one<ClientRoute>(`SELECT ${ROUTE_COLUMNS} FROM client_routes WHERE thread_id = $1`, [threadId])) ?? null;
    },

    async saveRoute(route) {
      await pool.writeAlone(
        `INSERT INTO client_routes (thread_id, agent, client, executable, client_pid, client_started, repo_path, updated_at, turn_state)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
         ON CONFLICT (thread_id) DO UPDATE SET agent = excluded.agent, client = excluded.client, executable = excluded.executable,
           client_pid = excluded.client_pid, client_started = excluded.client_started, repo_path = excluded.repo_path,
           updated_at = excluded.updated_at, turn_state = COALESCE(excluded.turn_state, client_routes.turn_state),
           queued_at = CASE WHEN excluded.turn_state = 'busy' THEN NULL ELSE client_routes.queued_at END`,
        [route.threadId, route.agent, route.client, route.executable, route.clientPid, route.clientStarted, route.repoPath, route.updatedAt, route.turnState ?? null],
      );
    },

    async routes(agent) {
      if (agent === undefined) return pool.read<ClientRoute>(`SELECT ${ROUTE_COLUMNS} FROM client_routes ORDER BY updated_at, thread_id`);
      return pool.read<ClientRoute>(`SELECT ${ROUTE_COLUMNS} FROM client_routes WHERE agent = $1 ORDER BY updated_at, thread_id`, [agent]);
    },

    async markQueued(threadId, now) {
      return (await pool.writeAlone("UPDATE client_routes SET queued_at = $1 WHERE thread_id = $2 AND turn_state = 'idle' AND queued_at IS NULL", [now, threadId])) > 0;
    },

    async tick(session, counter, now) {
      // One statement, one round trip: the brain counts every tool call of every agent.
      const row = await pool.one<{ value: number }>(
        `INSERT INTO session_counters (session, counter, value, updated_at) VALUES ($1, $2, 1, $3)
         ON CONFLICT (session, counter) DO UPDATE SET value = session_counters.value + 1, updated_at = excluded.updated_at
         RETURNING value`,
        [session, counter, now],
      );
      return row?.value ?? 1;
    },
  };
}
