/**
 * The hub's protocol: every operation a machine set to use a hub asks of it, with the types of
 * what it sends and what it gets back. The hub's routes (src/http/hub/) and the client that calls
 * them (src/client/hub/) are both written against these maps, so a field renamed on one side is a
 * type error on the other. Types only: nothing here is loaded at run time.
 *
 * Three kinds of operation:
 * - the MCP tools (`HubTools`), called at `/mcp` as JSON-RPC `tools/call`, one request each (the hub
 *   is stateless); the same tools a client's MCP server offers its model;
 * - the calls beyond the tools (`HubCalls`), at `/v1/call` as `{op, args}`, answered `{result}`;
 * - the endpoints of remote hooks, watchers and followers (`HubEndpoints`), POST with a JSON body.
 *
 * Every request carries the bearer token, the only thing that says who asks. `/mcp` also takes
 * `?as=NAME` (the token's agent or one of its sessions) and `?via=WAY` (the surface of the asking
 * machine that shows what `read_inbox` takes).
 */
import type { SpawnView } from '../core/fleet-ops.js';
import type { ExitCategory, RunnerRepo, SpawnRecord } from '../model/records.js';
import type { AuditRow } from '../audit/record.js';
import type { BrainStatus } from '../brain/status.js';
import type { RefreshResult } from '../brain/refresh.js';
import type { ForgetResult, WhoamiView } from '../core/roster-ops.js';
import type { PendingDelivery } from '../core/inbox-ops.js';
import type { FilesInTheWay, ReservationView } from '../core/reservation-ops.js';
import type { SendResult } from '../core/mail-ops.js';
import type { TaskView } from '../core/task-ops.js';
import type { ChannelView, ListedNotice, NoticeView, PublishRequest, PublishResult } from '../core/notice-ops.js';
import type { MessageStatus } from '../core/receipts.js';
import type { SearchHit } from '../core/search.js';
import type { Subscriptions } from '../core/subscriptions.js';
import type { AgentView, MessageView } from '../core/views.js';
import type { SessionStatus } from '../core/session-status.js';
import type { NudgeLook } from '../core/wake-ops.js';
import type { HookKind, MidTurn } from '../model/hooks.js';

/** Where each operation is served. */
export const HUB_PATHS = {
  mcp: '/mcp',
  hook: '/v1/hook',
  watch: '/v1/watch',
  delivered: '/v1/delivered',
  call: '/v1/call',
  follow: '/v1/follow',
  changes: '/v1/changes',
} as const;

/** The header in which a client names the conversation a call at `/mcp` belongs to: a session address of the token's client address is held for it. */
export const SESSION_HEADER = 'x-agent-bus-session';

/**
 * The header in which a machine set to use a hub says the name its agent was given there
 * (AGENT_BUS_NAME: the name `spawn`, or a runner's start, gave it). When it names a session address
 * of the token's client address (`shop/claude-writer` for a token of `shop/claude`), the conversation
 * the request's session id names holds that address, as a local server's session is pinned by the
 * same variable; any other name is ignored: the token alone says who may speak.
 */
export const NAME_HEADER = 'x-agent-bus-name';

/** The header in which the hub says which name a tool call spoke as. */
export const SPEAKER_HEADER = 'x-agent-bus-agent';

/** A repo-mate as `whoami` lists it. */
export type RepoMate = WhoamiView['group_members'][number];

/** Who a session is on the bus (`whoami`): the core's view, with what only the MCP session knows. */
export interface Whoami extends WhoamiView {
  mcp_client: string | null;
  warnings: string[];
}

/** A search hit as a tool gives it: the snippet as text with the matches in **bold**, and in parts. */
export type SearchHitView = Omit<SearchHit, 'snippet'> & { snippet: string; snippet_parts: SearchHit['snippet'] };

/** A send as `send_message` answers it: a note when nobody running will read it soon. */
export type SentView = SendResult & { note?: string };

/** What a tool or call that takes no arguments is given. */
export type NoArgs = Record<string, never>;

