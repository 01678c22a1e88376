/** Notices as they are stored: the shared vocabulary of the store and the core. */

export const SEVERITIES = ['critical', 'alert', 'info'] as const;
export type Severity = (typeof SEVERITIES)[number];

export interface NoticeRecord {
  noticeId: string;
  /** null: a global notice, which every session receives. */
  channel: string | null;
  severity: Severity;
  title: string | null;
  body: string;
  source: string;
  priority: number;
  contentHash: string;
  createdAt: string;
  expiresAt: string;
}

/** A notice that may be due for one session, with what that session already has of it. */
export interface NoticeCandidate extends NoticeRecord {
  /** When this session was first shown it (info notices are shown once), or null. */
  deliveredAt: string | null;
}
