/**
 * Each record's fields and the column each is stored in, as data: both engines read rows into
 * records with the select lists made from these, so a column is named once for both.
 */
import type { NoticeRecord } from '../../model/notices.js';
import type { ReceiptRecord } from '../../model/receipts.js';
import type { AgentRecord, BrainState, ClientRoute, EditRecord, IntegrationRecord, MessageRecord, OutboxRecord, ReservationRecord, RunnerRecord, SessionRecord, SpawnRecord, SpawnTmux, TaskRecord, TokenRecord } from '../../model/records.js';
import type { FanoutCopy } from '../ports/inbox.js';
import { patternAnchor } from '../../model/reservation-anchor.js';

/** A record's fields, each with its column, in the order they are read. */
type Fields<R> = { readonly [Field in keyof R]-?: string };

export const AGENT_FIELDS = {
  name: 'name',
  repoPath: 'repo_path',
  registeredAt: 'registered_at',
  lastSeen: 'last_seen',
  repo: 'group_name',
  client: 'client',
  topic: 'topic',
} as const satisfies Fields<AgentRecord>;

export const MESSAGE_FIELDS = {
  messageId: 'message_id',
  fromAgent: 'from_agent',
  toAgent: 'to_agent',
  body: 'body',
  threadId: 'thread_id',
  sentAt: 'sent_at',
  readAt: 'read_at',
  deliveredAt: 'delivered_at',
  addressedTo: 'addressed_to',
  fanoutId: 'fanout_id',
  toGroup: 'to_group',
  claimedBy: 'claimed_by',
  deliveredVia: 'delivered_via',
  readVia: 'read_via',
  priority: 'priority',
  taskId: 'task_id',
  taskState: 'task_state',
} as const satisfies Fields<MessageRecord>;

/** A copy's receipt: the message without its body. */
export const RECEIPT_FIELDS = {
  messageId: 'message_id',
  fanoutId: 'fanout_id',
  fromAgent: 'from_agent',
  toAgent: 'to_agent',
  addressedTo: 'addressed_to',
  threadId: 'thread_id',
  sentAt: 'sent_at',
  claimedBy: 'claimed_by',
  deliveredAt: 'delivered_at',
  deliveredVia: 'delivered_via',
  readAt: 'read_at',
  readVia: 'read_via',
} as const satisfies Fields<ReceiptRecord>;

export const FANOUT_COPY_FIELDS = {
  messageId: 'message_id',
  fanoutId: 'fanout_id',
  toAgent: 'to_agent',
  claimedBy: 'claimed_by',
  readAt: 'read_at',
} as const satisfies Fields<FanoutCopy>;

export const SESSION_FIELDS = {
  serverPid: 'server_pid',
  serverStarted: 'server_started',
  name: 'name',
  clientAddress: 'client_address',
  repoPath: 'repo_path',
  lineage: 'lineage',
  sessionKey: 'session_key',
  bootId: 'boot_id',
  pidNs: 'pid_ns',
  startedAt: 'started_at',
  lastSeen: 'last_seen',
  endedAt: 'ended_at',
} as const satisfies Fields<SessionRecord>;

export const ROUTE_FIELDS = {
  threadId: 'thread_id',
  agent: 'agent',
  client: 'client',
  executable: 'executable',
  clientPid: 'client_pid',
  clientStarted: 'client_started',
  repoPath: 'repo_path',
  updatedAt: 'updated_at',
  turnState: 'turn_state',
  queuedAt: 'queued_at',
} as const satisfies Fields<ClientRoute>;

export const NOTICE_FIELDS = {
  noticeId: 'notice_id',
  channel: 'channel',
  severity: 'severity',
  title: 'title',
  body: 'body',
  source: 'source',
  priority: 'priority',
  contentHash: 'content_hash',
  createdAt: 'created_at',
  expiresAt: 'expires_at',
} as const satisfies Fields<NoticeRecord>;

export const BRAIN_FIELDS = {
  channel: 'channel',
  sourceKind: 'source_kind',
  location: 'location',
  contentHash: 'content_hash',
  entryCount: 'entry_count',
  cutByCap: 'cut_by_cap',
  warnings: 'warnings',
  lastFetchAt: 'last_fetch_at',
  lastOkAt: 'last_ok_at',
  lastError: 'last_error',
} as const satisfies Fields<BrainState>;