/** Each MCP tool: its arguments (as the model gives them: an unused optional may be null) and its result. */
export interface HubTools {
  whoami: { args: NoArgs; result: Whoami };
  list_agents: { args: { group?: string | null }; result: AgentView[] };
  send_message: { args: { to: string; body: string; thread_id?: string | null; urgent?: boolean | null }; result: SentView };
  read_inbox: { args: { mark_read?: boolean | null; limit?: number | null }; result: MessageView[] };
  set_session: { args: { label?: string | null; topic?: string | null }; result: { name: string; client_address: string | null; topic: string | null } };
  read_thread: { args: { thread_id: string; limit?: number | null }; result: MessageView[] };
  message_status: { args: { message_id: string }; result: MessageStatus };
  search_messages: {
    args: { query: string; from?: string | null; to?: string | null; since?: string | null; thread_id?: string | null; limit?: number | null };
    result: SearchHitView[];
  };
  tail_audit: { args: { limit?: number | null }; result: AuditRow[] };
  channel_publish: {
    args: { channel?: string | null; message: string; severity?: string | null; ttl?: string | number | null };
    result: PublishResult;
  };
  channel_list: { args: NoArgs; result: { channels: ChannelView[]; total: number } };
  channel_acknowledge: { args: { message_id: string; session_id?: string | null }; result: NoticeView & { acknowledged: true; session: string } };
  brain_refresh: { args: NoArgs; result: RefreshResult & { channel: string } };
  brain_status: { args: NoArgs; result: BrainStatus };
  reserve_files: {
    args: { paths: string[]; ttl?: string | number | null; reason?: string | null; shared?: boolean | null };
    result: { reserved: ReservationView[] };
  };
  release_files: { args: { paths?: string[] | null }; result: { released: ReservationView[] } };
  list_reservations: { args: { repo?: string | null }; result: { reservations: ReservationView[] } };
  create_task: { args: { title: string; to: string; body?: string | null; after?: string[] | null }; result: TaskView };
  take_task: { args: { id: string }; result: TaskView };
  complete_task: { args: { id: string; result?: string | null }; result: TaskView };
  fail_task: { args: { id: string; reason: string }; result: TaskView };
  cancel_task: { args: { id: string; reason?: string | null }; result: TaskView };
  get_task: { args: { id: string }; result: TaskView };
  notify_when: { args: { name: string; state: string }; result: { name: string; state: string; now: string; notified: boolean } };
  list_tasks: { args: { state?: string | null; mine?: boolean | null; created?: boolean | null; repo?: string | null }; result: { tasks: TaskView[] } };
  spawn_agent: {
    args: { client: string; prompt?: string | null; repo?: string | null; label?: string | null; task?: string | null; model?: string | null; worktree?: boolean | null; machine?: string | null };
    result: SpawnView;
  };
  stop_agent: { args: { name: string }; result: SpawnView };
  agent_logs: { args: { name: string; lines?: number | null }; result: AgentLogs };
}

export type ToolName = keyof HubTools;
export type ToolArgs<K extends ToolName> = HubTools[K]['args'];
export type ToolResult<K extends ToolName> = HubTools[K]['result'];

/** A machine's own session and what it receives, counted at the hub for its status line. */
export type SessionCounts = SessionStatus;

