/**
 * One client for the bus wherever it is: this machine's store, or a hub reached with a token. The
 * commands, the chat and the status line hold a `BusClient` and never ask where the bus is; the one
 * place that does is `openClient` (runtime.ts). Each operation means the same both ways: over a hub
 * the token's agent (or the session `as` names) speaks, on this machine the speaker the command
 * line or the environment names.
 */
import type { SpawnView } from '../core/fleet-ops.js';
import type { AuditRow } from '../audit/record.js';
import type { BrainStatus } from '../brain/status.js';
import type { RefreshResult } from '../brain/refresh.js';
import type { WriterResult } from '../brain/writer.js';
import type { FilesInTheWay, ReservationView } from '../core/reservation-ops.js';
import type { ForgetResult } from '../core/roster-ops.js';
import type { SendResult } from '../core/mail-ops.js';
import type { TaskView } from '../core/task-ops.js';
import type { ChannelView, ListedNotice, NoticeView, PublishRequest, PublishResult } from '../core/notice-ops.js';
import type { MessageStatus } from '../core/receipts.js';
import type { SearchHit } from '../core/search.js';
import type { ChangeFeed } from '../core/store-changes.js';
import type { SubscriptionSource, Subscriptions } from '../core/subscriptions.js';
import type { AgentView, MessageView } from '../core/views.js';
import type { SessionStatus } from '../core/session-status.js';
import type { ReceiptState, SurfaceWay } from '../model/receipts.js';

/** Where the bus is: this machine's store (its database setting: a file or a URL), or a hub (set in the environment, or by `agent-bus login`). */
export type BusLocation = { kind: 'here'; database: string } | { kind: 'hub'; url: string; from: 'env' | 'login' };

/** What a command needs of notices, here or at a hub. */
export interface NoticeDesk {
  publish(request: PublishRequest): Promise<PublishResult>;
  list(options?: { channel?: string | null; includeExpired?: boolean }): Promise<ListedNotice[]>;
  channels(): Promise<ChannelView[]>;
  acknowledge(noticeId: string, session: string): Promise<NoticeView>;
  clear(target: { noticeId?: string; channel?: string | null; all?: boolean }): Promise<NoticeView[]>;
}

/** The brain, as the bus it belongs to runs it: over a hub, the hub's source, settings and channel. */
export interface BrainDesk {
  /** `source`: what this machine's session subscribes to, where that is known here (a hub knows its own). */
  status(source: SubscriptionSource | null): Promise<BrainStatus>;
  refresh(): Promise<RefreshResult & { channel: string }>;
  /** Write back the markers of a Stop hook's payload (read by `payload` only when the writer runs here). */
  writeMarkers(payload: () => Promise<Record<string, unknown>>): Promise<WriterResult>;
}

/** Where a reservation's paths are: the repo (its name on the bus) and its root on this machine. */
export interface ReservationPlace {
  repo: string;
  root: string;
}

/** File reservations, held by the speaker. Over a hub, the token's agent holds them in its own repo. */
export interface ReservationDesk {
  reserve(request: { place: ReservationPlace; paths: string[]; ttlMs?: number; reason: string | null; shared: boolean }): Promise<ReservationView[]>;
  /** The speaker's reservations of these paths, or all of them (null); a person on this machine may name another holder. */
  release(request: { place: ReservationPlace | null; paths: string[] | null; holder: string | null }): Promise<ReservationView[]>;
  list(repo: string | null): Promise<ReservationView[]>;
  /**
   * Which of these files (repo-relative) another holds against the one committing them: the agent whose
   * client session the environment names (`client`, `sessionKey`: its session variable), else the speaker.
   * With `refuse`, each exclusive hold in the way is audited as a denial.
   */
  inTheWay(request: { place: ReservationPlace; files: string[]; client: string | null; sessionKey: string | null; refuse: boolean }): Promise<FilesInTheWay>;
}

