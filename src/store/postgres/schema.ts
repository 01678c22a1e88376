/**
 * The PostgreSQL schema: the same logical model as SQLite's (store/sqlite/schema.ts),
 * versioned with the same numbers (`epoch * 1000 + step`) in `agent_bus_schema`.
 * Steps are forward-only and only add (or drop a check an older agent-bus does not rely on). Stamps are text in the bus's sortable format
 * and every text column collates as "C", so comparisons and order are byte order,
 * exactly as in SQLite, whatever the database's own collation.
 */
export const SCHEMA_EPOCH = 1;
export const EPOCH_SIZE = 1000;

export interface PostgresStep {
  step: number;
  description: string;
  sql: string;
}

const T = 'TEXT COLLATE "C"';

export const STEPS: PostgresStep[] = [
  {
    step: 1,
    description: 'agents and messages',
    sql: `
      CREATE TABLE agents (
        name ${T} PRIMARY KEY,
        repo_path ${T} NOT NULL,
        registered_at ${T} NOT NULL,
        last_seen ${T} NOT NULL
      );
      CREATE TABLE messages (
        message_id ${T} PRIMARY KEY,
        from_agent ${T} NOT NULL,
        to_agent ${T} NOT NULL,
        body TEXT NOT NULL,
        thread_id ${T} NOT NULL,
        sent_at ${T} NOT NULL,
        read_at ${T},
        delivered_at ${T},
        -- Insertion order, as SQLite's rowid gives it: the newest messages without an index on sent_at.
        seq BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE
      );
      CREATE INDEX idx_messages_inbox ON messages(to_agent, read_at);
      CREATE INDEX idx_messages_thread ON messages(thread_id, sent_at);`,
  },
  {
    step: 2,
    description: 'repo-wide addressing and claims',
    sql: `
      ALTER TABLE agents ADD COLUMN group_name ${T}, ADD COLUMN client ${T};
      ALTER TABLE messages ADD COLUMN addressed_to ${T}, ADD COLUMN fanout_id ${T}, ADD COLUMN to_group ${T}, ADD COLUMN claimed_by ${T};
      CREATE INDEX idx_agents_group ON agents(group_name);
      CREATE INDEX idx_messages_fanout ON messages(fanout_id);`,
  },
  {
    step: 3,
    description: 'session addresses and topics',
    sql: `
      CREATE TABLE sessions (
        server_pid INTEGER NOT NULL,
        server_started ${T} NOT NULL,
        name ${T} NOT NULL,
        client_address ${T} NOT NULL,
        repo_path ${T} NOT NULL,
        lineage TEXT NOT NULL,
        session_key ${T},
        boot_id ${T},
        pid_ns ${T},
        started_at ${T} NOT NULL,
        last_seen ${T} NOT NULL,
        ended_at ${T},
        PRIMARY KEY (server_pid, server_started, client_address)
      );
      CREATE INDEX idx_sessions_address ON sessions(client_address);
      ALTER TABLE agents ADD COLUMN topic TEXT;`,
  },
  {
    step: 4,
    description: "indexes for unread mail and for one repo's copies of a fan-out",
    sql: `
      CREATE INDEX idx_messages_unread ON messages(to_agent, sent_at) WHERE read_at IS NULL;
      CREATE INDEX idx_messages_fanout_copies ON messages(fanout_id, to_group, to_agent) WHERE fanout_id IS NOT NULL;`,
  },
  {
    step: 5,
    description: 'a lease on mail a hook is about to show',
    sql: `ALTER TABLE messages ADD COLUMN lease_until ${T};`,
  },
  {
    step: 6,
    description: 'how to reach a Codex session from outside',
    sql: `
      CREATE TABLE client_routes (
        thread_id ${T} PRIMARY KEY,
        agent ${T} NOT NULL,
        client ${T} NOT NULL,
        executable TEXT,
        client_pid INTEGER,
        client_started ${T},
        repo_path ${T} NOT NULL,
        updated_at ${T} NOT NULL
      );
      CREATE INDEX idx_client_routes_agent ON client_routes(agent);`,
  },
  {
    step: 7,
    description: 'notices and per-session receipts',
    sql: `
      CREATE TABLE notices (
        notice_id ${T} PRIMARY KEY,
        channel ${T},
        severity ${T} NOT NULL,
        title TEXT,
        body TEXT NOT NULL,
        source TEXT NOT NULL,
        priority INTEGER NOT NULL DEFAULT 5,
        content_hash ${T} NOT NULL,
        created_at ${T} NOT NULL,
        expires_at ${T} NOT NULL
      );
      CREATE INDEX idx_notices_due ON notices(severity, expires_at);
      CREATE INDEX idx_notices_channel ON notices(channel, expires_at);
      CREATE TABLE notice_receipts (
        notice_id ${T} NOT NULL,
        session ${T} NOT NULL,
        delivered_at ${T},
        acknowledged_at ${T},
        PRIMARY KEY (notice_id, session)
      );`,
  },
  {
    step: 8,
    description: 'brain state and per-session counters',
    sql: `
      CREATE TABLE brain_state (
        channel ${T} PRIMARY KEY,
        source_kind ${T} NOT NULL,
        location TEXT NOT NULL,
        content_hash ${T},
        entry_count INTEGER NOT NULL DEFAULT 0,
        cut_by_cap INTEGER NOT NULL DEFAULT 0,
        warnings TEXT NOT NULL DEFAULT '[]',
        last_fetch_at ${T},
        last_ok_at ${T},
        last_error TEXT
      );
      CREATE TABLE session_counters (
        session ${T} NOT NULL,
        counter ${T} NOT NULL,
        value INTEGER NOT NULL,
        updated_at ${T} NOT NULL,
        PRIMARY KEY (session, counter)
      );`,
  },
  {
    step: 9,
    description: 'brain markers already taken from a session',
    sql: `
      CREATE TABLE brain_markers (
        marker_key ${T} PRIMARY KEY,
        session ${T} NOT NULL,
        taken_at ${T} NOT NULL
      );`,
  },
  {
    step: 10,
    description: 'wakes per agent, for the hourly rate limit',
    sql: `
      CREATE TABLE wakes (
        agent ${T} NOT NULL,
        woken_at ${T} NOT NULL
      );
      CREATE INDEX idx_wakes_agent ON wakes(agent, woken_at);`,
  },
  {
    step: 11,
    description: 'the watcher waiting for mail for each session',
    sql: `
      CREATE TABLE watchers (
        session ${T} PRIMARY KEY,
        token ${T} NOT NULL,
        pid INTEGER NOT NULL,
        started_at ${T} NOT NULL
      );`,
  },
  {
    step: 12,
    description: 'whether a Codex session is in a turn, and when a sender last queued one',
    sql: `ALTER TABLE client_routes ADD COLUMN turn_state ${T}, ADD COLUMN queued_at ${T};`,
  },
  {
    step: 13,
    description: 'the agent a watcher waits for',
    sql: `ALTER TABLE watchers ADD COLUMN agent ${T};`,
  },
  {
    step: 14,
    description: "the hub's tokens",
    sql: `
      CREATE TABLE tokens (
        token_id ${T} PRIMARY KEY,
        agent ${T} NOT NULL,
        repo_path ${T} NOT NULL,
        secret_hash ${T} NOT NULL,
        scopes ${T} NOT NULL,
        created_at ${T} NOT NULL,
        expires_at ${T},
        last_used_at ${T},
        revoked_at ${T}
      );
      CREATE INDEX idx_tokens_agent ON tokens(agent);`,
  },
  {
    step: 15,
    description: 'when each maintenance task last ran',
    sql: `
      CREATE TABLE maintenance (
        task ${T} PRIMARY KEY,
        last_run_at ${T} NOT NULL
      );`,
  },
  {
    step: 16,
    description: 'full-text search over mail bodies (tsvector, GIN), built over the mail already stored',
    sql: `
      CREATE TABLE message_search (
        seq BIGINT PRIMARY KEY REFERENCES messages(seq) ON DELETE CASCADE,
        tsv tsvector NOT NULL
      );
      CREATE INDEX idx_message_search ON message_search USING GIN (tsv);
      CREATE TABLE search_index (
        name ${T} PRIMARY KEY,
        position BIGINT NOT NULL
      );
      INSERT INTO message_search (seq, tsv) SELECT seq, to_tsvector('simple', body) FROM messages;
      INSERT INTO search_index (name, position) VALUES ('messages', COALESCE((SELECT MAX(seq) FROM messages), 0));`,
  },
  {
    step: 17,
    description: 'receipts: how each copy was delivered and how it was read',
    sql: `
      ALTER TABLE messages ADD COLUMN delivered_via ${T};
      ALTER TABLE messages ADD COLUMN read_via ${T};`,
  },
  {
    step: 18,
    // The key's check cost each indexed message a lookup and a row lock on messages, a good part of
    // what indexing costs; prune deletes the index rows of the mail it deletes instead. An older
    // agent-bus that prunes leaves index rows of mail gone, which a search never joins to anything.
    description: 'the search index keeps no foreign key to messages: prune deletes its rows instead',
    sql: `ALTER TABLE message_search DROP CONSTRAINT IF EXISTS message_search_seq_fkey;`,
  },
  {
    step: 19,
    description: 'file reservations, and the edits (and collisions alerted) that reveal two agents writing one file',
    sql: `
      CREATE TABLE reservations (
        reservation_id ${T} PRIMARY KEY,
        repo ${T} NOT NULL,
        holder ${T} NOT NULL,
        pattern ${T} NOT NULL,
        mode ${T} NOT NULL,
        reason ${T},
        created_at ${T} NOT NULL,
        expires_at ${T} NOT NULL,
        session_bound INTEGER NOT NULL
      );
      CREATE INDEX idx_reservations_repo ON reservations(repo, expires_at);
      CREATE INDEX idx_reservations_holder ON reservations(holder);
      CREATE TABLE edits (
        repo ${T} NOT NULL,
        path ${T} NOT NULL,
        agent ${T} NOT NULL,
        at ${T} NOT NULL,
        PRIMARY KEY (repo, path, agent)
      );
      CREATE INDEX idx_edits_at ON edits(at);
      CREATE TABLE collisions (
        repo ${T} NOT NULL,
        path ${T} NOT NULL,
        first_agent ${T} NOT NULL,
        second_agent ${T} NOT NULL,
        at ${T} NOT NULL,
        PRIMARY KEY (repo, path, first_agent, second_agent)
      );
      CREATE INDEX idx_collisions_at ON collisions(at);`,
  },
  {
    step: 20,
    // Rows an older agent-bus writes have none (null): they are always read, as before this step.
    description: "reservations: each pattern's anchor (the literal folders it starts with), indexed, to find those that may cover a file",
    sql: `
      ALTER TABLE reservations ADD COLUMN anchor ${T};
      CREATE INDEX idx_reservations_anchor ON reservations(repo, anchor, expires_at);`,
  },
  {
    step: 21,
    description: "mail's priority (urgent mail is shown between a busy agent's tool calls), and an index of the urgent mail not yet read",
    sql: `
      ALTER TABLE messages ADD COLUMN priority ${T};
      CREATE INDEX idx_messages_urgent ON messages(to_agent) WHERE priority IS NOT NULL AND read_at IS NULL;`,
  },
  {
    step: 22,
    description: 'tasks, and the tasks each waits for',
    sql: `
      CREATE TABLE tasks (
        task_id ${T} PRIMARY KEY,
        title TEXT NOT NULL,
        body TEXT,
        creator ${T} NOT NULL,
        addressed_to ${T} NOT NULL,
        state ${T} NOT NULL,
        holder ${T},
        session_bound INTEGER NOT NULL,
        result TEXT,
        created_at ${T} NOT NULL,
        updated_at ${T} NOT NULL
      );
      CREATE INDEX idx_tasks_state ON tasks(state, created_at);
      CREATE TABLE task_prerequisites (
        task_id ${T} NOT NULL,
        prerequisite_id ${T} NOT NULL,
        PRIMARY KEY (task_id, prerequisite_id)
      );
      CREATE INDEX idx_task_prerequisites_of ON task_prerequisites(prerequisite_id);`,
  },
  {
    step: 23,
    description: "presence: what the hooks last said of each name's turn (working, idle, waiting), and since when",
    sql: `
      CREATE TABLE presence (
        name ${T} PRIMARY KEY,
        state ${T} NOT NULL,
        since ${T} NOT NULL
      );
      CREATE TABLE presence_watches (
        watcher ${T} NOT NULL,
        name ${T} NOT NULL,
        state ${T} NOT NULL,
        created_at ${T} NOT NULL,
        PRIMARY KEY (watcher, name, state)
      );`,
  },
  {
    step: 24,
    description: "mail that is a task's result: the task's id and its state then",
    sql: `
      ALTER TABLE messages ADD COLUMN task_id ${T};
      ALTER TABLE messages ADD COLUMN task_state ${T};`,
  },
  {
    step: 25,
    description: 'integrations: webhook senders with their secrets, and the delivery ids each has taken (a replay is taken once)',
    sql: `
      CREATE TABLE integrations (
        name ${T} PRIMARY KEY,
        kind ${T} NOT NULL,
        target ${T} NOT NULL,
        channel ${T},
        severity ${T} NOT NULL,
        secret ${T} NOT NULL,
        previous_secret ${T},
        previous_until ${T},
        created_at ${T} NOT NULL
      );
      CREATE TABLE integration_deliveries (
        integration ${T} NOT NULL,
        delivery_id ${T} NOT NULL,
        received_at ${T} NOT NULL,
        PRIMARY KEY (integration, delivery_id)
      );
      CREATE INDEX idx_integration_deliveries_age ON integration_deliveries(integration, received_at);`,
  },
  {
    step: 26,
    description: 'outbound integrations: their receivers, the events each is sent, an outbox of those queued, and the lease of the one worker that sends them',
    sql: `
      ALTER TABLE integrations ADD COLUMN url ${T};
      ALTER TABLE integrations ADD COLUMN on_event ${T};
      CREATE TABLE integration_outbox (
        event_id ${T} PRIMARY KEY,
        integration ${T} NOT NULL,
        event ${T} NOT NULL,
        message_id ${T},
        payload ${T} NOT NULL,
        created_at ${T} NOT NULL,
        state ${T} NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        next_at ${T} NOT NULL,
        lease_until ${T},
        last_status INTEGER,
        last_error ${T},
        finished_at ${T}
      );
      CREATE INDEX idx_integration_outbox_due ON integration_outbox(state, next_at);
      CREATE INDEX idx_integration_outbox_of ON integration_outbox(integration, created_at);
      CREATE TABLE worker_leases (
        name ${T} PRIMARY KEY,
        holder ${T} NOT NULL,
        until ${T} NOT NULL
      );`,
  },
  {
    step: 27,
    description: "the outbox's intake (a transaction's events, one row for them all, made into the outbox's rows off the send's path), each integration's lane of events, and its hold after a failed attempt",
    sql: `
      ALTER TABLE integrations ADD COLUMN held_until ${T};
      CREATE TABLE outbox_intake (intake_id ${T} PRIMARY KEY, events ${T} NOT NULL);
      DROP INDEX IF EXISTS idx_integration_outbox_of;
      CREATE INDEX idx_integration_outbox_lane ON integration_outbox(integration, state, next_at);`,
  },  {
    step: 28,
    description: "how a session's watcher wakes it, and why a socket was given up",
    sql: `ALTER TABLE watchers ADD COLUMN way ${T}, ADD COLUMN note ${T};`,
  },
  {
    step: 29,
    description: 'the short forms of task ids, indexed so the start of one is found by a range',
    sql: `CREATE INDEX idx_tasks_short_id ON tasks ((substr(task_id, 25)));`,
  },
  {
    step: 30,
    description: 'the fleet: each agent the bus started, from its request through its supervisor and process to its exit record',
    sql: `
        CREATE TABLE spawns (
          spawn_id ${T} PRIMARY KEY,
          name ${T} NOT NULL,
          client ${T} NOT NULL,
          label ${T} NOT NULL,
          repo ${T} NOT NULL,
          folder ${T} NOT NULL,
          machine ${T} NOT NULL,
          prompt ${T} NOT NULL,
          model ${T},
          yolo INTEGER NOT NULL DEFAULT 0,
          task_id ${T},
          spawned_by ${T} NOT NULL,
          depth INTEGER NOT NULL,
          state ${T} NOT NULL,
          supervisor ${T},
          pid INTEGER,
          log_path ${T} NOT NULL,
          created_at ${T} NOT NULL,
          started_at ${T},
          ended_at ${T},
          exit_code INTEGER,
          exit_signal ${T},
          exit_category ${T},
          exit_note ${T},
          stop_requested_at ${T}
        );
        CREATE INDEX idx_spawns_name ON spawns(name, created_at);
        CREATE INDEX idx_spawns_machine_state ON spawns(machine, state);
    `,
  },
  {
    step: 31,
    description: "a spawned agent's session: the client's own id of its conversation, which a resume continues",
    sql: `ALTER TABLE spawns ADD COLUMN session_key ${T};`,
  },
  {
    step: 32,
    description: "a spawned agent's restarts: whether a crash starts it again, at most how many times, and how many came before",
    sql: `ALTER TABLE spawns ADD COLUMN restart_policy ${T}, ADD COLUMN max_restarts INTEGER NOT NULL DEFAULT 0, ADD COLUMN restarts INTEGER NOT NULL DEFAULT 0;`,
  },
  {
    step: 33,
    description: "runners: the machines that start agents the hub is asked for, what each offers and when it was last heard; a remote agent's log as its runner sends it, and whether an agent has a worktree of its own",
    sql: `
        CREATE TABLE runners (
          machine ${T} PRIMARY KEY,
          agent ${T} NOT NULL,
          clients ${T} NOT NULL,
          repos ${T} NOT NULL,
          max_spawned INTEGER NOT NULL,
          bus_folder ${T} NOT NULL,
          heartbeat_ms INTEGER NOT NULL,
          started_at ${T} NOT NULL,
          seen_at ${T} NOT NULL
        );
        ALTER TABLE spawns ADD COLUMN log_tail ${T}, ADD COLUMN worktree INTEGER NOT NULL DEFAULT 0;
    `,
  },
  {
    step: 34,
    description: 'a spawned agent run interactive in a tmux window (spawn --tmux): where that window is',
    sql: `ALTER TABLE spawns ADD COLUMN tmux ${T};`,
  },
];

export const TARGET_VERSION = SCHEMA_EPOCH * EPOCH_SIZE + STEPS.length;