/** The calls beyond the tools (`POST /v1/call {op, args}`), each done for the token's agent. */
export interface HubCalls {
  /** The source is the token's agent, whatever is asked. */
  'notices.publish': { args: Omit<PublishRequest, 'source'>; result: PublishResult };
  'notices.channels': { args: NoArgs; result: ChannelView[] };
  'notices.list': { args: { channel?: string | null; includeExpired?: boolean }; result: ListedNotice[] };
  'notices.acknowledge': { args: { noticeId: string; session: string }; result: NoticeView };
  /** Refused (403): clearing notices for everyone is done on the hub's own machine. */
  'notices.clear': { args: { noticeId?: string; channel?: string | null; all?: boolean }; result: NoticeView[] };
  'brain.status': { args: NoArgs; result: BrainStatus };
  'brain.refresh': { args: NoArgs; result: RefreshResult & { channel: string } };
  'audit.tail': { args: { limit?: number }; result: AuditRow[] };
  'mail.recent': { args: { limit?: number }; result: MessageView[] };
  'mail.threadIds': { args: { prefix: string; limit?: number }; result: string[] };
  /** The subscriptions are the asking machine's setting: it says them, the hub counts. */
  'status.counts': { args: { subscriptions: Subscriptions; session_key: string | null }; result: SessionCounts };
  /** Only the token's own name or one of its sessions (403 otherwise). */
  'roster.forget': { args: { name: string }; result: ForgetResult };
  /**
   * Which of these files of the token's repo (repo-relative) others hold against the token's agent, or the
   * session its session id holds; with `refuse`, each exclusive hold in the way is audited as a denial.
   */
  'reservations.check': { args: { files: string[]; session_key: string | null; refuse: boolean }; result: FilesInTheWay };
  /**
   * Waking a session through its client's inbox socket, from a relay on the agent's machine (`serve`
   * there), for the token's agent or the session its conversation id holds: where its mail stands...
   */
  'wake.look': { args: { session_key: string | null }; result: NudgeLook };
  /** ...whether it may be nudged for a message others share (the first idle session to ask is)... */
  'wake.claim': { args: { session_key: string | null; message_id: string }; result: boolean };
  /** ...whether the hub's hourly limit (AGENT_BUS_WAKES_PER_HOUR) lets it be woken now, counting it... */
  'wake.allow': { args: { session_key: string | null }; result: boolean };
  /** ...a nudge posted, refused or held back, audited as a `wake` at the hub... */
  'wake.note': { args: { session_key: string | null; message_id: string; status: NudgeStatus }; result: boolean };
  /** ...and the relay as the session's watcher: `socket` (said again as a heartbeat), `refused` (why in `note`), `stopped`. */
  'wake.watch': { args: { session_key: string | null; watcher: string; state: 'socket' | 'refused' | 'stopped'; note: string | null }; result: { reader: string } };
  /**
   * The fleet across machines, for a token with the `spawn` scope: an agent asked of a machine's
   * runner (it starts it there), stopped, resumed, its log read. The spawner is the token's agent.
   */
  'fleet.spawn': { args: FleetSpawnArgs; result: SpawnView };
  'fleet.stop': { args: { name: string }; result: SpawnView };
  'fleet.resume': { args: { name: string; prompt: string | null }; result: SpawnView };
  'fleet.find': { args: { name: string }; result: SpawnView };
  'fleet.list': { args: NoArgs; result: SpawnView[] };
  'fleet.logs': { args: { name: string; lines: number }; result: AgentLogs };
  /**
   * A runner (`agent-bus runner`, a token with the `spawn` scope) offering its machine, said again
   * as its heartbeat: the agents of its machine that are not ended, queued ones to start and running
   * ones to watch. Each call after names one of them, on a machine the token's agent runs.
   */
  'runner.offer': { args: RunnerOffer; result: { work: SpawnRecord[] } };
  /** Between heartbeats, when the bus moves: the same work, asked without offering again (nothing is written). */
  'runner.work': { args: { machine: string }; result: { work: SpawnRecord[] } };
  'runner.spawn': { args: { spawn_id: string }; result: SpawnRecord | null };
  'runner.claim': { args: { spawn_id: string; supervisor: string; max: number }; result: boolean };
  'runner.started': { args: { spawn_id: string; pid: number }; result: boolean };
  'runner.exited': { args: { spawn_id: string; exit_code: number | null; exit_signal: string | null; exit_category: ExitCategory; exit_note: string | null }; result: SpawnRecord | null };
  'runner.hooks_session': { args: { spawn_id: string }; result: string | null };
  'runner.session': { args: { spawn_id: string; session_key: string }; result: boolean };
  'runner.fail_task': { args: { spawn_id: string; lines: string[] }; result: boolean };
  'runner.restart': { args: { spawn_id: string; prompt: string }; result: SpawnRecord };
  'runner.tell': { args: { spawn_id: string; body: string }; result: boolean };
  'runner.log': { args: { spawn_id: string; tail: string }; result: boolean };
  /** The worktree the runner made for the agent, which it runs in from now on. */
  'runner.folder': { args: { spawn_id: string; folder: string }; result: boolean };
}

/** What `spawn --on MACHINE` asks of the hub: the repo by its name on the bus, whose folder the runner knows. */
export interface FleetSpawnArgs {
  client: string;
  machine: string | null;
  repo: string;
  prompt: string | null;
  label: string | null;
  model: string | null;
  yolo: boolean;
  task: string | null;
  restart: 'on-failure' | null;
  max_restarts: number | null;
  /** A git worktree of its own, which the runner makes on its machine when it starts it. */
  worktree: boolean;
}

/** A spawned agent's output: its log's last lines, and whether it still runs. */
export interface AgentLogs {
  name: string;
  state: string;
  lines: string[];
}

/** What a runner offers: its machine, the clients and repos it runs, how many at once, and where its logs are. */
export interface RunnerOffer {
  machine: string;
  clients: string[];
  repos: RunnerRepo[];
  max: number;
  bus_folder: string;
  heartbeat_ms: number;
  started_at: string;
}