/** Tasks, made and closed by the speaker. Over a hub, the token's agent (or the session `as` names) acts. */
export interface TaskDesk {
  create(request: { title: string; to: string; body: string | null; after: string[] }): Promise<TaskView>;
  take(id: string): Promise<TaskView>;
  complete(id: string, result: string | null): Promise<TaskView>;
  fail(id: string, reason: string): Promise<TaskView>;
  cancel(id: string, reason: string | null): Promise<TaskView>;
  get(id: string): Promise<TaskView>;
  /** `state`: a state, all, or null (open and taken); `mine`, `created`: the speaker's. */
  list(query: { state: string | null; mine: boolean; created: boolean; repo: string | null }): Promise<TaskView[]>;
  /** Until the task is closed, or `timeoutMs` passes. */
  wait(id: string, timeoutMs: number): Promise<{ task: TaskView; closed: boolean }>;
}

/** The audit log of the bus: this machine's file, or the hub's. */
export interface AuditDesk {
  /** The last `limit` rows, oldest first; `follow` then prints every row written after them. */
  tail(limit: number): Promise<AuditRow[]>;
  /** Every row from the end of the last `tail` on, as it is written, until the process is stopped: its exit status. */
  follow(print: (row: AuditRow) => void, warn: (line: string) => void): Promise<number>;
}

/**
 * A search as a command asks it. Whose mail it finds is the client's: over a hub the token's agent's
 * (or the session `as` names); here, with `as` given, that name's, else every message (the human on
 * this machine).
 */
export interface SearchOptions {
  query: string;
  from: string | null;
  to: string | null;
  thread: string | null;
  since: string | null;
  limit: number;
}

/** A session's unread mail and the notices it receives, for a status line. */
export interface SessionCountsRequest {
  subscriptions: Subscriptions;
  /** The client's id for the session, when the hook payload or environment says it. */
  sessionKey: string | null;
  /** The client id (`--client`), to find the session's name as the hooks do. */
  client: string;
  /** The folder the client says the session runs in, and the working directory. */
  payloadDir: string | null;
  cwd: string;
}

/** A session's status (its name null when it is not on the bus). */
export type SessionCounts = Omit<SessionStatus, 'name'> & { name: string | null };

/** The status of a session not on the bus: only the notices it would receive are counted. */
export const NOT_ON_THE_BUS: Omit<SessionCounts, 'notices'> = { name: null, pending_mail: 0, state: 'unknown', state_since: null, task: null };

export interface BusClient {
  readonly location: BusLocation;
  /** The name this client speaks and reads as. */
  speaker(): Promise<string>;
  /** Put the speaker on the roster (a chat connecting); over a hub, the hub has. */
  register(): Promise<void>;
  agents(): Promise<AgentView[]>;
  /** The agents the bus started, each name's latest spawn (over a hub: none yet, the fleet is one machine's). */
  spawned(): Promise<SpawnView[]>;
  send(request: { to: string; body: string; threadId?: string | null; urgent?: boolean }): Promise<{ result: SendResult; from: string }>;
  /** The speaker's unread mail; read (marked read, and delivered by `way`) unless `markRead` is false. */
  readInbox(request: { markRead: boolean; limit: number; way: SurfaceWay }): Promise<{ reader: string; messages: MessageView[] }>;
  thread(threadId: string, limit?: number): Promise<MessageView[]>;
  recentMessages(limit?: number): Promise<MessageView[]>;
  search(options: SearchOptions): Promise<SearchHit[]>;
  /** A send's receipts, as this client may see them. */
  messageStatus(id: string): Promise<MessageStatus>;
  /** Until every copy of the send `id` names has reached `wanted`, or `timeoutMs` has passed. */
  awaitReceipts(id: string, wanted: ReceiptState, timeoutMs: number, onChange?: (status: MessageStatus) => void): Promise<{ status: MessageStatus; reached: boolean }>;
  forget(name: string): Promise<ForgetResult>;
  /** Forget every agent of a repo: the names forgotten. */
  forgetRepo(repo: string): Promise<string[]>;
  sessionCounts(request: SessionCountsRequest): Promise<SessionCounts>;
  readonly notices: NoticeDesk;
  readonly reservations: ReservationDesk;
  readonly tasks: TaskDesk;
  readonly brain: BrainDesk;
  readonly audit: AuditDesk;
  /** A feed that moves when the bus may have changed, for a loop that waits. */
  changes(): ChangeFeed;
  /** For a process that lives on: index its sends for search as they commit (where the engine needs it). */
  keepSearchIndexCurrent(): void;
  /** For a process that lives on, on one machine: post the outbox's events to the integrations out (one process at a time does), until closed. */
  serveOutbox(): void;
  close(): Promise<void>;
}
