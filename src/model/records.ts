/**
 * The records the store keeps and the core reasons about: the shared vocabulary
 * below both, so the store imports nothing from the core.
 */

export interface AgentRecord {
  name: string;
  repoPath: string;
  registeredAt: string;
  lastSeen: string;
  /** The repo it is filed under (the group_name column); null on a row an older version wrote, whose name says it. */
  repo: string | null;
  client: string | null;
  topic: string | null;
}

export interface MessageRecord {
  messageId: string;
  fromAgent: string;
  toAgent: string;
  body: string;
  threadId: string;
  sentAt: string;
  readAt: string | null;
  deliveredAt: string | null;
  addressedTo: string | null;
  fanoutId: string | null;
  toGroup: string | null;
  claimedBy: string | null;
  /** How the copy was first delivered and how it was read (a ReceiptWay), where it was. */
  deliveredVia: string | null;
  readVia: string | null;
  /** 'urgent': shown at the recipient's next tool call rather than at its turn's end (null: plain mail, and mail an older agent-bus stored). */
  priority: MessagePriority | null;
  /** Mail that is a task's result (done, failed; cancelled as a prerequisite failed): the task and its state then. Null otherwise. */
  taskId: string | null;
  taskState: string | null;
}

/** How soon mail is shown: urgent mail reaches a busy agent between its tool calls. */
export type MessagePriority = 'urgent';

/** How an agent is put on the roster. */
export interface Registration {
  name: string;
  repoPath: string;
  repo: string | null;
  client: string | null;
  /**
   * The identity's owner registers authoritatively (its repo path is updated);
   * someone merely speaking as a name only inserts it when missing.
   */
  authoritative: boolean;
}

/** A session: one running MCP server holding one address of its client. */
export interface SessionRecord {
  serverPid: number;
  serverStarted: string;
  name: string;
  clientAddress: string;
  repoPath: string;
  /** JSON of [pid, start, name] ancestors of the server, nearest first. */
  lineage: string;
  sessionKey: string | null;
  bootId: string | null;
  pidNs: string | null;
  startedAt: string;
  lastSeen: string;
  endedAt: string | null;
}

/** How to reach a client's session from outside (Codex: queue a turn on its thread). */
export interface ClientRoute {
  threadId: string;
  agent: string;
  client: string;
  executable: string | null;
  clientPid: number | null;
  clientStarted: string | null;
  repoPath: string;
  updatedAt: string;
  /** busy from the prompt hook to the stop hook, idle after it; null when no hook has said. */
  turnState?: 'busy' | 'idle' | null;
  /** When a sender queued a turn for this idle session; cleared when a turn starts. */
  queuedAt?: string | null;
}

/**
 * Which session row: the server process that holds it and the client address it serves. Not the
 * client's own id for the conversation (a string the client gives: `sessionKey` where it is read).
 */
export interface SessionRowKey {
  serverPid: number;
  serverStarted: string;
  clientAddress: string;
}

export interface BrainState {
  channel: string;
  sourceKind: string;
  location: string;
  contentHash: string | null;
  entryCount: number;
  cutByCap: number;
  /** JSON list of the last fetch's warnings. */
  warnings: string;
  lastFetchAt: string | null;
  lastOkAt: string | null;
  lastError: string | null;
}

