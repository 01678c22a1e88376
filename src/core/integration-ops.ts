/**
 * Integrations: services outside the bus (GitHub, CI, anything that can POST) as first-class senders.
 * Each has a name on the roster (no client part, like a person), a kind that says how its deliveries
 * are signed, where they go (a repo, an agent, `*`, or `{repo}`: the repo a GitHub delivery names),
 * and a secret shown once. A delivery is verified over its raw bytes, taken once by its delivery id
 * (a replay is answered again with nothing sent), and becomes mail from the integration, or a notice
 * on its channel. It may send only as itself and only where it was set up to.
 */
import type { AuditSink } from './audit-sink.js';
import { integrationRow } from './integration-rows.js';
import { formatStamp, stampToMillis, type Clock } from '../model/clock.js';
import { BusError, InvalidInputError, isBusError, UnknownRecipientError, ConflictError, NotFoundError } from '../model/errors.js';
import type { IntegrationRecord } from '../model/records.js';
import { quoted } from '../model/quote.js';
import type { IntegrationsPort, OutboxCounts, OutboxPort, RosterPort } from '../store/ports.js';
import { describeGithubEvent } from './github-events.js';
import type { Mail } from './mail-ops.js';
import { BROADCAST, BUS_NAME, HUMAN, nameProblem } from './names.js';
import type { Notices } from './notice-ops.js';
import { parseSeverity, type Severity } from './notices.js';
import { registrationsFor } from './roster.js';
import type { OutboundDelivery, Settled } from './outbound-delivery.js';
import { isOutboundKind, maskUrl, OUTBOUND_KINDS, parseOn, parseOutboundUrl, testEvent } from './outbound.js';
import { newIntegrationSecret, SIGNATURE_HEADERS, verifyGeneric, verifyGithub } from './webhook-signature.js';

/** Services that post to the bus. */
export const INBOUND_KINDS = ['github', 'generic'] as const;
export const INTEGRATION_KINDS = [...INBOUND_KINDS, ...OUTBOUND_KINDS] as const;
export type IntegrationKind = (typeof INTEGRATION_KINDS)[number];

/** The target that sends a GitHub delivery to the repo its payload names. */
export const REPO_FROM_PAYLOAD = '{repo}';

/** The path a service posts its deliveries to, on the hub. */
export function integrationPath(name: string): string {
  return `/v1/integrations/${encodeURIComponent(name)}`;
}

/** How long a delivery id is remembered: GitHub lets a delivery be redelivered for 3 days. */
export const DELIVERY_MEMORY_MS = 7 * 86_400_000;

/** How long a rotated-out secret stays valid, unless said. */
export const DEFAULT_GRACE_MS = 60 * 60 * 1000;

/** An integration as listed: never its secrets. */
export interface IntegrationView {
  name: string;
  kind: string;
  /** `in`: a service posts to the bus; `out`: the bus posts to a receiver. */
  direction: 'in' | 'out';
  /** Where an inbound integration's deliveries go (empty outbound). */
  to: string;
  channel: string | null;
  severity: string;
  /** The hub path an inbound integration takes deliveries at (null outbound). */
  path: string | null;
  /** An outbound integration's receiver, masked (null inbound). */
  url: string | null;
  /** What an outbound integration is sent (null inbound). */
  on: string | null;
  created_at: string;
  /** Until when the secret before the last rotation is still accepted, if it is. */
  previous_secret_until: string | null;
}

/** A new integration, or a rotated secret: the only time the secret is shown. */
export type IntegrationWithSecret = IntegrationView & { secret: string };

export interface IntegrationSetup {
  name: string;
  kind: string;
  /** Inbound: where its deliveries go. */
  to?: string | null;
  channel?: string | null;
  severity?: string | null;
  /** Outbound: the receiver, and what it is sent. */
  url?: string | null;
  on?: string | null;
}

/** An outbound event as listed: where its delivery stands (never the receiver's URL). */
export interface OutboxView {
  event_id: string;
  integration: string;
  event: string;
  message_id: string | null;
  state: string;
  attempts: number;
  created_at: string;
  next_at: string | null;
  last_status: number | null;
  last_error: string | null;
  finished_at: string | null;
}

