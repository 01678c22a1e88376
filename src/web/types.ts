/** The API's answers, as the page reads them (the server's shapes, named here for the browser). */
export interface Agent {
  name: string;
  kind: 'session' | 'client' | 'agent';
  group: string;
  client: string | null;
  topic: string | null;
  last_seen: string;
  pending_count: number;
  live: boolean | null;
}
export interface RosterPage {
  repos: Array<{ repo: string; agents: Agent[]; unread: number; running: number }>;
  totalRepos: number;
  totalAgents: number;
  offset: number;
}
export interface AuditRow {
  ts: string;
  op: string;
  actor: string;
  message_id: string | null;
  from: string;
  to: string;
  addressed_to?: string | null;
  thread_id: string | null;
  body_preview: string | null;
  [extra: string]: unknown;
}
export interface ThreadSummary {
  threadId: string;
  sends: number;
  copies: number;
  unread: number;
  firstSentAt: string;
  lastSentAt: string;
  last: { from: string; to: string; sentAt: string; preview: string };
}
export interface ThreadSend {
  from: string;
  to: string;
  kind: 'direct' | 'group' | 'broadcast';
  body: string;
  sentAt: string;
  copies: Array<{ to: string; messageId: string; deliveredAt: string | null; readAt: string | null; claimedBy: string | null }>;
}
export interface Notice {
  notice_id: string;
  channel: string | null;
  severity: 'critical' | 'alert' | 'info';
  title: string | null;
  message: string;
  source: string;
  created_at: string;
  expires_at: string;
  delivered_to: number;
  acknowledged_by: number;
}
export interface Me {
  name: string;
  place: 'local' | 'hub';
  version: string;
  store: string | null;
  may_clear_notices: boolean;
  now: string;
}
export interface MailDay {
  hours: Array<{ hour: string; sends: number }>;
  pairs: Array<{ from: string; to: string; sends: number }>;
}
