/** The roster on PostgreSQL. */
import type { AgentRecord, Registration } from '../../model/records.js';
import type { RosterPort, RosterQuery } from '../ports/roster.js';
import { AGENT_FIELDS, selectList, SESSION_FIELDS } from '../shared/columns.js';
import { namesUnder } from '../shared/ranges.js';
import { walkRosterAsync } from '../shared/roster-walk.js';
import type { PostgresPool, Query } from './pool.js';

const AGENT_COLUMNS = selectList(AGENT_FIELDS);
const SESSION_COLUMNS = selectList(SESSION_FIELDS);

/** The rows that may belong to repo $1 (RosterPort.agentsOfRepo): $2 and $3 bound the names under it (repoParams). */
export const REPO_ROWS = `SELECT ${AGENT_COLUMNS} FROM agents
  WHERE group_name = $1 OR name = $1 OR (group_name IS NULL AND name >= $2 AND name < $3) ORDER BY name`;

export function repoParams(repo: string): unknown[] {
  const { from, to } = namesUnder(repo);
  return [repo, from, to];
}

/** Put names on the roster (inside the caller's transaction): the owner's registration updates the repo path too. */
export async function registerWith(query: Query, registrations: Registration[], now: string): Promise<void> {
  for (const reg of registrations) {
    const update = reg.authoritative
      ? 'repo_path = excluded.repo_path, last_seen = excluded.last_seen, group_name = excluded.group_name, client = excluded.client'
      : 'last_seen = excluded.last_seen, group_name = excluded.group_name, client = excluded.client';
    await query(
      `INSERT INTO agents (name, repo_path, registered_at, last_seen, group_name, client) VALUES ($1, $2, $3, $3, $4, $5)
       ON CONFLICT (name) DO UPDATE SET ${update}`,
      [reg.name, reg.repoPath, now, reg.repo, reg.client],
    );
  }
}

/** The roster rows a send to `roster` decides over. */
export async function candidates(query: Query, roster: RosterQuery): Promise<AgentRecord[]> {
  switch (roster.kind) {
    case 'all':
      return (await query(`SELECT ${AGENT_COLUMNS} FROM agents ORDER BY name`)).rows as AgentRecord[];
    case 'name':
      return (await query(`SELECT ${AGENT_COLUMNS} FROM agents WHERE name = $1`, [roster.name])).rows as AgentRecord[];
    case 'repo':
      return (await query(REPO_ROWS, repoParams(roster.repo))).rows as AgentRecord[];
  }
}

export function postgresRoster(pool: PostgresPool): RosterPort {
  return {
    async register(registrations, now) {
      await pool.transaction([], (query) => registerWith(query, registrations, now));
    },

    async touch(names, now) {
      if (names.length === 0) return;
      await pool.writeAlone('UPDATE agents SET last_seen = $1 WHERE name = ANY($2::text[])', [now, names]);
    },

    async getAgent(name) {
      return (await pool.one<AgentRecord>(`SELECT ${AGENT_COLUMNS} FROM agents WHERE name = $1`, [name])) ?? null;
    },

    async agentsOfRepo(repo) {
      return pool.read<AgentRecord>(REPO_ROWS, repoParams(repo));
    },

    async roster(orphansOf) {
      return pool.transaction(
        [],
        async (query) => {
          await query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
          const rows = async <T>(sql: string, params?: unknown[]): Promise<T[]> => (await query(sql, params)).rows as T[];
          return walkRosterAsync(orphansOf, {
            agents: () => rows(`SELECT ${AGENT_COLUMNS} FROM agents ORDER BY name`),
            unreadCounts: () => rows('SELECT to_agent AS "toAgent", COUNT(*)::int AS n FROM messages WHERE read_at IS NULL GROUP BY to_agent ORDER BY to_agent'),
            unreadTo: (name) =>
              rows('SELECT to_agent AS "toAgent", message_id AS "messageId", fanout_id AS "fanoutId" FROM messages WHERE to_agent = $1 AND read_at IS NULL ORDER BY message_id', [name]),
            copyHolders: async (fanoutId) => (await rows<{ toAgent: string }>('SELECT to_agent AS "toAgent" FROM messages WHERE fanout_id = $1', [fanoutId])).map((copy) => copy.toAgent),
            sessionHolders: () => rows(`SELECT ${SESSION_COLUMNS} FROM sessions WHERE ended_at IS NULL ORDER BY started_at, server_pid`),
          });
        },
        false,
      );
    },

    async forget(name) {
      return pool.transaction([], async (query) => {
        const removed = ((await query('DELETE FROM agents WHERE name = $1', [name])).rowCount ?? 0) > 0;
        const pending = (await query('SELECT COUNT(*)::int AS n FROM messages WHERE to_agent = $1 AND read_at IS NULL', [name])).rows[0]?.n ?? 0;
        return { removed, pending };
      });
    },

    async removeAgents(names) {
      if (names.length === 0) return [];
      return pool.transaction([], async (query) =>
        ((await query('DELETE FROM agents WHERE name = ANY($1::text[]) RETURNING name', [names])).rows as Array<{ name: string }>).map((row) => row.name),
      );
    },

    async agentsAt(repoPath) {
      return pool.read<AgentRecord>(`SELECT ${AGENT_COLUMNS} FROM agents WHERE repo_path = $1 ORDER BY name`, [repoPath]);
    },

    async setTopic(name, topic) {
      await pool.writeAlone('UPDATE agents SET topic = $1 WHERE name = $2', [topic, name]);
    },

    async retire(old, moveTo) {
      return pool.transaction([], async (query) => {
        const removed = ((await query('DELETE FROM agents WHERE name = $1', [old])).rowCount ?? 0) > 0;
        if (moveTo === null) {
          const left = (await query('SELECT COUNT(*)::int AS n FROM messages WHERE to_agent = $1 AND read_at IS NULL', [old])).rows[0]?.n ?? 0;
          return { removed, moved: 0, left };
        }
        const moved = (await query('UPDATE messages SET to_agent = $1 WHERE to_agent = $2 AND read_at IS NULL', [moveTo, old])).rowCount ?? 0;
        return { removed, moved, left: 0 };
      });
    },
  };
}