/** What came of a nudge: posted into the socket, refused by it, or held back by the hourly limit. */
export type NudgeStatus = 'posted' | 'refused' | 'rate-limited';


export type CallName = keyof HubCalls;
export type CallArgs<K extends CallName> = HubCalls[K]['args'];
export type CallResult<K extends CallName> = HubCalls[K]['result'];

/** What a pre-tool call writes, as the hook on the agent's machine read it from the payload. */
export interface PlannedWrites {
  /** The files, relative to the repo's root (POSIX); never empty. */
  files: string[];
  /** AGENT_BUS_RESERVATIONS where the agent runs (off is no check: no planned writes). */
  mode: 'deny' | 'warn';
}

/** A remote hook's request: which hook, in which client's dialect, for which of the client's sessions. */
export interface HookRequest {
  kind: HookKind;
  client: string | null;
  session_key: string | null;
  thread_id: string | null;
  subscriptions: Subscriptions;
  /** A pre-tool call's writes, read from its payload on the agent's machine (repo-relative). */
  writes?: PlannedWrites;
  /** A pre-tool hook's part where its client splits it over two events (Gemini CLI): only the check, or only the context. Both unless said. */
  pre_tool_part?: 'guard' | 'context';
  /** A stop hook whose client sets no limit on the turns it starts (Gemini CLI): the agent's machine's AGENT_BUS_STOP_KEEPS. */
  stop_keeps?: number;
  /** `hook-stop --peek`: the hub takes and records nothing. */
  peek?: boolean;
  /** Which mail a pre-tool hook shows between tool calls: the agent's machine's AGENT_BUS_MIDTURN (urgent unless said). */
  midturn?: MidTurn;
  /** A notification hook's type, from its payload (Claude Code's `notification_type`). */
  notification?: string;
  /** Answer in JSON whatever the client's dialect: the hook is a tool call of the session's server (`mcp_tool`), whose plain text is ignored. */
  json?: boolean;
}

/** The hook's output in its dialect, and the mail it holds until the hook confirms it printed it. */
export interface HookAnswer {
  output: string;
  delivery: PendingDelivery | null;
}

export interface WatchRequest {
  /** How long the hub may hold the request (at most 50). */
  wait_seconds: number;
  session_key: string | null;
}

export interface WatchAnswer {
  woke: boolean;
  text: string | null;
  delivery: PendingDelivery | null;
  /** The session is woken through its client's socket by a relay on its machine: the watcher steps aside. */
  socket?: boolean;
}

/** A remote hook or watcher printed the mail the hub handed it (or could not: it is given back). */
export interface DeliveredRequest {
  delivery: PendingDelivery;
  session_key: string | null;
  printed: boolean;
}

/** A remote `tail -f`: the sends stored past `after` (and at the skipped positions in `also`). No `after`: where the bus stands. */
export interface FollowRequest {
  after?: number | null;
  also?: number[];
  wait_seconds?: number;
}

export interface FollowAnswer {
  position: number;
  rows: Array<{ position: number; row: AuditRow }>;
}

/** A remote chat's wait for the bus to move: answered at once unless `since` is where the hub's feed stands. */
export interface ChangesRequest {
  since: number | null;
  wait_seconds: number;
}

/** A call beyond the tools (its arguments are checked by the hub against `HubCalls`). */
export interface CallRequest {
  op: CallName;
  args: Record<string, unknown>;
}

export interface HubEndpoints {
  '/v1/call': { request: CallRequest; response: { result: CallResult<CallName> } };
  '/v1/hook': { request: HookRequest; response: HookAnswer };
  '/v1/watch': { request: WatchRequest; response: WatchAnswer };
  '/v1/delivered': { request: DeliveredRequest; response: { marked: number } };
  '/v1/follow': { request: FollowRequest; response: FollowAnswer };
  '/v1/changes': { request: ChangesRequest; response: { version: number } };
}

export type EndpointPath = keyof HubEndpoints;
export type EndpointRequest<P extends EndpointPath> = HubEndpoints[P]['request'];
export type EndpointResponse<P extends EndpointPath> = HubEndpoints[P]['response'];

/**
 * Where a refusal says its kind (model/errors.ts's ErrorKind): a tool error's `_meta`, and the key
 * beside a 400's `error_description`. The remote CLI exits with the code a local one would.
 */
export const ERROR_KIND_KEY = 'agent-bus/error';
