/**
 * Outbound integrations: the rules. Which events an outbound integration is sent (`mail:PERSON`,
 * `notice:SEVERITY`, `task`), the event each becomes (decided inside the transaction that made it,
 * so a crash never loses one), and when a failed delivery is tried again or given up. The requests
 * themselves are made by an adapter; this decides, it never posts.
 */
import { InvalidInputError } from '../model/errors.js';
import { timeOrderedId } from '../model/ids.js';
import type { NoticeRecord, Severity } from '../model/notices.js';
import { quoted } from '../model/quote.js';
import type { MessageRecord, OutboxRecord, OutletRecord } from '../model/records.js';
import { nameProblem } from './names.js';
import { parseSeverity, severityRank } from './notices.js';

export const OUTBOUND_KINDS = ['webhook', 'slack', 'discord', 'ntfy'] as const;
export type OutboundKind = (typeof OUTBOUND_KINDS)[number];

export function isOutboundKind(kind: string): kind is OutboundKind {
  return (OUTBOUND_KINDS as readonly string[]).includes(kind);
}

/** What an outbound integration is sent. */
export type OutboundOn = { event: 'mail'; person: string } | { event: 'notice'; severity: Severity } | { event: 'task' };

/** `--on` as given: `mail:PERSON`, `notice:SEVERITY` or `task`. */
export function parseOn(raw: string): OutboundOn {
  const on = raw.trim();
  const colon = on.indexOf(':');
  const head = colon < 0 ? on : on.slice(0, colon);
  const rest = colon < 0 ? '' : on.slice(colon + 1);
  if (head === 'task' && colon < 0) return { event: 'task' };
  if (head === 'mail' && rest !== '') {
    const problem = nameProblem(rest);
    if (problem !== null || rest.includes('/')) throw new InvalidInputError(`--on mail:PERSON takes a person's name (no client part): ${quoted(rest)}${problem === null ? '' : ` is not a name: ${problem}`}`);
    return { event: 'mail', person: rest };
  }
  if (head === 'notice' && rest !== '') return { event: 'notice', severity: parseSeverity(rest) };
  throw new InvalidInputError(`unknown --on ${quoted(raw)}: use mail:PERSON, notice:SEVERITY (critical, alert or info) or task`);
}

/** An event as every kind's request is made from it. */
export interface OutboundEvent {
  type: 'mail' | 'task' | 'notice' | 'test';
  /** The event's id: the delivery id its receiver sees on every attempt. */
  id: string;
  timestamp: string;
  data: Record<string, unknown>;
}

function queued(outlet: string, event: OutboundEvent, messageId: string | null): OutboxRecord {
  return {
    eventId: event.id,
    integration: outlet,
    event: event.type,
    messageId,
    payload: JSON.stringify(event),
    createdAt: event.timestamp,
    state: 'queued',
    attempts: 0,
    nextAt: event.timestamp,
    leaseUntil: null,
    lastStatus: null,
    lastError: null,
    finishedAt: null,
  };
}

function parsedOn(outlet: OutletRecord): OutboundOn | null {
  try {
    return parseOn(outlet.on);
  } catch {
    return null; // Written by a newer agent-bus: not this one's to send.
  }
}

/**
 * The events a send's rows queue: each copy addressed to a person that a `mail:PERSON` integration
 * watches, and each task result for a `task` one. An integration's own mail never goes back out to it.
 */