export const TOKEN_FIELDS = {
  tokenId: 'token_id',
  agent: 'agent',
  repoPath: 'repo_path',
  secretHash: 'secret_hash',
  scopes: 'scopes',
  createdAt: 'created_at',
  expiresAt: 'expires_at',
  lastUsedAt: 'last_used_at',
  revokedAt: 'revoked_at',
} as const satisfies Fields<TokenRecord>;

export const INTEGRATION_FIELDS = {
  name: 'name',
  kind: 'kind',
  target: 'target',
  channel: 'channel',
  severity: 'severity',
  secret: 'secret',
  previousSecret: 'previous_secret',
  previousUntil: 'previous_until',
  createdAt: 'created_at',
  url: 'url',
  on: 'on_event',
} as const satisfies Fields<IntegrationRecord>;

export const OUTBOX_FIELDS = {
  eventId: 'event_id',
  integration: 'integration',
  event: 'event',
  messageId: 'message_id',
  payload: 'payload',
  createdAt: 'created_at',
  state: 'state',
  attempts: 'attempts',
  nextAt: 'next_at',
  leaseUntil: 'lease_until',
  lastStatus: 'last_status',
  lastError: 'last_error',
  finishedAt: 'finished_at',
} as const satisfies Fields<OutboxRecord>;

export const RESERVATION_FIELDS = {
  reservationId: 'reservation_id',
  repo: 'repo',
  holder: 'holder',
  pattern: 'pattern',
  mode: 'mode',
  reason: 'reason',
  createdAt: 'created_at',
  expiresAt: 'expires_at',
  // 0 or 1 in both engines: read back through reservationOf.
  sessionBound: 'session_bound',
} as const satisfies Fields<ReservationRecord>;

/** A reservation as both engines read it: the flag is a number there. */
export function reservationOf(row: Omit<ReservationRecord, 'sessionBound'> & { sessionBound: number | boolean }): ReservationRecord {
  return { ...row, sessionBound: Boolean(row.sessionBound) };
}

/** A reservation's columns as written: its fields and its pattern's anchor, which only the stores read. */
export const RESERVATION_INSERT_FIELDS = { ...RESERVATION_FIELDS, anchor: 'anchor' } as const;

/** A reservation's values for an INSERT (RESERVATION_INSERT_FIELDS), the flag as a number. */
export function reservationValues(reservation: ReservationRecord): Record<string, string | number | null> {
  return { ...reservation, sessionBound: reservation.sessionBound ? 1 : 0, anchor: patternAnchor(reservation.pattern) };
}

export const TASK_FIELDS = {
  taskId: 'task_id',
  title: 'title',
  body: 'body',
  creator: 'creator',
  addressedTo: 'addressed_to',
  state: 'state',
  holder: 'holder',
  // 0 or 1 in both engines: read back through taskOf.
  sessionBound: 'session_bound',
  result: 'result',
  createdAt: 'created_at',
  updatedAt: 'updated_at',
} as const satisfies Fields<TaskRecord>;

/** A task as both engines read it: the flag is a number there. */
export function taskOf(row: Omit<TaskRecord, 'sessionBound'> & { sessionBound: number | boolean }): TaskRecord {
  return { ...row, sessionBound: Boolean(row.sessionBound) };
}

/** A task's values for an INSERT, the flag as a number. */
export function taskValues(task: TaskRecord): Record<string, string | number | null> {
  return { ...task, sessionBound: task.sessionBound ? 1 : 0 };
}

export const SPAWN_FIELDS = {
  spawnId: 'spawn_id',
  name: 'name',
  client: 'client',
  label: 'label',
  repo: 'repo',
  folder: 'folder',
  machine: 'machine',
  prompt: 'prompt',
  model: 'model',
  // 0 or 1 in both engines: read back through spawnOf.
  yolo: 'yolo',
  taskId: 'task_id',
  spawnedBy: 'spawned_by',
  depth: 'depth',
  state: 'state',
  supervisor: 'supervisor',
  pid: 'pid',
  logPath: 'log_path',
  createdAt: 'created_at',
  startedAt: 'started_at',
  endedAt: 'ended_at',
  exitCode: 'exit_code',
  exitSignal: 'exit_signal',
  exitCategory: 'exit_category',
  exitNote: 'exit_note',
  stopRequestedAt: 'stop_requested_at',
  sessionKey: 'session_key',
  restartPolicy: 'restart_policy',
  maxRestarts: 'max_restarts',
  restarts: 'restarts',
  // 0 or 1, as yolo.
  worktree: 'worktree',
  tmux: 'tmux',
} as const satisfies Fields<SpawnRecord>;