/** An integration with how its deliveries stand: for doctor and the dashboard. */
export type IntegrationStanding = IntegrationView & { queued: number; failed: number; delivered: number; last_delivered_at: string | null };

/** A delivery as the hub received it: the raw bytes and the headers (names lower-cased). */
export interface Delivery {
  name: string;
  headers: Record<string, string | undefined>;
  body: Buffer;
}

/** What the sender is answered: the status, and a line saying what became of its delivery. */
export interface DeliveryAnswer {
  status: 200 | 202 | 400 | 401 | 404;
  body: { ok: boolean; result: 'sent' | 'published' | 'duplicate' | 'dropped' | 'refused' | 'unknown' | 'bad-request'; detail: string; message_ids?: string[]; notice_id?: string };
}

/** Names an integration may not take: the people and the bus itself speak as them. */
const RESERVED = new Set([HUMAN, BUS_NAME]);

function view(record: IntegrationRecord, now: number): IntegrationView {
  const graceLeft = record.previousUntil !== null && stampToMillis(record.previousUntil) > now;
  const outbound = record.url !== null;
  return {
    name: record.name,
    kind: record.kind,
    direction: outbound ? 'out' : 'in',
    to: record.target,
    channel: record.channel,
    severity: record.severity,
    path: outbound ? null : integrationPath(record.name),
    url: record.url === null ? null : maskUrl(record.url),
    on: record.on,
    created_at: record.createdAt,
    previous_secret_until: graceLeft ? record.previousUntil : null,
  };
}


/** A generic delivery's body: JSON `{to?, body, thread_id?, severity?, channel?, ttl?}`, or plain text for the body. */
interface GenericMessage {
  to: string | null;
  body: string;
  threadId: string | null;
  severity: string | null;
  channel: string | null;
  ttl: string | number | null;
}

function genericMessage(raw: Buffer): GenericMessage {
  const text = raw.toString('utf8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { to: null, body: text, threadId: null, severity: null, channel: null, ttl: null };
  }
  if (typeof parsed === 'string') return { to: null, body: parsed, threadId: null, severity: null, channel: null, ttl: null };
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new InvalidInputError('a delivery is a JSON object {to?, body, thread_id?, severity?, channel?, ttl?}, or plain text');
  const fields = parsed as Record<string, unknown>;
  const optional = (key: string): string | null => {
    const value = fields[key];
    if (value === undefined || value === null) return null;
    if (typeof value !== 'string') throw new InvalidInputError(`${key} must be text`);
    return value;
  };
  if (typeof fields.body !== 'string' || fields.body.trim() === '') throw new InvalidInputError('body must be non-empty text');
  const ttl = fields.ttl;
  if (ttl !== undefined && ttl !== null && typeof ttl !== 'string' && typeof ttl !== 'number') throw new InvalidInputError('ttl must be a duration such as 30m, or seconds');
  return { to: optional('to'), body: fields.body, threadId: optional('thread_id'), severity: optional('severity'), channel: optional('channel'), ttl: (ttl as string | number | undefined) ?? null };
}

export class Integrations {
  constructor(
    private readonly store: IntegrationsPort & OutboxPort & Pick<RosterPort, 'getAgent'>,
    private readonly audit: AuditSink,
    private readonly clock: Clock,
    private readonly mail: Mail,
    private readonly notices: Notices,
    private readonly delivery: OutboundDelivery,
  ) {}

  private now(): number {
    return Math.floor(this.clock.nowMicros() / 1000);
  }

