/** The roster on SQLite. */
import { lazy } from '../shared/lazy.js';
import type { AgentRecord, Registration } from '../../model/records.js';
import type { RosterPort, RosterQuery } from '../ports/roster.js';
import { AGENT_FIELDS, selectList, SESSION_FIELDS } from '../shared/columns.js';
import { namesUnder } from '../shared/ranges.js';
import { walkRoster } from '../shared/roster-walk.js';
import type { SqliteConnection } from './driver.js';

const AGENT_COLUMNS = lazy(() => selectList(AGENT_FIELDS));
const SESSION_COLUMNS = lazy(() => selectList(SESSION_FIELDS));

/** Put names on the roster (inside the caller's transaction): the owner's registration updates the repo path too. */
export function registerNow(db: SqliteConnection, registrations: Registration[], now: string): void {
  for (const reg of registrations) {
    const params = { name: reg.name, repo: reg.repoPath, now, group: reg.repo, client: reg.client };
    if (reg.authoritative) {
      db.run(
        `INSERT INTO agents (name, repo_path, registered_at, last_seen, group_name, client)
         VALUES (@name, @repo, @now, @now, @group, @client)
         ON CONFLICT(name) DO UPDATE SET repo_path = excluded.repo_path, last_seen = excluded.last_seen,
           group_name = excluded.group_name, client = excluded.client`,
        params,
      );
    } else {
      db.run(
        `INSERT INTO agents (name, repo_path, registered_at, last_seen, group_name, client)
         VALUES (@name, @repo, @now, @now, @group, @client)
         ON CONFLICT(name) DO UPDATE SET last_seen = excluded.last_seen,
           group_name = excluded.group_name, client = excluded.client`,
        params,
      );
    }
  }
}

/** The rows that may belong to `repo` (RosterPort.agentsOfRepo). */
export function repoRows(db: SqliteConnection, repo: string): AgentRecord[] {
  // The range is every name that begins `repo/`, through the primary key.
  const { from, to } = namesUnder(repo);
  return db.all<AgentRecord>(
    `SELECT ${AGENT_COLUMNS()} FROM agents
      WHERE group_name = @repo OR name = @repo OR (group_name IS NULL AND name >= @from AND name < @to) ORDER BY name`,
    { repo, from, to },
  );
}

/** The roster rows a send to `query` decides over. */
export function candidates(db: SqliteConnection, query: RosterQuery): AgentRecord[] {
  switch (query.kind) {
    case 'all':
      return db.all<AgentRecord>(`SELECT ${AGENT_COLUMNS()} FROM agents ORDER BY name`);
    case 'name':
      return db.all<AgentRecord>(`SELECT ${AGENT_COLUMNS()} FROM agents WHERE name = ?`, [query.name]);
    case 'repo':
      return repoRows(db, query.repo);
  }
}

export function sqliteRoster(db: SqliteConnection): RosterPort {
  return {
    async register(registrations, now) {
      db.immediate(() => registerNow(db, registrations, now));
    },

    async touch(names, now) {
      if (names.length === 0) return;
      db.immediate(() => {
        for (const name of names) db.run('UPDATE agents SET last_seen = @now WHERE name = @name', { name, now });
      });
    },

    async getAgent(name) {
      return db.get<AgentRecord>(`SELECT ${AGENT_COLUMNS()} FROM agents WHERE name = ?`, [name]) ?? null;
    },

    async agentsOfRepo(repo) {
      return repoRows(db, repo);
    },

    async roster(orphansOf) {
      return db.deferred(() =>
        walkRoster(orphansOf, {
          agents: () => db.all<AgentRecord>(`SELECT ${AGENT_COLUMNS()} FROM agents ORDER BY name`),
          unreadCounts: () => db.all('SELECT to_agent AS "toAgent", COUNT(*) AS n FROM messages WHERE read_at IS NULL GROUP BY to_agent ORDER BY to_agent'),
          unreadTo: (name) =>
            db.all('SELECT to_agent AS "toAgent", message_id AS "messageId", fanout_id AS "fanoutId" FROM messages WHERE to_agent = ? AND read_at IS NULL ORDER BY message_id', [name]),
          copyHolders: (fanoutId) => db.all<{ toAgent: string }>('SELECT to_agent AS "toAgent" FROM messages WHERE fanout_id = ?', [fanoutId]).map((copy) => copy.toAgent),
          sessionHolders: () => db.all(`SELECT ${SESSION_COLUMNS()} FROM sessions WHERE ended_at IS NULL`),
        }),
      );
    },

    async forget(name) {
      return db.immediate(() => {
        const removed = db.run('DELETE FROM agents WHERE name = ?', [name]).changes > 0;
        const row = db.get<{ n: number }>('SELECT COUNT(*) AS n FROM messages WHERE to_agent = ? AND read_at IS NULL', [name]);
        return { removed, pending: row?.n ?? 0 };
      });
    },

    async removeAgents(names) {
      return db.immediate(() => names.filter((name) => db.run('DELETE FROM agents WHERE name = ?', [name]).changes > 0));
    },

    async agentsAt(repoPath) {
      return db.all<AgentRecord>(`SELECT ${AGENT_COLUMNS()} FROM agents WHERE repo_path = ? ORDER BY name`, [repoPath]);
    },

    async setTopic(name, topic) {
      db.immediate(() => db.run('UPDATE agents SET topic = ? WHERE name = ?', [topic, name]));
    },

    async retire(old, moveTo) {
      return db.immediate(() => {
        const removed = db.run('DELETE FROM agents WHERE name = ?', [old]).changes > 0;
        if (moveTo === null) {
          const left = db.get<{ n: number }>('SELECT COUNT(*) AS n FROM messages WHERE to_agent = ? AND read_at IS NULL', [old])?.n ?? 0;
          return { removed, moved: 0, left };
        }
        const moved = db.run('UPDATE messages SET to_agent = ? WHERE to_agent = ? AND read_at IS NULL', [moveTo, old]).changes;
        return { removed, moved, left: 0 };
      });
    },
  };
}
