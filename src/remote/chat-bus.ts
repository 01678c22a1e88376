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
import type { MessageStatus } from '../core/receipts.js';
import { HubChangeFeed } from './changes.js';
import type { HubAccess } from './settings.js';
import { callHubOp, callHubTool } from './tools.js';

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
    return (await callHubTool<MessageView[]>(this.access, 'read_inbox', { mark_read: request.markRead ?? true, limit: request.limit ?? 50 }, this.as, 'chat')).value;
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

  async messageStatus(id: string): Promise<MessageStatus> {
    // The hub answers for the token's agent (or the session the chat speaks as).
    return (await callHubTool<MessageStatus>(this.access, 'message_status', { message_id: id }, this.as)).value;
  }

  changes(): ChangeFeed {
    return new HubChangeFeed(this.access);
  }
}