/** A hub token, as stored: never the token itself, only a hash of its secret. */
export interface TokenRecord {
  tokenId: string;
  /** The agent the token speaks for. */
  agent: string;
  repoPath: string;
  /** sha256 of the token's secret, hex. */
  secretHash: string;
  /** What the token may do besides speaking as its agent (`metrics`), space-separated. */
  scopes: string;
  createdAt: string;
  expiresAt: string | null;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

/** A webhook sender on the bus (an integration): who it is, where its deliveries go, and the secrets that sign them. */
export interface IntegrationRecord {
  name: string;
  /** `github` (X-Hub-Signature-256) or `generic` (agent-bus's signature). */
  kind: string;
  /** Where its deliveries go: a repo, an agent, `*`, or `{repo}` (the repo a GitHub delivery names). */
  target: string;
  /** A notice channel instead of mail, or null. */
  channel: string | null;
  /** The severity of a failure it reports (a GitHub check or run), or of all it sends. */
  severity: string;
  secret: string;
  /** The secret before the last rotation, valid until `previousUntil`. */
  previousSecret: string | null;
  previousUntil: string | null;
  createdAt: string;
  /** An outbound integration's receiver (a secret: shown masked), else null. */
  url: string | null;
  /** What an outbound integration is sent: `mail:PERSON`, `notice:SEVERITY` or `task`; null inbound. */
  on: string | null;
}

/** An outbound integration as the rule that queues its events reads it. */
export interface OutletRecord {
  name: string;
  on: string;
  /** For `notice:SEVERITY`: only this channel's notices (null: every channel's). */
  channel: string | null;
}

/**
 * An event a send or a publish queues, once for all the outbound integrations that want it: the
 * worker makes it one outbox row per integration, off the send's path. Mail and task events name
 * their message (made into the event from it then); a notice's event is carried whole.
 */
export type OutboundIntake =
  | { event: 'mail' | 'task'; message: string; integrations: string[]; createdAt: string }
  | { event: 'notice'; body: { type: string; timestamp: string; data: Record<string, unknown> }; integrations: string[]; createdAt: string };

/** One event queued for one outbound integration, and where its delivery stands. */
export interface OutboxRecord {
  /** Also the delivery id its receiver sees, the same on every attempt. */
  eventId: string;
  integration: string;
  /** `mail`, `task`, `notice` or `test`. */
  event: string;
  /** The person's copy a delivery marks delivered, when the event is mail. */
  messageId: string | null;
  /** The event as JSON, less its id (the event id is): what every kind's request is made from. */
  payload: string;
  createdAt: string;
  /** `queued`, `delivered` or `failed`. */
  state: string;
  attempts: number;
  /** When it may next be attempted. */
  nextAt: string;
  /** Until when a worker holds it (an attempt under way). */
  leaseUntil: string | null;
  lastStatus: number | null;
  lastError: string | null;
  finishedAt: string | null;
}

/** What a prune removed. */
export interface PruneCounts {
  messages: number;
  threads: number;
  notices: number;
  receipts: number;
  sessions: number;
  /** Spawned agents' records, of those that ended before the cutoff. */
  spawns: number;
}

/** A hold on files or globs in one repo: exclusive or shared, until it is released, expires, or its session ends. */
export interface ReservationRecord {
  reservationId: string;
  /** The repo's name on the bus: reservations of one repo never touch another's. */
  repo: string;
  /** The reserver's own address (a session's session address), or a person's name. */
  holder: string;
  /** Relative to the repo root, POSIX; a glob or a path (which covers what lies below it). */
  pattern: string;
  mode: 'exclusive' | 'shared';
  reason: string | null;
  createdAt: string;
  expiresAt: string;
  /** Made by a session: it ends when that session ends or its process is gone. */
  sessionBound: boolean;
}

/** Where a task stands: `blocked` until its prerequisites are done, `open` to be taken, `taken`, then closed. */
export type TaskState = 'open' | 'taken' | 'done' | 'failed' | 'cancelled' | 'blocked';

export const TASK_STATES: readonly TaskState[] = ['open', 'taken', 'done', 'failed', 'cancelled', 'blocked'];

/** The states a task ends in. */
export const CLOSED_TASK_STATES: readonly TaskState[] = ['done', 'failed', 'cancelled'];

/** Work handed from one agent (or person) to another, whose result comes back to its creator. */
export interface TaskRecord {
  taskId: string;
  title: string;
  body: string | null;
  /** Who made it: told of its result. */
  creator: string;
  /** A name, a repo or `*`, as mail is addressed: who may take it. */
  addressedTo: string;
  state: TaskState;
  /** Who took it (its session address, for a session). */
  holder: string | null;
  /** Taken by a session: it is offered again when that session ends or its process is gone. */
  sessionBound: boolean;
  /** What the holder said it came to (done), or why it failed or was cancelled. */
  result: string | null;
  createdAt: string;
  updatedAt: string;
}

/**
 * Where an agent's session stands: `working` (its prompt hook ran and its stop hook has not yet),
 * `idle` (let stop, waiting for a prompt), `waiting` (on a person, where its client says so), `ended`
 * (its server closed cleanly), `gone` (its process is not running), `unknown` (nothing says).
 */
export type PresenceState = 'working' | 'idle' | 'waiting' | 'ended' | 'gone' | 'unknown';

/** What a hook last said of a name's turn (or of its session's end), and since when. */
export interface PresenceRecord {
  name: string;
  state: 'working' | 'idle' | 'waiting' | 'ended';
  since: string;
}

/** A file a tool call wrote (or was about to), by whom and when: the evidence of a collision. */
export interface EditRecord {
  repo: string;
  path: string;
  agent: string;
  at: string;
}

/** Where a spawned agent is: waiting for a slot, started, or ended (with how). */
export type SpawnState = 'queued' | 'running' | 'exited';

/** How a spawned agent's process ended. */
export type ExitCategory = 'finished' | 'failed' | 'signal' | 'oom' | 'stopped' | 'start-failed';

/**
 * Where an agent spawned with `--tmux` runs: its tmux server's socket, and the ids of its session,
 * window and pane there; each null until its window is made.
 */
export interface SpawnTmux {
  socket: string | null;
  session: string | null;
  window: string | null;
  pane: string | null;
}

/** A session the bus started (`spawn`, `task add --run`), watched by its supervisor until it exits. */
export interface SpawnRecord {
  spawnId: string;
  /** Its address: `<repo>/<client>-<label>`. */
  name: string;
  client: string;
  label: string;
  repo: string;
  /** The folder it runs in (the repo's root, or its worktree). */
  folder: string;
  /** The machine its supervisor runs on. */
  machine: string;
  prompt: string;
  model: string | null;
  yolo: boolean;
  taskId: string | null;
  /** Who asked for it. */
  spawnedBy: string;
  /** 1 for an agent a person spawned, 2 for one that agent spawned, … */
  depth: number;
  state: SpawnState;
  /** The supervisor watching it: `<host>/<pid>/<random>`. */
  supervisor: string | null;
  pid: number | null;
  logPath: string;
  createdAt: string;
  startedAt: string | null;
  endedAt: string | null;
  exitCode: number | null;
  exitSignal: string | null;
  exitCategory: ExitCategory | null;
  /** What the exit record says beyond its code: a start that failed, the reason of a stop. */
  exitNote: string | null;
  stopRequestedAt: string | null;
  /**
   * The client's own id of the conversation (its hooks' session id, else what its output named):
   * given at the request, the session a resume continues; recorded at the exit, the one it ran.
   */
  sessionKey: string | null;
  /** Whether a crash starts it again (`on-failure`), and at most how many times. */
  restartPolicy: 'on-failure' | null;
  maxRestarts: number;
  /** How many restarts came before this run (0 for the first, and for a resume a person asked for). */
  restarts: number;
  /**
   * Whether it runs in a git worktree of its own (`--worktree`): its folder is that worktree once it
   * is made (here at the request; under a runner, by the runner when it starts it).
   */
  worktree: boolean;
  /** Interactive in a tmux window (`spawn --tmux`), and where; null for an agent run headless. */
  tmux: SpawnTmux | null;
}

/** A repo a runner offers: its name on the bus, and its folder on the runner's machine. */
export interface RunnerRepo {
  repo: string;
  folder: string;
}

/** A machine whose runner starts the agents the hub is asked for there. */
export interface RunnerRecord {
  /** The machine's name, which `spawn --on` gives. */
  machine: string;
  /** The token's agent the runner speaks as. */
  agent: string;
  /** The clients it runs, and the repos it runs them in: nothing else is started there. */
  clients: string[];
  repos: RunnerRepo[];
  /** The most agents it runs at once. */
  maxSpawned: number;
  /** Its machine's bus folder, where the agents' logs are. */
  busFolder: string;
  /** How often it offers itself again: unheard for three of these, it is away. */
  heartbeatMs: number;
  startedAt: string;
  /** When it last offered itself: a runner not heard for a while is away, and its agents are unknown. */
  seenAt: string;
}
