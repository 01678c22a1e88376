/**
 * The logical model both engines share, table by table: the columns a copy
 * carries and the order a table is read in (its key; messages in the order
 * they were written, so the newest stay newest). `agent-bus store copy` moves
 * a bus between engines with exactly these.
 */
export interface TableModel {
  name: string;
  columns: string[];
  /** The columns a table is read in order of (a key, unique together). */
  key: string[];
}

export const TABLES: TableModel[] = [
  { name: 'agents', columns: ['name', 'repo_path', 'registered_at', 'last_seen', 'group_name', 'client', 'topic'], key: ['name'] },
  {
    name: 'messages',
    columns: ['message_id', 'from_agent', 'to_agent', 'body', 'thread_id', 'sent_at', 'read_at', 'delivered_at', 'addressed_to', 'fanout_id', 'to_group', 'claimed_by', 'lease_until', 'delivered_via', 'read_via', 'priority', 'task_id', 'task_state'],
    // Read in the order written (SQLite's rowid, PostgreSQL's seq): each engine says how.
    key: ['message_id'],
  },
  {
    name: 'sessions',
    columns: ['server_pid', 'server_started', 'name', 'client_address', 'repo_path', 'lineage', 'session_key', 'boot_id', 'pid_ns', 'started_at', 'last_seen', 'ended_at'],
    key: ['server_pid', 'server_started', 'client_address'],
  },
  {
    name: 'client_routes',
    columns: ['thread_id', 'agent', 'client', 'executable', 'client_pid', 'client_started', 'repo_path', 'updated_at', 'turn_state', 'queued_at'],
    key: ['thread_id'],
  },
  { name: 'notices', columns: ['notice_id', 'channel', 'severity', 'title', 'body', 'source', 'priority', 'content_hash', 'created_at', 'expires_at'], key: ['notice_id'] },
  { name: 'notice_receipts', columns: ['notice_id', 'session', 'delivered_at', 'acknowledged_at'], key: ['notice_id', 'session'] },
  {
    name: 'brain_state',
    columns: ['channel', 'source_kind', 'location', 'content_hash', 'entry_count', 'cut_by_cap', 'warnings', 'last_fetch_at', 'last_ok_at', 'last_error'],
    key: ['channel'],
  },
  { name: 'session_counters', columns: ['session', 'counter', 'value', 'updated_at'], key: ['session', 'counter'] },
  { name: 'brain_markers', columns: ['marker_key', 'session', 'taken_at'], key: ['marker_key'] },
  { name: 'wakes', columns: ['agent', 'woken_at'], key: ['agent', 'woken_at'] },
  { name: 'watchers', columns: ['session', 'token', 'pid', 'started_at', 'agent', 'way', 'note'], key: ['session'] },
  {
    name: 'tokens',
    columns: ['token_id', 'agent', 'repo_path', 'secret_hash', 'scopes', 'created_at', 'expires_at', 'last_used_at', 'revoked_at'],
    key: ['token_id'],
  },
  { name: 'maintenance', columns: ['task', 'last_run_at'], key: ['task'] },
  {
    name: 'reservations',
    columns: ['reservation_id', 'repo', 'holder', 'pattern', 'mode', 'reason', 'created_at', 'expires_at', 'session_bound', 'anchor'],
    key: ['reservation_id'],
  },
  {
    name: 'integrations',
    columns: ['name', 'kind', 'target', 'channel', 'severity', 'secret', 'previous_secret', 'previous_until', 'created_at', 'url', 'on_event', 'held_until'],
    key: ['name'],
  },
  {
    name: 'integration_outbox',
    columns: ['event_id', 'integration', 'event', 'message_id', 'payload', 'created_at', 'state', 'attempts', 'next_at', 'lease_until', 'last_status', 'last_error', 'finished_at'],
    key: ['event_id'],
  },
  { name: 'outbox_intake', columns: ['intake_id', 'events'], key: ['intake_id'] },
  { name: 'integration_deliveries', columns: ['integration', 'delivery_id', 'received_at'], key: ['integration', 'delivery_id'] },
  { name: 'edits', columns: ['repo', 'path', 'agent', 'at'], key: ['repo', 'path', 'agent'] },
  { name: 'collisions', columns: ['repo', 'path', 'first_agent', 'second_agent', 'at'], key: ['repo', 'path', 'first_agent', 'second_agent'] },
  {
    name: 'tasks',
    columns: ['task_id', 'title', 'body', 'creator', 'addressed_to', 'state', 'holder', 'session_bound', 'result', 'created_at', 'updated_at'],
    key: ['task_id'],
  },
  { name: 'task_prerequisites', columns: ['task_id', 'prerequisite_id'], key: ['task_id', 'prerequisite_id'] },
  { name: 'presence', columns: ['name', 'state', 'since'], key: ['name'] },
  { name: 'presence_watches', columns: ['watcher', 'name', 'state', 'created_at'], key: ['watcher', 'name', 'state'] },
  {
    name: 'spawns',
    columns: ['spawn_id', 'name', 'client', 'label', 'repo', 'folder', 'machine', 'prompt', 'model', 'yolo', 'task_id', 'spawned_by', 'depth', 'state', 'supervisor', 'pid', 'log_path', 'created_at', 'started_at', 'ended_at', 'exit_code', 'exit_signal', 'exit_category', 'exit_note', 'stop_requested_at', 'session_key', 'restart_policy', 'max_restarts', 'restarts', 'log_tail', 'worktree', 'tmux'],
    key: ['spawn_id'],
  },
  { name: 'runners', columns: ['machine', 'agent', 'clients', 'repos', 'max_spawned', 'bus_folder', 'heartbeat_ms', 'started_at', 'seen_at'], key: ['machine'] },
];

export type TableRow = Record<string, unknown>;