/** A tmux window's place as a column holds it: JSON, or null for an agent run headless. */
export function tmuxText(tmux: SpawnTmux | null): string | null {
  return tmux === null ? null : JSON.stringify({ socket: tmux.socket, session: tmux.session, window: tmux.window, pane: tmux.pane });
}

function tmuxOf(text: string | null): SpawnTmux | null {
  if (text === null || text === '') return null;
  const value = JSON.parse(text) as Partial<Record<keyof SpawnTmux, unknown>>;
  const field = (key: keyof SpawnTmux): string | null => (typeof value[key] === 'string' ? value[key] : null);
  return { socket: field('socket'), session: field('session'), window: field('window'), pane: field('pane') };
}

/** A spawn as both engines read it: the flags are numbers there, and the tmux window JSON. */
export function spawnRecordOf(row: Omit<SpawnRecord, 'yolo' | 'worktree' | 'tmux'> & { yolo: number | boolean; worktree: number | boolean; tmux: string | null }): SpawnRecord {
  return { ...row, yolo: Boolean(row.yolo), worktree: Boolean(row.worktree), tmux: tmuxOf(row.tmux) };
}

/** A spawn's values for an INSERT, the flags as numbers and the tmux window as JSON. */
export function spawnValues(spawn: SpawnRecord): Record<string, string | number | null> {
  return { ...spawn, yolo: spawn.yolo ? 1 : 0, worktree: spawn.worktree ? 1 : 0, tmux: tmuxText(spawn.tmux) };
}

export const EDIT_FIELDS = {
  repo: 'repo',
  path: 'path',
  agent: 'agent',
  at: 'at',
} as const satisfies Fields<EditRecord>;

/**
 * A select list reading `fields` as a record: each column named as its field (a double-quoted alias,
 * which both engines keep as written), of table `alias` when given.
 */
export function selectList(fields: Record<string, string>, alias?: string): string {
  const table = alias === undefined ? '' : `${alias}.`;
  return Object.entries(fields)
    .map(([field, column]) => (field === column ? `${table}${column}` : `${table}${column} AS "${field}"`))
    .join(', ');
}

/** The columns of `fields`, in order, for an INSERT. */
export function columnList(fields: Record<string, string>): string {
  return Object.values(fields).join(', ');
}

/** A VALUES list for every column of `fields`, each written by `at` (a named or a numbered placeholder). */
export function valuesList(fields: Record<string, string>, at: (field: string, index: number) => string): string {
  return Object.keys(fields).map(at).join(', ');
}

/** A runner's row: its clients as words, its repos as JSON. */
export interface RunnerRow {
  machine: string;
  agent: string;
  clients: string;
  repos: string;
  max_spawned: number;
  bus_folder: string;
  heartbeat_ms: number;
  started_at: string;
  seen_at: string;
}

export function runnerRecordOf(row: RunnerRow): RunnerRecord {
  let repos: RunnerRecord['repos'] = [];
  try {
    const parsed: unknown = JSON.parse(row.repos);
    if (Array.isArray(parsed)) repos = parsed.filter((item): item is RunnerRecord['repos'][number] => typeof item?.repo === 'string' && typeof item?.folder === 'string');
  } catch {
    // A row no runner wrote offers no repo.
  }
  return {
    machine: row.machine,
    agent: row.agent,
    clients: row.clients === '' ? [] : row.clients.split(' '),
    repos,
    maxSpawned: Number(row.max_spawned),
    busFolder: row.bus_folder,
    heartbeatMs: Number(row.heartbeat_ms),
    startedAt: row.started_at,
    seenAt: row.seen_at,
  };
}

export function runnerValues(runner: RunnerRecord): RunnerRow {
  return {
    machine: runner.machine,
    agent: runner.agent,
    clients: runner.clients.join(' '),
    repos: JSON.stringify(runner.repos),
    max_spawned: runner.maxSpawned,
    bus_folder: runner.busFolder,
    heartbeat_ms: runner.heartbeatMs,
    started_at: runner.startedAt,
    seen_at: runner.seenAt,
  };
}
