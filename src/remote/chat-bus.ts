/**
 * The chat's bus on a machine set to use a hub: the same calls as the core's
 * Bus, made at the hub for the token's agent. Its change feed waits at the
 * hub (POST /v1/changes) for the hub's own feed to move.
 */
import type { ReadRequest, SendRequest, SendResult } from '../core/bus.js';
import type { ListedNotice } from '../core/notice-ops.js';
import type { AgentView, MessageView } from '../core/views.js';
import type { ChangeFeed } from '../core/store-changes.js';
import type { ChatBus } from '../tui/chat-bus.js';
import { hubRequest, HubUnreachable } from './http.js';
import type { HubAccess } from './settings.js';
import { callHubOp, callHubTool } from './tools.js';

/** One wait at the hub, at most: long enough to be cheap, short enough that no proxy cuts it. */
const WAIT_CAP_MS = 25_000;

class HubChangeFeed implements ChangeFeed {
  private seen: number | null = null;
  private current: AbortController | null = null;

  constructor(private readonly access: HubAccess) {}

  async version(): Promise<number> {
    if (this.seen === null) this.seen = await this.ask(null, 0);
    return this.seen;
  }

  async wait(ms: number): Promise<boolean> {
    const before = await this.version();
    const after = await this.ask(before, Math.min(ms, WAIT_CAP_MS));
    this.seen = after;
    return after !== before;
  }

  interrupt(): void {
    this.current?.abort();
  }

  async close(): Promise<void> {
    this.interrupt();
  }

  private async ask(since: number | null, ms: number): Promise<number> {
    const controller = new AbortController();
    this.current = controller;
    try {
      const response = await hubRequest(this.access, 'POST', '/v1/changes', { since, wait_seconds: ms / 1000 }, ms + 15_000, controller.signal);
      const version = (response.body as { version?: unknown } | null)?.version;
      return typeof version === 'number' ? version : (this.seen ?? 0);
    } catch (error) {
      // An interrupted or failed wait reads as "nothing moved"; the chat looks again at its poll.
      if (error instanceof HubUnreachable) return this.seen ?? 0;
      throw error;
    } finally {
      if (this.current === controller) this.current = null;
    }
  }
}

export class RemoteChatBus implements ChatBus {
  readonly notices: { list(): Promise<ListedNotice[]> };

  /** `as`: the name the chat speaks as when it is not the token's own (a session of it). */
  constructor(
    private readonly access: HubAccess,
    private readonly as: string | null,
  ) {
    this.notices = { list: () => callHubOp<ListedNotice[]>(access, 'notices.list') };
  }

  async register(): Promise<void> {
    // The hub puts the token's agent on the roster itself.
  }

  async agents(): Promise<AgentView[]> {
    return (await callHubTool<AgentView[]>(this.access, 'list_agents', {})).value;
  }

  async send(request: SendRequest): Promise<SendResult> {
    return (await callHubTool<SendResult>(this.access, 'send_message', { to: request.to, body: request.body, thread_id: request.threadId ?? null }, this.as)).value;
  }

  async readInbox(request: ReadRequest): Promise<MessageView[]> {
    return (await callHubTool<MessageView[]>(this.access, 'read_inbox', { mark_read: request.markRead ?? true, limit: request.limit ?? 50 }, this.as)).value;
  }

  async thread(threadId: string, limit = 100): Promise<MessageView[]> {
    return (await callHubTool<MessageView[]>(this.access, 'read_thread', { thread_id: threadId, limit })).value;
  }

  threadIdsStartingWith(prefix: string, limit = 10): Promise<string[]> {
    return prefix === '' ? Promise.resolve([]) : callHubOp<string[]>(this.access, 'mail.threadIds', { prefix, limit });
  }

  recentMessages(limit = 10): Promise<MessageView[]> {
    return callHubOp<MessageView[]>(this.access, 'mail.recent', { limit });
  }

  changes(): ChangeFeed {
    return new HubChangeFeed(this.access);
  }
}
