/** The notices of a hub's bus, with the same calls as the core's Notices: the CLI does not care which it holds. */
import type { ChannelView, ListedNotice, NoticeView, PublishRequest, PublishResult } from '../core/notice-ops.js';
import { callHubOp } from './tools.js';
import type { HubAccess } from './settings.js';

/** What the channel and notice commands need of notices, here or at a hub. */
export interface NoticeDesk {
  publish(request: PublishRequest): Promise<PublishResult>;
  list(options?: { channel?: string | null; includeExpired?: boolean }): Promise<ListedNotice[]>;
  channels(): Promise<ChannelView[]>;
  acknowledge(noticeId: string, session: string): Promise<NoticeView>;
  clear(target: { noticeId?: string; channel?: string | null; all?: boolean }): Promise<NoticeView[]>;
}

export class RemoteNotices implements NoticeDesk {
  constructor(private readonly access: HubAccess) {}

  publish(request: PublishRequest): Promise<PublishResult> {
    // The source is the token's agent on the hub, whatever is asked.
    const { source: _source, ...rest } = request;
    return callHubOp(this.access, 'notices.publish', { ...rest });
  }

  list(options: { channel?: string | null; includeExpired?: boolean } = {}): Promise<ListedNotice[]> {
    return callHubOp(this.access, 'notices.list', { ...options });
  }

  channels(): Promise<ChannelView[]> {
    return callHubOp(this.access, 'notices.channels');
  }

  acknowledge(noticeId: string, session: string): Promise<NoticeView> {
    return callHubOp(this.access, 'notices.acknowledge', { noticeId, session });
  }

  clear(target: { noticeId?: string; channel?: string | null; all?: boolean }): Promise<NoticeView[]> {
    return callHubOp(this.access, 'notices.clear', { ...target });
  }
}
