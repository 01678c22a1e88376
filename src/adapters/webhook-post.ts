/**
 * Posting an outbound event: the request each kind of receiver expects (a signed agent-bus webhook,
 * Slack's incoming webhook, Discord's, ntfy's topic), made with Node's own fetch, a timeout, and no
 * redirect followed. Bodies are agents' text: sent as data, with Slack's markup escaped and
 * Discord's mentions off, and cut to what each receiver takes.
 */
import type { OutboundEvent, OutboundKind } from '../core/outbound.js';
import type { Post, PostResult } from '../core/outbound-delivery.js';
import { signDelivery } from '../core/webhook-signature.js';
import type { IntegrationRecord } from '../model/records.js';

/** How long a receiver has to answer. */
export const POST_TIMEOUT_MS = 10_000;

export interface OutboundRequest {
  headers: Record<string, string>;
  body: string;
}

const DISCORD_MAX = 2000;
const SLACK_MAX = 3000;
const NTFY_MAX_BYTES = 4000;

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

function cutBytes(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text, 'utf8') <= maxBytes) return text;
  let kept = text.slice(0, maxBytes);
  while (Buffer.byteLength(kept, 'utf8') > maxBytes - 3) kept = kept.slice(0, -1);
  return `${kept}…`;
}

function field(event: OutboundEvent, key: string): string {
  const value = event.data[key];
  return typeof value === 'string' ? value : '';
}

/** The one line that says what happened, before the body. */
export function headline(event: OutboundEvent): string {
  switch (event.type) {
    case 'mail':
      return `${event.data.urgent === true ? 'Urgent mail' : 'Mail'} from ${field(event, 'from')} to ${field(event, 'to')}`;
    case 'task':
      return `Task ${field(event, 'task_id')} ${field(event, 'task_state')}: from ${field(event, 'from')}`;
    case 'notice':
      return `${field(event, 'severity').toUpperCase()} notice${event.data.channel ? ` on #${field(event, 'channel')}` : ''} from ${field(event, 'source')}${event.data.title ? `: ${field(event, 'title')}` : ''}`;
    default:
      return 'agent-bus test';
  }
}

function slackEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** ntfy's priority: an urgent mail or a critical notice rings loudest. */
function ntfyPriority(event: OutboundEvent): string {
  if (event.data.urgent === true || event.data.severity === 'critical') return '5';
  if (event.data.severity === 'alert' || event.data.task_state === 'failed') return '4';
  return '3';
}

/** A header value is ASCII here: ntfy's title falls back to plain letters rather than break the request. */
function asciiHeader(text: string): string {
  return cut(text.replace(/[^\x20-\x7e]/g, '?'), 200);
}

/** The request for `event` to an integration of `kind`, signed with `secret` at `nowSeconds` where the kind signs. */
export function outboundRequest(kind: OutboundKind, event: OutboundEvent, secret: string, nowSeconds: number): OutboundRequest {
  const line = headline(event);
  const body = field(event, 'body');
  switch (kind) {
    case 'slack':
      return { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: cut(`*${slackEscape(line)}*\n${slackEscape(body)}`, SLACK_MAX) }) };
    case 'discord':
      return { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ content: cut(`**${line}**\n${body}`, DISCORD_MAX), allowed_mentions: { parse: [] } }) };
    case 'ntfy':
      return { headers: { 'content-type': 'text/plain; charset=utf-8', title: asciiHeader(line), priority: ntfyPriority(event), tags: event.type }, body: cutBytes(body, NTFY_MAX_BYTES) };
    default: {
      const json = JSON.stringify(event);
      return {
        headers: {
          'content-type': 'application/json',
          'x-agent-bus-delivery': event.id,
          'x-agent-bus-event': event.type,
          'x-agent-bus-timestamp': String(nowSeconds),
          'x-agent-bus-signature': signDelivery(secret, nowSeconds, json),
        },
        body: json,
      };
    }
  }
}

function retryAfterMs(header: string | null): number | null {
  if (header === null) return null;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? null : Math.max(0, at - Date.now());
}

/** Post with Node's fetch: never throws; a timeout or a refused connection is a result with no status. */
export const postOutbound: Post = async (integration: IntegrationRecord, event: OutboundEvent): Promise<PostResult> => {
  const request = outboundRequest(integration.kind as OutboundKind, event, integration.secret, Math.floor(Date.now() / 1000));
  try {
    const response = await fetch(integration.url as string, { method: 'POST', headers: request.headers, body: request.body, redirect: 'manual', signal: AbortSignal.timeout(POST_TIMEOUT_MS) });
    // The body is not wanted; read it so the connection goes back to the pool.
    const answer = (await response.text().catch(() => '')).slice(0, 200);
    const ok = response.status >= 200 && response.status < 300;
    return { status: response.status, error: ok ? null : `status ${response.status}${answer === '' ? '' : `: ${answer.replace(/\s+/g, ' ')}`}`, retryAfterMs: retryAfterMs(response.headers.get('retry-after')) };
  } catch (error) {
    const cause = error instanceof Error && error.name === 'TimeoutError' ? `no answer within ${POST_TIMEOUT_MS / 1000} s` : error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error);
    return { status: null, error: cause, retryAfterMs: null };
  }
};
