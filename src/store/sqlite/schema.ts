/**
 * The SQLite schema, versioned as `PRAGMA user_version = epoch * 1000 + step`.
 * Steps only add (tables, nullable columns, indexes) and are idempotent, so an
 * older agent-bus keeps working against a newer database of the same epoch.
 * Steps 1–3 are the schemas the Python agent-bus 0.4, 0.5 and 0.6 wrote.
 */
import type { SchemaConnection } from './driver.js';

export const SCHEMA_EPOCH = 1;
export const EPOCH_SIZE = 1000;

type Db = SchemaConnection;

function columns(db: Db, table: string): Set<string> {
  const rows = db.prepare(`PRAGMA table_info(${table})`).all() as Array<{ name: string }>;
  return new Set(rows.map((row) => row.name));
}

function addColumns(db: Db, table: string, definitions: Record<string, string>): void {
  const present = columns(db, table);
  for (const [name, type] of Object.entries(definitions)) {
    if (!present.has(name)) db.exec(`ALTER TABLE ${table} ADD COLUMN ${name} ${type}`);
  }
}

export interface MigrationStep {
  step: number;
  description: string;
  apply(db: Db): void;
}

export const STEPS: MigrationStep[] = [
  {
    step: 1,
    description: 'agents and messages (the 0.4 schema)',
    apply(db) {
      db.exec(`
        CREATE TABLE IF NOT EXISTS agents (
          name TEXT PRIMARY KEY,
          repo_path TEXT NOT NULL,
          registered_at TEXT NOT NULL,
          last_seen TEXT NOT NULL
        );
        CREATE TABLE IF NOT EXISTS messages (
          message_id TEXT PRIMARY KEY,
          from_agent TEXT NOT NULL,
          to_agent TEXT NOT NULL,
          body TEXT NOT NULL,
          thread_id TEXT NOT NULL,
          sent_at TEXT NOT NULL,
          read_at TEXT,
          delivered_at TEXT
        );
        CREATE INDEX IF NOT EXISTS idx_messages_inbox ON messages(to_agent, read_at);
        CREATE INDEX IF NOT EXISTS idx_messages_thread ON messages(thread_id, sent_at);
      `);
    },
  },
  {
    step: 2,
    description: 'repo-wide addressing and claims (the 0.5 schema)',
    apply(db) {
      addColumns(db, 'agents', { group_name: 'TEXT', client: 'TEXT' });
      addColumns(db, 'messages', { addressed_to: 'TEXT', fanout_id: 'TEXT', to_group: 'TEXT', claimed_by: 'TEXT' });
      db.exec(`
        CREATE INDEX IF NOT EXISTS idx_agents_group ON agents(group_name);
        CREATE INDEX IF NOT EXISTS idx_messages_fanout ON messages(fanout_id);
      `);
    },
  },
  {
    step: 3,
    description: 'session addresses and topics (the 0.6 schema)',
    apply(db) {
      db.exec(`
        CREATE TABLE IF NOT EXISTS sessions (
          server_pid INTEGER NOT NULL,
          server_started TEXT NOT NULL,
          name TEXT NOT NULL,
          client_address TEXT NOT NULL,
          repo_path TEXT NOT NULL,
          lineage TEXT NOT NULL,
          session_key TEXT,
          boot_id TEXT,
          pid_ns TEXT,
          started_at TEXT NOT NULL,
          last_seen TEXT NOT NULL,
          ended_at TEXT,
          PRIMARY KEY (server_pid, server_started, client_address)
        );
        CREATE INDEX IF NOT EXISTS idx_sessions_address ON sessions(client_address);
      `);
      addColumns(db, 'agents', { topic: 'TEXT' });
      // Session-shaped names written by 0.5 (`repo/codex-docs`) belong to their repo.
      db.exec(`
        UPDATE agents SET group_name = substr(name, 1, instr(name, '/') - 1)
        WHERE instr(name, '/') > 1 AND instr(substr(name, instr(name, '/') + 1), '-') > 0
          AND group_name IS NULL
      `);
    },
  },
  {
    step: 4,
    description: 'indexes for unread mail and for one repo\'s copies of a fan-out',
    apply(db) {
      // Unread mail is a small slice of a table that only grows: a partial index keeps
      // inbox reads and roster counts independent of the history's size. A fan-out to
      // everyone has a copy per agent; claims and "do I already have a copy" look up
      // one repo's copies, not all of them.
      db.exec(`
        CREATE INDEX IF NOT EXISTS idx_messages_unread ON messages(to_agent, sent_at) WHERE read_at IS NULL;
        CREATE INDEX IF NOT EXISTS idx_messages_fanout_copies ON messages(fanout_id, to_group, to_agent) WHERE fanout_id IS NOT NULL;
      `);
    },
  },
  {
    step: 5,
    description: 'a lease on mail a hook is about to show',
    apply(db) {
      // Set while a hook prints a message and cleared by its reading; if the hook dies
      // first, the lease runs out and the mail is shown at the next turn. Older versions
      // ignore the column.
      addColumns(db, 'messages', { lease_until: 'TEXT' });
    },
  },
  {
    step: 6,
    description: 'how to reach a Codex session from outside: its thread id and executable',
    apply(db) {
      // Written by Codex's hooks at each turn, read by senders that queue a turn for an idle session.
      db.exec(`
        CREATE TABLE IF NOT EXISTS client_routes (
          thread_id TEXT PRIMARY KEY,
          agent TEXT NOT NULL,
          client TEXT NOT NULL,
          executable TEXT,
          client_pid INTEGER,
          client_started TEXT,
          repo_path TEXT NOT NULL,
          updated_at TEXT NOT NULL
        );
        CREATE INDEX IF NOT EXISTS idx_client_routes_agent ON client_routes(agent);
      `);
    },
  },
  {
    step: 7,
    description: 'notices (broadcasts with a severity, a TTL and an optional channel) and per-session receipts',
    apply(db) {
      // A notice is stored once; each session filters it at read time. A receipt records
      // what one session (keyed by its client's session id) was shown once or acknowledged.
      db.exec(`
        CREATE TABLE IF NOT EXISTS notices (
          notice_id TEXT PRIMARY KEY,
          channel TEXT,
          severity TEXT NOT NULL,
          title TEXT,
          body TEXT NOT NULL,
          source TEXT NOT NULL,
          priority INTEGER NOT NULL DEFAULT 5,
          content_hash TEXT NOT NULL,
          created_at TEXT NOT NULL,
          expires_at TEXT NOT NULL
        );
        CREATE INDEX IF NOT EXISTS idx_notices_due ON notices(severity, expires_at);
        CREATE INDEX IF NOT EXISTS idx_notices_channel ON notices(channel, expires_at);
        CREATE TABLE IF NOT EXISTS notice_receipts (
          notice_id TEXT NOT NULL,
          session TEXT NOT NULL,
          delivered_at TEXT,
          acknowledged_at TEXT,
          PRIMARY KEY (notice_id, session)
        ) WITHOUT ROWID;
      `);
    },
  },
  {
    step: 8,
    description: 'brain state (last fetch, last good content) and per-session counters',
    apply(db) {
      // One row per brain channel: what the last fetch found, so brain status reads it instead
      // of fetching. Counters are per client session (tool calls, for the brain's refresh).
      db.exec(`
        CREATE TABLE IF NOT EXISTS brain_state (
          channel TEXT PRIMARY KEY,
          source_kind TEXT NOT NULL,
          location TEXT NOT NULL,
          content_hash TEXT,
          entry_count INTEGER NOT NULL DEFAULT 0,
          cut_by_cap INTEGER NOT NULL DEFAULT 0,
          warnings TEXT NOT NULL DEFAULT '[]',
          last_fetch_at TEXT,
          last_ok_at TEXT,
          last_error TEXT
        );
        CREATE TABLE IF NOT EXISTS session_counters (
          session TEXT NOT NULL,
          counter TEXT NOT NULL,
          value INTEGER NOT NULL,
          updated_at TEXT NOT NULL,
          PRIMARY KEY (session, counter)
        ) WITHOUT ROWID;
      `);
    },
  },
  {
    step: 9,
    description: 'brain markers already taken from a session (each is written back once)',
    apply(db) {
      db.exec(`
        CREATE TABLE IF NOT EXISTS brain_markers (
          marker_key TEXT PRIMARY KEY,
          session TEXT NOT NULL,
          taken_at TEXT NOT NULL
        ) WITHOUT ROWID;
      `);
    },
  },
  {
    step: 10,
    description: 'wakes per agent, for the hourly rate limit',
    apply(db) {
      db.exec(`
        CREATE TABLE IF NOT EXISTS wakes (
          agent TEXT NOT NULL,
          woken_at TEXT NOT NULL
        );
        CREATE INDEX IF NOT EXISTS idx_wakes_agent ON wakes(agent, woken_at);
      `);
    },
  },
  {
    step: 11,
    description: 'the watcher waiting for mail for each session (a newer one takes over)',
    apply(db) {
      db.exec(`
        CREATE TABLE IF NOT EXISTS watchers (
          session TEXT PRIMARY KEY,
          token TEXT NOT NULL,
          pid INTEGER NOT NULL,
          started_at TEXT NOT NULL
        ) WITHOUT ROWID;
      `);
    },
  },
  {
    step: 12,
    description: "whether a Codex session is in a turn, and when a sender last queued one for it",
    apply(db) {
      addColumns(db, 'client_routes', { turn_state: 'TEXT', queued_at: 'TEXT' });
    },
  },
  {
    step: 13,
    description: "the agent a watcher waits for, so a sender knows a repo's mail is watched",
    apply(db) {
      addColumns(db, 'watchers', { agent: 'TEXT' });
    },
  },
  {
    step: 14,
    description: "the hub's tokens, each a hash of its secret and the agent it speaks for",
    apply(db) {
      db.exec(`
        CREATE TABLE IF NOT EXISTS tokens (
          token_id TEXT PRIMARY KEY,
          agent TEXT NOT NULL,
          repo_path TEXT NOT NULL,
          secret_hash TEXT NOT NULL,
          scopes TEXT NOT NULL,
          created_at TEXT NOT NULL,
          expires_at TEXT,
          last_used_at TEXT,
          revoked_at TEXT
        ) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS idx_tokens_agent ON tokens(agent);
      `);
    },
  },
  {
    step: 15,
    description: 'when each maintenance task (automatic retention) last ran, so it runs once a day',
    apply(db) {
      db.exec(`
        CREATE TABLE IF NOT EXISTS maintenance (
          task TEXT PRIMARY KEY,
          last_run_at TEXT NOT NULL
        ) WITHOUT ROWID;
      `);
    },
  },
  {
    step: 16,
    description: 'full-text search over mail bodies (FTS5), built over the mail already stored',
    apply(db) {
      // Contentless (the bodies stay in messages alone), with deletes by rowid. Filled up to
      // search_index.position; a search indexes what was stored since, so a send pays nothing.
      db.exec(`
        CREATE VIRTUAL TABLE IF NOT EXISTS message_search USING fts5(body, content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 0');
        CREATE TABLE IF NOT EXISTS search_index (
          name TEXT PRIMARY KEY,
          position INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE TRIGGER IF NOT EXISTS messages_search_delete AFTER DELETE ON messages BEGIN
          DELETE FROM message_search WHERE rowid = OLD.rowid;
        END;
        INSERT INTO message_search (rowid, body) SELECT rowid, body FROM messages;
        INSERT OR REPLACE INTO search_index (name, position) VALUES ('messages', COALESCE((SELECT MAX(rowid) FROM messages), 0));
      `);
    },
  },
  {
    step: 17,
    description: 'receipts: how each copy was delivered and how it was read',
    apply(db) {
      // Mail read before this step keeps its times; the way it went was not kept then (null).
      addColumns(db, 'messages', { delivered_via: 'TEXT', read_via: 'TEXT' });
    },
  },
  {
    step: 18,
    description: "nothing here: PostgreSQL's search index drops its foreign key, which SQLite's never had",
    apply() {},
  },
  {
    step: 19,
    description: 'file reservations, and the edits (and collisions alerted) that reveal two agents writing one file',
    apply(db) {
      db.exec(`
        CREATE TABLE IF NOT EXISTS reservations (
          reservation_id TEXT PRIMARY KEY,
          repo TEXT NOT NULL,
          holder TEXT NOT NULL,
          pattern TEXT NOT NULL,
          mode TEXT NOT NULL,
          reason TEXT,
          created_at TEXT NOT NULL,
          expires_at TEXT NOT NULL,
          session_bound INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS idx_reservations_repo ON reservations(repo, expires_at);
        CREATE INDEX IF NOT EXISTS idx_reservations_holder ON reservations(holder);
        CREATE TABLE IF NOT EXISTS edits (
          repo TEXT NOT NULL,
          path TEXT NOT NULL,
          agent TEXT NOT NULL,
          at TEXT NOT NULL,
          PRIMARY KEY (repo, path, agent)
        ) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS idx_edits_at ON edits(at);
        CREATE TABLE IF NOT EXISTS collisions (
          repo TEXT NOT NULL,
          path TEXT NOT NULL,
          first_agent TEXT NOT NULL,
          second_agent TEXT NOT NULL,
          at TEXT NOT NULL,
          PRIMARY KEY (repo, path, first_agent, second_agent)
        ) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS idx_collisions_at ON collisions(at);
      `);
    },
  },
  {
    step: 20,
    description: "reservations: each pattern's anchor (the literal folders it starts with), indexed, to find those that may cover a file",
    apply(db) {
      // Rows an older agent-bus writes have none (null): they are always read, as before this step.
      addColumns(db, 'reservations', { anchor: 'TEXT' });
      db.exec('CREATE INDEX IF NOT EXISTS idx_reservations_anchor ON reservations(repo, anchor, expires_at)');
    },
  },
  {
    step: 21,
    description: "mail's priority (urgent mail is shown between a busy agent's tool calls), and an index of the urgent mail not yet read",
    apply(db) {
      addColumns(db, 'messages', { priority: 'TEXT' });
      db.exec('CREATE INDEX IF NOT EXISTS idx_messages_urgent ON messages(to_agent) WHERE priority IS NOT NULL AND read_at IS NULL');
    },
  },
  {
    step: 22,
    description: 'tasks, and the tasks each waits for',
    apply(db) {
      db.exec(`
        CREATE TABLE IF NOT EXISTS tasks (
          task_id TEXT PRIMARY KEY,
          title TEXT NOT NULL,
          body TEXT,
          creator TEXT NOT NULL,
          addressed_to TEXT NOT NULL,
          state TEXT NOT NULL,
          holder TEXT,
          session_bound INTEGER NOT NULL,
          result TEXT,
          created_at TEXT NOT NULL,
          updated_at TEXT NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS idx_tasks_state ON tasks(state, created_at);
        CREATE TABLE IF NOT EXISTS task_prerequisites (
          task_id TEXT NOT NULL,
          prerequisite_id TEXT NOT NULL,
          PRIMARY KEY (task_id, prerequisite_id)
        ) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS idx_task_prerequisites_of ON task_prerequisites(prerequisite_id);
      `);
    },
  },
  {
    step: 23,
    description: "presence: what the hooks last said of each name's turn (working, idle, waiting), and since when",
    apply(db) {
      db.exec(`
        CREATE TABLE IF NOT EXISTS presence (
          name TEXT PRIMARY KEY,
          state TEXT NOT NULL,
          since TEXT NOT NULL
        ) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS presence_watches (
          watcher TEXT NOT NULL,
          name TEXT NOT NULL,
          state TEXT NOT NULL,
          created_at TEXT NOT NULL,
          PRIMARY KEY (watcher, name, state)
        ) WITHOUT ROWID;
      `);
    },
  },
  {
    step: 24,
    description: "mail that is a task's result: the task's id and its state then",
    apply(db) {
      addColumns(db, 'messages', { task_id: 'TEXT', task_state: 'TEXT' });
    },
  },
  {
    step: 25,
    description: 'integrations: webhook senders with their secrets, and the delivery ids each has taken (a replay is taken once)',
    apply(db) {
      db.exec(`
        CREATE TABLE IF NOT EXISTS integrations (
          name TEXT PRIMARY KEY,
          kind TEXT NOT NULL,
          target TEXT NOT NULL,
          channel TEXT,
          severity TEXT NOT NULL,
          secret TEXT NOT NULL,
          previous_secret TEXT,
          previous_until TEXT,
          created_at TEXT NOT NULL
        );
        CREATE TABLE IF NOT EXISTS integration_deliveries (
          integration TEXT NOT NULL,
          delivery_id TEXT NOT NULL,
          received_at TEXT NOT NULL,
          PRIMARY KEY (integration, delivery_id)
        ) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS idx_integration_deliveries_age ON integration_deliveries(integration, received_at);
      `);
    },
  },
  {
    step: 26,
    description: 'outbound integrations: their receivers, the events each is sent, an outbox of those queued, and the lease of the one worker that sends them',
    apply(db) {
      addColumns(db, 'integrations', { url: 'TEXT', on_event: 'TEXT' });
      db.exec(`
        CREATE TABLE IF NOT EXISTS integration_outbox (
          event_id TEXT PRIMARY KEY,
          integration TEXT NOT NULL,
          event TEXT NOT NULL,
          message_id TEXT,
          payload TEXT NOT NULL,
          created_at TEXT NOT NULL,
          state TEXT NOT NULL,
          attempts INTEGER NOT NULL DEFAULT 0,
          next_at TEXT NOT NULL,
          lease_until TEXT,
          last_status INTEGER,
          last_error TEXT,
          finished_at TEXT
        );
        CREATE INDEX IF NOT EXISTS idx_integration_outbox_due ON integration_outbox(state, next_at);
        CREATE INDEX IF NOT EXISTS idx_integration_outbox_of ON integration_outbox(integration, created_at);
        CREATE TABLE IF NOT EXISTS worker_leases (
          name TEXT PRIMARY KEY,
          holder TEXT NOT NULL,
          until TEXT NOT NULL
        );
      `);
    },
  },
  {
    step: 27,
    description: "the outbox's intake (a transaction's events, one row for them all, made into the outbox's rows off the send's path), each integration's lane of events, and its hold after a failed attempt",
    apply(db) {
      addColumns(db, 'integrations', { held_until: 'TEXT' });
      db.exec(`
        CREATE TABLE IF NOT EXISTS outbox_intake (intake_id TEXT PRIMARY KEY, events TEXT NOT NULL);
        DROP INDEX IF EXISTS idx_integration_outbox_of;
        CREATE INDEX IF NOT EXISTS idx_integration_outbox_lane ON integration_outbox(integration, state, next_at);
      `);
    },
  },  {
    step: 28,
    description: "how a session's watcher wakes it (its own hook-watch process, or its MCP server posting into the client's inbox socket), and why a socket was given up",
    apply(db) {
      addColumns(db, 'watchers', { way: 'TEXT', note: 'TEXT' });
    },
  },
  {
    step: 29,
    // Tasks only: an index of the random half of every message id would put each send's write on a
    // random page of it (a fifth of the send rate); a message's short form is found by a scan of the key's index.
    description: 'the short forms of task ids (their last twelve hex digits), indexed so the start of one is found by a range',
    apply(db) {
      db.exec('CREATE INDEX IF NOT EXISTS idx_tasks_short_id ON tasks(substr(task_id, 25))');
    },
  },
  {
    step: 30,
    description: 'the fleet: each agent the bus started, from its request through its supervisor and process to its exit record',
    apply(db) {
      db.exec(`
        CREATE TABLE IF NOT EXISTS spawns (
          spawn_id TEXT PRIMARY KEY,
          name TEXT NOT NULL,
          client TEXT NOT NULL,
          label TEXT NOT NULL,
          repo TEXT NOT NULL,
          folder TEXT NOT NULL,
          machine TEXT NOT NULL,
          prompt TEXT NOT NULL,
          model TEXT,
          yolo INTEGER NOT NULL DEFAULT 0,
          task_id TEXT,
          spawned_by TEXT NOT NULL,
          depth INTEGER NOT NULL,
          state TEXT NOT NULL,
          supervisor TEXT,
          pid INTEGER,
          log_path TEXT NOT NULL,
          created_at TEXT NOT NULL,
          started_at TEXT,
          ended_at TEXT,
          exit_code INTEGER,
          exit_signal TEXT,
          exit_category TEXT,
          exit_note TEXT,
          stop_requested_at TEXT
        );
        CREATE INDEX IF NOT EXISTS idx_spawns_name ON spawns(name, created_at);
        CREATE INDEX IF NOT EXISTS idx_spawns_machine_state ON spawns(machine, state);
      `);
    },
  },
  {
    step: 31,
    description: "a spawned agent's session: the client's own id of its conversation, which a resume continues",
    apply(db) {
      addColumns(db, 'spawns', { session_key: 'TEXT' });
    },
  },
  {
    step: 32,
    description: "a spawned agent's restarts: whether a crash starts it again, at most how many times, and how many came before",
    apply(db) {
      addColumns(db, 'spawns', { restart_policy: 'TEXT', max_restarts: 'INTEGER NOT NULL DEFAULT 0', restarts: 'INTEGER NOT NULL DEFAULT 0' });
    },
  },
  {
    step: 33,
    description: "runners: the machines that start agents the hub is asked for, what each offers and when it was last heard; a remote agent's log as its runner sends it, and whether an agent has a worktree of its own",
    apply(db) {
      db.exec(`
        CREATE TABLE IF NOT EXISTS runners (
          machine TEXT PRIMARY KEY,
          agent TEXT NOT NULL,
          clients TEXT NOT NULL,
          repos TEXT NOT NULL,
          max_spawned INTEGER NOT NULL,
          bus_folder TEXT NOT NULL,
          heartbeat_ms INTEGER NOT NULL,
          started_at TEXT NOT NULL,
          seen_at TEXT NOT NULL
        );
      `);
      addColumns(db, 'spawns', { log_tail: 'TEXT', worktree: 'INTEGER NOT NULL DEFAULT 0' });
    },
  },
  {
    step: 34,
    description: 'a spawned agent run interactive in a tmux window (spawn --tmux): where that window is',
    apply(db) {
      addColumns(db, 'spawns', { tmux: 'TEXT' });
    },
  },
];

export const TARGET_VERSION = SCHEMA_EPOCH * EPOCH_SIZE + STEPS.length;
