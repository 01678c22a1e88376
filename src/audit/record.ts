/**
 * Audit rows: one JSON object per line, keys in a fixed order and compact, so
 * the log can be searched with plain grep (`grep '"op":"send".*"actor":"alpha"'`).
 */
import { sha256Hex } from '../model/ids.js';
import type { PruneCounts } from '../model/records.js';

export const PREVIEW_CODE_POINTS = 200;

export type AuditOp =
  | 'send'
  | 'read'
  | 'deliver'
  | 'claim'
  | 'wake'
  | 'retire'
  | 'register'
  | 'session'
  | 'notice'
  | 'token'
  | 'prune'
  | 'audit'
  | 'reserve'
  | 'release'
  | 'expire'
  | 'deny'
  | 'collision'
  | 'task'
  | 'integration'
  | 'spawn';

export interface AuditRow {
  ts: string;
  op: AuditOp;
  actor: string;
  message_id: string | null;
  from: string;
  to: string;
  addressed_to?: string | null;
  thread_id: string | null;
  body_preview: string | null;
  body_sha256: string | null;
  [extra: string]: unknown;
}

/** The first 200 code points of a body (never splits a surrogate pair). */
export function bodyPreview(body: string): string {
  let count = 0;
  let end = 0;
  for (const char of body) {
    if (count === PREVIEW_CODE_POINTS) break;
    end += char.length;
    count++;
  }
  return body.slice(0, end);
}

export function bodySha256(body: string): string {
  return sha256Hex(body);
}

export interface MessageFacts {
  messageId: string;
  fromAgent: string;
  toAgent: string;
  addressedTo: string | null;
  threadId: string;
  body: string;
}

export interface BodyDigest {
  preview: string;
  sha256: string;
}

export function digestBody(body: string): BodyDigest {
  return { preview: bodyPreview(body), sha256: bodySha256(body) };
}

/**
 * A row about one message (send, read, deliver, claim), keys in the documented
 * order. A fan-out passes one digest for all its copies: the body is the same.
 */
export function messageRow(op: AuditOp, ts: string, actor: string, message: MessageFacts, digest = digestBody(message.body), via?: string): AuditRow {
  const row: AuditRow = {
    ts,
    op,
    actor,
    message_id: message.messageId,
    from: message.fromAgent,
    to: message.toAgent,
    addressed_to: message.addressedTo,
    thread_id: message.threadId,
    body_preview: digest.preview,
    body_sha256: digest.sha256,
  };
  // A read or a delivery says how the mail reached its reader (the receipt's way).
  if (via !== undefined) row.via = via;
  return row;
}

/** What a row about a text that is not a message (a wake's message, a notice) says of it. */
export interface TextFacts {
  id: string;
  from: string;
  to: string;
  threadId: string | null;
  body: string;
}

/**
 * A row about a text other than a message copy: the message keys in the same
 * order (no `addressed_to`), then the op's own keys after them.
 */
export function textRow(op: AuditOp, ts: string, actor: string, text: TextFacts, extra: Record<string, unknown>): AuditRow {
  const digest = digestBody(text.body);
  return {
    ts,
    op,
    actor,
    message_id: text.id,
    from: text.from,
    to: text.to,
    thread_id: text.threadId,
    body_preview: digest.preview,
    body_sha256: digest.sha256,
    ...extra,
  };
}

export function serialiseRows(rows: readonly AuditRow[]): string {
  let text = '';
  for (const row of rows) text += `${JSON.stringify(row)}\n`;
  return text;
}

/** A row about a session address: taken at start (its event is 'claim'), renamed, or given up. No message, so no body fields. */
export function sessionRow(ts: string, actor: string, from: string, to: string, event: 'claim' | 'rename' | 'end', text: string): AuditRow {
  return {
    ts,
    op: 'session',
    actor,
    message_id: null,
    from,
    to,
    thread_id: null,
    body_preview: `session ${event}: ${text}`,
    body_sha256: null,
  };
}

/** A row about a hub token made or revoked: its id and its agent, never the token or its hash. */
export function tokenRow(ts: string, actor: string, event: 'create' | 'revoke', tokenId: string, agent: string, text: string, expiresAt: string | null = null): AuditRow {
  const row: AuditRow = {
    ts,
    op: 'token',
    actor,
    message_id: null,
    from: actor,
    to: agent,
    thread_id: null,
    body_preview: `token ${event}: ${text}`,
    body_sha256: null,
    token_id: tokenId,
  };
  // When it expires is a field of its own, for machines: the preview is for people.
  if (expiresAt !== null) row.expires_at = expiresAt;
  return row;
}

/** A row about a prune: its cutoff and what it removed (`audit verify` reads the cutoff). */
export function pruneRow(ts: string, actor: string, olderThan: string, counts: PruneCounts): AuditRow {
  return {
    ts,
    op: 'prune',
    actor,
    message_id: null,
    from: actor,
    to: actor,
    thread_id: null,
    body_preview:
      `prune: ${counts.messages} message(s) in ${counts.threads} thread(s), ${counts.notices} expired notice(s), ` +
      `${counts.receipts} receipt(s), ${counts.sessions} ended session(s), ${counts.spawns} ended spawned agent(s), older than ${olderThan}`,
    body_sha256: null,
    older_than: olderThan,
    messages: counts.messages,
    threads: counts.threads,
    notices: counts.notices,
    receipts: counts.receipts,
    sessions: counts.sessions,
    spawns: counts.spawns,
  };
}
