/** What the chat needs of the bus: the bus of this machine, or a hub's through its endpoints. */
import type { ReadRequest, SendRequest, SendResult } from '../core/bus.js';
import type { ListedNotice } from '../core/notice-ops.js';
import type { AgentView, MessageView } from '../core/views.js';
import type { Registration } from '../model/records.js';
import type { ChangeFeed } from '../core/store-changes.js';
import type { MessageStatus } from '../core/receipts.js';

export interface ChatBus {
  register(registrations: Registration[]): Promise<void>;
  agents(): Promise<AgentView[]>;
  send(request: SendRequest): Promise<SendResult>;
  readInbox(request: ReadRequest): Promise<MessageView[]>;
  thread(threadId: string, limit?: number): Promise<MessageView[]>;
  threadIdsStartingWith(prefix: string, limit?: number): Promise<string[]>;
  recentMessages(limit?: number): Promise<MessageView[]>;
  /** A send's receipts, as `reader` (the chat's own name) may see them. */
  messageStatus(id: string, reader: string | null): Promise<MessageStatus>;
  readonly notices: { list(): Promise<ListedNotice[]> };
  changes(): ChangeFeed;
}
