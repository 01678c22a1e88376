/**
 * The JSON shapes the bus shows the world (MCP results, `--json` output).
 * Their keys and order are a stable contract.
 */
import { repoOf, parseNameLenient } from './names.js';
import type { AgentRecord, MessageRecord } from '../store/ports.js';
import type { PresenceState } from '../model/records.js';

export type MessageKind = 'direct' | 'group' | 'broadcast';

export interface MessageView {
  message_id: string;
  from: string;
  to: string;
  addressed_to: string | null;
  kind: MessageKind;
  claimed_by: string | null;
  body: string;
  sent_at: string;
  thread_id: string;
  read_at: string | null;
  delivered_at: string | null;
  /** How the copy was delivered and read (hook-user-prompt, hook-stop, hook-pre-tool, hook-watch, read_inbox, chat, web, inbox): its receipt. */
  delivered_via: string | null;
  read_via: string | null;
  /** Shown at the recipient's next tool call (send --urgent, task results, collision alerts). */
  urgent: boolean;
  /** A task's result (`task done`, `task fail`, or cancelled as a prerequisite failed): the task's id and its state then; null for other mail. */
  task_result: { id: string; state: string } | null;
}

export function messageKind(message: Pick<MessageRecord, 'fanoutId' | 'addressedTo'>): MessageKind {
  if (message.fanoutId === null) return 'direct';
  return message.addressedTo === '*' ? 'broadcast' : 'group';
}

export function messageView(message: MessageRecord): MessageView {
  return {
    message_id: message.messageId,
    from: message.fromAgent,
    to: message.toAgent,
    addressed_to: message.addressedTo,
    kind: messageKind(message),
    claimed_by: message.claimedBy,
    body: message.body,
    sent_at: message.sentAt,
    thread_id: message.threadId,
    read_at: message.readAt,
    delivered_at: message.deliveredAt,
    delivered_via: message.deliveredVia,
    read_via: message.readVia,
    urgent: message.priority === 'urgent',
    task_result: message.taskId === null || message.taskId === undefined ? null : { id: message.taskId, state: message.taskState ?? '' },
  };
}

/** A session address, a client address, any other agent or person, or an integration (a webhook sender). */
export type AgentKind = 'session' | 'client' | 'agent' | 'integration';

export interface AgentView {
  name: string;
  kind: AgentKind;
  group: string;
  client: string | null;
  topic: string | null;
  repo_path: string;
  registered_at: string;
  last_seen: string;
  pending_count: number;
  /** Whether a running server holds this session address; null for names that are not sessions. */
  live: boolean | null;
  /** Where its turn stands (working, idle, waiting, ended, gone), or unknown where nothing says. */
  state: PresenceState;
  /** Since when it has been in that state, where that is known. */
  state_since: string | null;
  /** The task it holds, unclosed (the oldest, when it holds several). */
  task: { id: string; title: string } | null;
  /** How it is woken when mail comes while it is idle, where that is known; null otherwise. */
  wake: WakeFact | null;
  /**
   * A session whose client runs on without its agent-bus server: hooks its server answers reach
   * nothing, so its mail waits for the next hook that does (true); null for names that are not sessions.
   */
  server_gone: boolean | null;
}

/**
 * How an idle session is woken: its MCP server posting into the client's inbox socket; a watcher
 * process its hooks start (or its plugin); a turn the sender queues (Codex); a wake.json command. A
 * socket given up says why, and its session's watcher wakes it instead.
 */
export interface WakeFact {
  way: 'socket' | 'socket-refused' | 'watcher' | 'plugin' | 'queue' | 'command';
  note: string | null;
}

/** Where a name's turn stands, and the task in its hands: what the roster shows beside each name. */
export interface PresenceFacts {
  state: PresenceState;
  since: string | null;
  task: { id: string; title: string } | null;
}

const NOTHING_KNOWN: PresenceFacts = { state: 'unknown', since: null, task: null };

export function agentView(agent: AgentRecord, pending: number, live: boolean | null, presence: PresenceFacts = NOTHING_KNOWN, integration = false, wake: WakeFact | null = null, serverGone = false): AgentView {
  const parsed = parseNameLenient(agent.name);
  const isSession = parsed !== null && parsed.handle !== null;
  return {
    name: agent.name,
    kind: isSession ? 'session' : agent.client !== null ? 'client' : integration ? 'integration' : 'agent',
    group: agent.repo ?? repoOf(agent.name),
    client: agent.client ?? (isSession ? parsed.client : null),
    topic: agent.topic,
    repo_path: agent.repoPath,
    registered_at: agent.registeredAt,
    last_seen: agent.lastSeen,
    pending_count: pending,
    live: isSession ? live : null,
    state: presence.state,
    state_since: presence.since,
    task: presence.task,
    wake,
    server_gone: isSession ? serverGone : null,
  };
}
