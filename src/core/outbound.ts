/**
 * Outbound integrations: the rules. Which events an outbound integration is sent (`mail:PERSON`,
 * `notice:SEVERITY`, `task`), the event each becomes (decided inside the transaction that made it,
 * so a crash never loses one), and when a failed delivery is tried again or given up. The requests
 * themselves are made by an adapter; this decides, it never posts.
 */
import { InvalidInputError } from '../model/errors.js';
import type { NoticeRecord, Severity } from '../model/notices.js';
import { queuedRow } from '../model/outbound-event.js';
import { quoted } from '../model/quote.js';
import type { MessageRecord, OutboundIntake, OutboxRecord, OutletRecord } from '../model/records.js';
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

/** The event a queued row stands for, as its receiver gets it: its payload with its own id. */
export function eventOf(entry: OutboxRecord): OutboundEvent {
  const body = JSON.parse(entry.payload) as Omit<OutboundEvent, 'id'>;
  return { type: body.type, id: entry.eventId, timestamp: body.timestamp, data: body.data };
}

/** Each integration's rule (one written by a newer agent-bus, which this one cannot read, is not this one's to send). */
type Rule = { name: string; on: OutboundOn; channel: string | null };
/** The rules of each outlet list read, parsed once: a batch of sends reads its list once and asks for each send. */
const parsedRules = new WeakMap<OutletRecord[], Rule[]>();

function rulesOf(outlets: OutletRecord[]): Rule[] {
  const known = parsedRules.get(outlets);
  if (known !== undefined) return known;
  const rules: Rule[] = [];
  for (const outlet of outlets) {
    try {
      rules.push({ name: outlet.name, on: parseOn(outlet.on), channel: outlet.channel });
    } catch {
      continue;
    }
  }
  parsedRules.set(outlets, rules);
  return rules;
}

/**
 * The events a send's rows queue: each copy addressed to a person that a `mail:PERSON` integration
 * watches, and each task result for a `task` one, each event once for all the integrations that
 * want it. An integration's own mail never goes back out to it.
 */
export function mailEvents(records: MessageRecord[], outlets: OutletRecord[], at: string): OutboundIntake[] {
  const events: OutboundIntake[] = [];
  const rules = rulesOf(outlets);
  for (const record of records) {
    const mailTo: string[] = [];
    const taskTo: string[] = [];
    for (const rule of rules) {
      if (record.fromAgent === rule.name) continue;
      if (rule.on.event === 'mail' && record.toAgent === rule.on.person) mailTo.push(rule.name);
      else if (rule.on.event === 'task' && record.taskId !== null) taskTo.push(rule.name);
    }
    if (mailTo.length > 0) events.push({ event: 'mail', message: record.messageId, integrations: mailTo, createdAt: at });
    if (taskTo.length > 0) events.push({ event: 'task', message: record.messageId, integrations: taskTo, createdAt: at });
  }
  return events;
}

/** The events a notice queues: one for the `notice:SEVERITY` integrations it is severe enough for, on their channel if they name one. */
export function noticeEvents(notice: NoticeRecord, outlets: OutletRecord[], at: string): OutboundIntake[] {
  const wanting: string[] = [];
  for (const rule of rulesOf(outlets)) {
    if (rule.on.event !== 'notice') continue;
    if (severityRank(notice.severity) > severityRank(rule.on.severity)) continue;
    if (rule.channel !== null && rule.channel !== notice.channel) continue;
    wanting.push(rule.name);
  }
  if (wanting.length === 0) return [];
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
  return [{ event: 'notice', integrations: wanting, body: { type: 'notice', timestamp: at, data }, createdAt: at }];
}

/** The event `integration test` sends, queued and taken at once. */
export function testEvent(integration: string, at: string): OutboxRecord {
  return queuedRow(integration, 'test', null, JSON.stringify({ type: 'test', timestamp: at, data: { body: `agent-bus: a test delivery for ${integration}` } }), at);
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