export function mailEvents(records: MessageRecord[], outlets: OutletRecord[], at: string): OutboxRecord[] {
  const events: OutboxRecord[] = [];
  for (const outlet of outlets) {
    const on = parsedOn(outlet);
    if (on === null || on.event === 'notice') continue;
    for (const record of records) {
      if (record.fromAgent === outlet.name) continue;
      const data = {
        message_id: record.messageId,
        from: record.fromAgent,
        to: record.toAgent,
        addressed_to: record.addressedTo,
        body: record.body,
        thread_id: record.threadId,
        sent_at: record.sentAt,
        urgent: record.priority === 'urgent',
      };
      if (on.event === 'mail' && record.toAgent === on.person) {
        events.push(queued(outlet.name, { type: 'mail', id: timeOrderedId(), timestamp: at, data }, record.messageId));
      } else if (on.event === 'task' && record.taskId !== null) {
        events.push(queued(outlet.name, { type: 'task', id: timeOrderedId(), timestamp: at, data: { ...data, task_id: record.taskId, task_state: record.taskState } }, null));
      }
    }
  }
  return events;
}

/** The events a notice queues: one for each `notice:SEVERITY` integration it is severe enough for, on its channel if it names one. */
export function noticeEvents(notice: NoticeRecord, outlets: OutletRecord[], at: string): OutboxRecord[] {
  const events: OutboxRecord[] = [];
  for (const outlet of outlets) {
    const on = parsedOn(outlet);
    if (on === null || on.event !== 'notice') continue;
    if (severityRank(notice.severity) > severityRank(on.severity)) continue;
    if (outlet.channel !== null && outlet.channel !== notice.channel) continue;
    const data = {
      notice_id: notice.noticeId,
      channel: notice.channel,
      severity: notice.severity,
      title: notice.title,
      body: notice.body,
      source: notice.source,
      created_at: notice.createdAt,
      expires_at: notice.expiresAt,
    };
    events.push(queued(outlet.name, { type: 'notice', id: timeOrderedId(), timestamp: at, data }, null));
  }
  return events;
}

/** The event `integration test` sends. */
export function testEvent(integration: string, at: string): OutboxRecord {
  return queued(integration, { type: 'test', id: timeOrderedId(), timestamp: at, data: { body: `agent-bus: a test delivery for ${integration}` } }, null);
}

/** How long an event is tried before it is marked failed. */
export const GIVE_UP_AFTER_MS = 24 * 3600 * 1000;
/** The longest wait between two attempts. */
export const MAX_BACKOFF_MS = 10 * 60 * 1000;
/** How long a delivered event is kept to be shown. */
export const KEEP_DELIVERED_MS = 7 * 86_400_000;

/**
 * The wait before attempt `attempts + 1`: doubling from a second, capped, and jittered (a random
 * share of up to a half off), so receivers that came back are not all hit at once. `Retry-After`
 * from the receiver wins when it asks for longer.
 */
export function backoffMs(attempts: number, random: number, retryAfterMs: number | null = null): number {
  const base = Math.min(MAX_BACKOFF_MS, 1000 * 2 ** Math.max(0, attempts - 1));
  const jittered = Math.round(base * (1 - random / 2));
  return retryAfterMs === null ? jittered : Math.min(Math.max(jittered, retryAfterMs), MAX_BACKOFF_MS);
}

/** Whether a receiver's answer means it will never take this event (the hook gone or revoked): no more tries. */
export function isPermanentRefusal(status: number | null): boolean {
  return status === 410;
}

/**
 * A URL as shown: its scheme and host, the rest masked. Slack and Discord URLs carry their token in
 * the path, and an ntfy topic is as good as a password.
 */
export function maskUrl(url: string): string {
  try {
    const parsed = new URL(url);
    const more = parsed.pathname !== '/' || parsed.search !== '' || parsed.username !== '';
    return `${parsed.protocol}//${parsed.host}/${more ? '…' : ''}`;
  } catch {
    return '…';
  }
}

/** `--url` as given: an absolute http or https URL with no credentials in it. */
export function parseOutboundUrl(raw: string): string {
  let parsed: URL;
  try {
    parsed = new URL(raw.trim());
  } catch {
    throw new InvalidInputError(`--url ${quoted(raw)} is not a URL: give an absolute http:// or https:// URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new InvalidInputError(`--url must be http:// or https://, not ${parsed.protocol}`);
  return parsed.toString();
}