  /** Set one up; its secret is in the answer, and never shown again. */
  async add(setup: IntegrationSetup, actor: string): Promise<IntegrationWithSecret> {
    const name = setup.name.trim();
    const problem = nameProblem(name);
    if (problem !== null) throw new InvalidInputError(`invalid integration name: ${problem}`);
    if (name.includes('/')) throw new InvalidInputError(`an integration's name has no client part: ${quoted(name)} has a '/'`);
    if (RESERVED.has(name)) throw new InvalidInputError(`${quoted(name)} is reserved: pick another name`);
    if (!(INTEGRATION_KINDS as readonly string[]).includes(setup.kind)) throw new InvalidInputError(`unknown kind ${quoted(setup.kind)}: use ${INTEGRATION_KINDS.join(', ')}`);
    if (isOutboundKind(setup.kind)) return this.addOutbound(name, setup, actor);
    if (setup.url || setup.on) throw new InvalidInputError(`--url and --on are for integrations out (${OUTBOUND_KINDS.join(', ')}); a ${setup.kind} integration takes deliveries in`);
    if (!setup.to) throw new InvalidInputError(`a ${setup.kind} integration needs --to ADDRESS: where its deliveries go`);
    const to = setup.to.trim();
    if (to === REPO_FROM_PAYLOAD) {
      if (setup.kind !== 'github') throw new InvalidInputError(`--to ${REPO_FROM_PAYLOAD} takes the repo from a GitHub delivery: only a github integration has one`);
    } else if (setup.channel === undefined || setup.channel === null || setup.channel === '') {
      await this.mail.checkAddress(to, 'Nothing was set up');
    }
    const severity = parseSeverity(setup.severity ?? 'alert');
    const nowMs = this.now();
    const record: IntegrationRecord = {
      name,
      kind: setup.kind,
      target: to,
      channel: setup.channel ? setup.channel.trim() : null,
      severity,
      secret: newIntegrationSecret(),
      previousSecret: null,
      previousUntil: null,
      createdAt: formatStamp(nowMs * 1000),
      url: null,
      on: null,
    };
    if ((await this.store.getAgent(name)) !== null) throw new ConflictError(`${quoted(name)} is an agent's name on the bus: pick another`);
    if (!(await this.store.addIntegration(record, registrationsFor(name, '~', true)))) throw new ConflictError(`an integration named ${quoted(name)} exists already (integration rotate ${name} for a new secret)`);
    this.audit.append([integrationRow(record.createdAt, actor, 'add', name, `integration add: ${name} (${record.kind}) to ${record.channel ? `#${record.channel}` : to}`)]);
    return { ...view(record, nowMs), secret: record.secret };
  }

  /** An integration out: a receiver and what it is sent; a webhook's secret signs each delivery. */
  private async addOutbound(name: string, setup: IntegrationSetup, actor: string): Promise<IntegrationWithSecret> {
    if (setup.to) throw new InvalidInputError(`--to is for integrations in; a ${setup.kind} integration is sent what --on says`);
    if (!setup.url || !setup.on) throw new InvalidInputError(`a ${setup.kind} integration needs --url URL and --on mail:PERSON, notice:SEVERITY or task`);
    const url = parseOutboundUrl(setup.url);
    const on = parseOn(setup.on);
    const channel = setup.channel ? setup.channel.trim() : null;
    if (channel !== null && on.event !== 'notice') throw new InvalidInputError('--channel narrows notice:SEVERITY to one channel; mail and tasks have none');
    const nowMs = this.now();
    const record: IntegrationRecord = {
      name,
      kind: setup.kind,
      target: '',
      channel,
      severity: on.event === 'notice' ? on.severity : 'info',
      // Only a webhook signs what it posts; the others' URL is their credential.
      secret: setup.kind === 'webhook' ? newIntegrationSecret() : '',
      previousSecret: null,
      previousUntil: null,
      createdAt: formatStamp(nowMs * 1000),
      url,
      on: setup.on.trim(),
    };
    if (!(await this.store.addIntegration(record, []))) throw new ConflictError(`an integration named ${quoted(name)} exists already`);
    this.audit.append([integrationRow(record.createdAt, actor, 'add', name, `integration add: ${name} (${record.kind}) on ${record.on}${channel === null ? '' : ` #${channel}`} to ${maskUrl(url)}`)]);
    return { ...view(record, nowMs), secret: record.secret };
  }

  async list(): Promise<IntegrationView[]> {
    const now = this.now();
    return (await this.store.integrations()).map((record) => view(record, now));
  }

  /** A new secret; the current one is still accepted for `graceMs`. */
  async rotate(name: string, graceMs: number, actor: string): Promise<IntegrationWithSecret> {
    const secret = newIntegrationSecret();
    const nowMs = this.now();
    const until = formatStamp((nowMs + graceMs) * 1000);
    if (!(await this.store.rotateIntegration(name, secret, until))) throw new NotFoundError(`no integration named ${quoted(name)}: integration list shows them`);
    this.audit.append([integrationRow(formatStamp(nowMs * 1000), actor, 'rotate', name, `integration rotate: ${name}; the old secret is accepted until ${until}`)]);
    const record = (await this.store.integration(name)) as IntegrationRecord;
    return { ...view(record, nowMs), secret };
  }

  /** Every integration with how its deliveries out stand. */
  async standing(): Promise<IntegrationStanding[]> {
    const [listed, counts] = await Promise.all([this.list(), this.store.outboxCounts()]);
    const byName = new Map<string, OutboxCounts>(counts.map((row) => [row.integration, row]));
    return listed.map((row) => {
      const count = byName.get(row.name);
      return { ...row, queued: count?.queued ?? 0, failed: count?.failed ?? 0, delivered: count?.delivered ?? 0, last_delivered_at: count?.lastDeliveredAt ?? null };
    });
  }

  /** The newest events out, of one integration or all, in one state or any. */
  async outbox(filter: { integration?: string | null; state?: string | null; limit?: number } = {}): Promise<OutboxView[]> {
    if (filter.state && !['queued', 'delivered', 'failed'].includes(filter.state)) throw new InvalidInputError(`unknown state ${quoted(filter.state)}: use queued, delivered or failed`);
    const rows = await this.store.outbox({ integration: filter.integration ?? null, state: filter.state ?? null, limit: filter.limit ?? 50 });
    return rows.map((row) => ({
      event_id: row.eventId,
      integration: row.integration,
      event: row.event,
      message_id: row.messageId,
      state: row.state,
      attempts: row.attempts,
      created_at: row.createdAt,
      next_at: row.state === 'queued' ? row.nextAt : null,
      last_status: row.lastStatus,
      last_error: row.lastError,
      finished_at: row.finishedAt,
    }));
  }

  /** A failed event, tried again now (its day of tries afresh). */
  async retry(eventId: string, actor: string): Promise<{ event_id: string; queued: true }> {
    const ts = formatStamp(this.now() * 1000);
    if (!(await this.store.retryOutbox(eventId, ts))) throw new NotFoundError(`no failed or queued event ${quoted(eventId)}: integration outbox --state failed lists them`);
    this.audit.append([integrationRow(ts, actor, 'retry', '', `integration retry: event ${eventId}`, { event_id: eventId })]);
    return { event_id: eventId, queued: true };
  }

  /** Send an outbound integration a test event now, from this process: what its receiver answered. */
  async test(name: string, actor: string): Promise<Settled> {
    const record = await this.store.integration(name);
    if (record === null) throw new NotFoundError(`no integration named ${quoted(name)}: integration list shows them`);
    if (record.url === null) throw new InvalidInputError(`${quoted(name)} takes deliveries in; only an integration out (${OUTBOUND_KINDS.join(', ')}) can be sent a test`);
    const ts = formatStamp(this.now() * 1000);
    const event = testEvent(name, ts);
    this.audit.append([integrationRow(ts, actor, 'test', name, `integration test: ${name}`, { event_id: event.eventId })]);
    return this.delivery.deliverNow(event);
  }

  async remove(name: string, actor: string): Promise<{ name: string; removed: true }> {
    if (!(await this.store.removeIntegration(name))) throw new NotFoundError(`no integration named ${quoted(name)}: integration list shows them`);
    this.audit.append([integrationRow(formatStamp(this.now() * 1000), actor, 'remove', name, `integration remove: ${name}`)]);
    return { name, removed: true };
  }

  /** Take one delivery: verified, deduplicated, and sent on as mail or a notice. */
  async receive(delivery: Delivery): Promise<DeliveryAnswer> {
    const nowMs = this.now();
    const ts = formatStamp(nowMs * 1000);
    const record = await this.store.integration(delivery.name);
    if (record === null) return { status: 404, body: { ok: false, result: 'unknown', detail: `no integration named ${quoted(delivery.name)}` } };
    const secrets = [record.secret, ...(record.previousSecret !== null && record.previousUntil !== null && stampToMillis(record.previousUntil) > nowMs ? [record.previousSecret] : [])];
    const { headers, body } = delivery;
    const verdict =
      record.kind === 'github'
        ? verifyGithub(headers[SIGNATURE_HEADERS.github], body, secrets)
        : verifyGeneric({ signature: headers[SIGNATURE_HEADERS.signature], timestamp: headers[SIGNATURE_HEADERS.timestamp] }, body, secrets, Math.floor(nowMs / 1000));
    if (!verdict.ok) {
      this.audit.append([integrationRow(ts, record.name, 'refused', record.name, `integration ${record.name}: delivery refused: ${verdict.reason}`)]);
      return { status: 401, body: { ok: false, result: 'refused', detail: verdict.reason } };
    }
    const deliveryId = (record.kind === 'github' ? headers[SIGNATURE_HEADERS.githubDelivery] : headers[SIGNATURE_HEADERS.delivery])?.trim().slice(0, 200) || null;
    if (deliveryId !== null && !(await this.store.takeDelivery(record.name, deliveryId, ts, formatStamp((nowMs - DELIVERY_MEMORY_MS) * 1000)))) {
      return { status: 200, body: { ok: true, result: 'duplicate', detail: `delivery ${deliveryId} was taken already; nothing sent again` } };
    }
    try {
      return await this.forward(record, delivery);
    } catch (error) {
      if (!isBusError(error)) throw error;
      // A delivery for nobody on the bus is answered as taken (the sender could do nothing better), and audited.
      const dropped = error instanceof DroppedDelivery || error instanceof UnknownRecipientError;
      this.audit.append([integrationRow(ts, record.name, dropped ? 'dropped' : 'refused', record.name, `integration ${record.name}: delivery ${dropped ? 'dropped' : 'refused'}: ${error.message}`, { delivery: deliveryId })]);
      return dropped ? { status: 202, body: { ok: false, result: 'dropped', detail: error.message } } : { status: 400, body: { ok: false, result: 'bad-request', detail: error.message } };
    }
  }

  /** A verified delivery, sent on: as the integration, and only where it was set up to go. */
  private async forward(record: IntegrationRecord, delivery: Delivery): Promise<DeliveryAnswer> {
    let text: string;
    let severity: Severity;
    let to = record.target;
    let threadId: string | null = null;
    let channel = record.channel;
    let ttl: string | number | null = null;
    if (record.kind === 'github') {
      const event = delivery.headers[SIGNATURE_HEADERS.githubEvent] ?? 'unknown';
      let payload: unknown;
      try {
        payload = JSON.parse(delivery.body.toString('utf8'));
      } catch {
        throw new InvalidInputError('a GitHub delivery must be JSON (content type application/json)');
      }
      const summary = describeGithubEvent(event, payload);
      text = summary.text;
      severity = summary.failure ? (record.severity as Severity) : 'info';
      if (to === REPO_FROM_PAYLOAD) {
        if (summary.repo === null) throw new DroppedDelivery(`the ${event} delivery names no repository`);
        to = summary.repo;
      }
    } else {
      const message = genericMessage(delivery.body);
      if (message.to !== null && message.to !== record.target) throw new InvalidInputError(`this integration sends only to ${quoted(record.target)}, not ${quoted(message.to)}`);
      if (message.channel !== null && message.channel !== record.channel) throw new InvalidInputError(`this integration publishes only ${record.channel === null ? 'mail' : `to #${record.channel}`}, not to #${message.channel}`);
      text = message.body;
      severity = message.severity === null ? (record.severity as Severity) : parseSeverity(message.severity);
      threadId = message.threadId;
      channel = record.channel;
      ttl = message.ttl;
    }
    if (channel !== null) {
      const published = await this.notices.publish({ channel, message: text, severity, ttl, source: record.name }, record.name);
      return { status: 200, body: { ok: true, result: 'published', detail: `published to #${channel}`, notice_id: published.notice_id } };
    }
    if (to !== BROADCAST && to !== record.target && !(await this.isAddress(to))) throw new DroppedDelivery(`nobody holds ${quoted(to)} on the bus`);
    const sent = await this.mail.send({ from: record.name, to, body: text, threadId, urgent: severity === 'critical' });
    return { status: 200, body: { ok: true, result: 'sent', detail: `sent to ${to}`, message_ids: sent.message_ids } };
  }

  private async isAddress(to: string): Promise<boolean> {
    try {
      await this.mail.checkAddress(to, 'Nothing was sent');
      return true;
    } catch {
      return false;
    }
  }
}

/** A verified delivery nobody can be sent (its repo unknown on the bus): answered 202, with an audit row. */
class DroppedDelivery extends BusError {}
