/**
 * A hub's bus as a `BusClient`, reached with a token (src/remote/ carries each request). The hub
 * answers for the token's agent, or for `as` when it names the agent or one of its sessions; what
 * only the hub's own machine may do is refused there, or here before anything is asked.
 */
import type { SpawnView } from '../core/fleet-ops.js';
import type { AuditRow } from '../audit/record.js';
import type { ChangeFeed } from '../core/store-changes.js';
import { BusError } from '../model/errors.js';
import { awaitSend } from '../core/receipt-wait.js';
import type { MessageStatus } from '../core/receipts.js';
import type { AgentView, MessageView } from '../core/views.js';
import type { HubAccess } from '../adapters/hub-access.js';
import { callHubOp, callHubTool } from '../remote/calls.js';
import { HubChangeFeed } from '../remote/changes.js';
import { followOverHub } from '../remote/follow.js';
import type { AuditDesk, BrainDesk, BusClient, BusLocation, NoticeDesk, ReservationDesk, ReservationPlace, SearchOptions, SessionCounts, SessionCountsRequest, TaskDesk } from './bus-client.js';
import { awaitTask } from '../core/task-ops.js';
import { reservationPath } from '../core/reservation-paths.js';

export class HubClient implements BusClient {
  readonly location: BusLocation;
  readonly notices: NoticeDesk;
  readonly reservations: ReservationDesk;
  readonly tasks: TaskDesk;
  readonly brain: BrainDesk;
  readonly audit: AuditDesk;

  /** `as`: the name to speak as when it is not the token's own (one of its sessions); null: the token's agent. */
  constructor(
    private readonly access: HubAccess,
    private readonly as: string | null,
  ) {
    this.location = { kind: 'hub', url: access.url, from: access.from };
    this.notices = {
      // The source is the token's agent on the hub, whatever is asked.
      publish: ({ source: _source, ...request }) => callHubOp(access, 'notices.publish', request),
      list: (options = {}) => callHubOp(access, 'notices.list', { ...options }),
      channels: () => callHubOp(access, 'notices.channels', {}),
      acknowledge: (noticeId, session) => callHubOp(access, 'notices.acknowledge', { noticeId, session }),
      clear: (target) => callHubOp(access, 'notices.clear', { ...target }),
    };
    // The hub knows no path of this machine: paths go as the repo-relative ones they are here, and the
    // token's agent holds them in its own repo.
    const relative = (place: ReservationPlace | null, paths: string[]): string[] => paths.map((path) => reservationPath(path, place?.root ?? '/'));
    this.reservations = {
      reserve: async ({ place, paths, ttlMs, reason, shared }) =>
        (await callHubTool(access, 'reserve_files', { paths: relative(place, paths), ttl: ttlMs === undefined ? null : Math.ceil(ttlMs / 1000), reason, shared }, as)).value.reserved,
      release: async ({ place, paths, holder }) => {
        if (holder !== null) {
          throw new BusError("over the hub a token releases only its own agent's reservations: release another's on the hub's machine (agent-bus release --holder, or the dashboard of agent-bus web there)");
        }
        return (await callHubTool(access, 'release_files', { paths: paths === null ? null : relative(place, paths) }, as)).value.released;
      },
      list: async (repo) => (await callHubTool(access, 'list_reservations', { repo })).value.reservations,
      // The token's agent commits, in its own repo; its session id says which of its sessions.
      inTheWay: ({ files, sessionKey, refuse }) => callHubOp(access, 'reservations.check', { files, session_key: sessionKey, refuse }),
    };
    // The token's agent (or the session `as` names) makes, takes and closes them on the hub.
    const get = async (id: string) => (await callHubTool(access, 'get_task', { id }, as)).value;
    this.tasks = {
      create: async ({ title, to, body, after }) => (await callHubTool(access, 'create_task', { title, to, body, after }, as)).value,
      take: async (id) => (await callHubTool(access, 'take_task', { id }, as)).value,
      complete: async (id, result) => (await callHubTool(access, 'complete_task', { id, result }, as)).value,
      fail: async (id, reason) => (await callHubTool(access, 'fail_task', { id, reason }, as)).value,
      cancel: async (id, reason) => (await callHubTool(access, 'cancel_task', { id, reason }, as)).value,
      get,
      list: async ({ state, mine, created, repo }) => (await callHubTool(access, 'list_tasks', { state, mine, created, repo }, as)).value.tasks,
      wait: async (id, timeoutMs) => {
        const first = await get(id);
        return awaitTask(new HubChangeFeed(access), () => get(first.id), first, timeoutMs);
      },
    };
    // Over the hub, the brain is the hub's: its source, its settings, its channel.
    this.brain = {
      status: () => callHubOp(access, 'brain.status', {}),
      refresh: () => callHubOp(access, 'brain.refresh', {}),
      writeMarkers: () => Promise.reject(new BusError("brain markers: the brain's writer runs where the bus is; over the hub it is the hub's to run")),
    };
    this.audit = {
      // The hub's audit log, not this machine's; followed, every send its bus stores from any machine.
      tail: (limit) => callHubOp(access, 'audit.tail', { limit }) as Promise<AuditRow[]>,
      follow: (print, warn) => followOverHub(access, print, warn),
    };
  }

  /** The name the hub speaks as for this client (the token's agent, or the session `as` names). */
  async speaker(): Promise<string> {
    return (await callHubTool(this.access, 'whoami', {}, this.as)).speaker;
  }

  async register(): Promise<void> {
    // The hub puts the token's agent on the roster itself.
  }

  async agents(): Promise<AgentView[]> {
    return (await callHubTool(this.access, 'list_agents', {})).value;
  }

  /** The fleet as the hub keeps it: every machine's spawned agents, each marked with its runner. */
  async spawned(): Promise<SpawnView[]> {
    return callHubOp(this.access, 'fleet.list', {});
  }

  async send(request: { to: string; body: string; threadId?: string | null; urgent?: boolean }) {
    const { value, speaker } = await callHubTool(this.access, 'send_message', { to: request.to, body: request.body, thread_id: request.threadId ?? null, ...(request.urgent ? { urgent: true } : {}) }, this.as);
    return { result: value, from: speaker };
  }

  async readInbox(request: { markRead: boolean; limit: number; way: 'inbox' | 'chat' }) {
    // The hub records the surface of this machine that shows the mail, not a model's read.
    const { value, speaker } = await callHubTool(this.access, 'read_inbox', { mark_read: request.markRead, limit: request.limit }, this.as, request.way);
    return { reader: speaker, messages: value };
  }

  async thread(threadId: string, limit = 100): Promise<MessageView[]> {
    return (await callHubTool(this.access, 'read_thread', { thread_id: threadId, limit })).value;
  }


  recentMessages(limit = 10): Promise<MessageView[]> {
    return callHubOp(this.access, 'mail.recent', { limit });
  }

  async search(options: SearchOptions) {
    // The token searches: it finds what its agent may read.
    const { value } = await callHubTool(
      this.access,
      'search_messages',
      { query: options.query, from: options.from, to: options.to, since: options.since, thread_id: options.thread, limit: options.limit },
      this.as,
    );
    return value.map(({ snippet_parts, ...hit }) => ({ ...hit, snippet: snippet_parts }));
  }

  async messageStatus(id: string): Promise<MessageStatus> {
    return (await callHubTool(this.access, 'message_status', { message_id: id }, this.as)).value;
  }

  async awaitReceipts(...[id, wanted, timeoutMs, onChange]: Parameters<BusClient['awaitReceipts']>) {
    const first = await this.messageStatus(id);
    const send = first.fanout_id ?? first.message_id;
    return awaitSend(new HubChangeFeed(this.access), () => this.messageStatus(send), first, wanted, timeoutMs, onChange);
  }

  forget(name: string) {
    return callHubOp(this.access, 'roster.forget', { name });
  }

  forgetRepo(): Promise<string[]> {
    return Promise.reject(new BusError("forget --group: over the hub a token forgets only its own names; forget a repo on the hub's own machine"));
  }

  async sessionCounts(request: SessionCountsRequest): Promise<SessionCounts> {
    // What the session subscribes to is this machine's setting: it says it, the hub counts.
    return callHubOp(this.access, 'status.counts', { subscriptions: request.subscriptions, session_key: request.sessionKey });
  }

  changes(): ChangeFeed {
    return new HubChangeFeed(this.access);
  }

  keepSearchIndexCurrent(): void {
    // The hub's own: it indexes what its bus stores.
  }

  serveOutbox(): void {
    // The hub's own: it posts what its bus queues.
  }

  async close(): Promise<void> {
    // Each request is its own: nothing is held open.
  }
}
