/** The rules of integrations out, and the requests each kind of receiver is sent. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { outboundRequest } from '../../src/adapters/webhook-post.js';
import { backoffMs, eventOf, mailEvents, maskUrl, MAX_BACKOFF_MS, noticeEvents, parseOn, testEvent, type OutboundEvent } from '../../src/core/outbound.js';
import type { MessageRecord } from '../../src/model/records.js';
import { verifyGeneric } from '../../src/core/webhook-signature.js';

const mail = (body: string, urgent = false): OutboundEvent => ({
  type: 'mail',
  id: '01a2-event',
  timestamp: '2026-12-05T10:00:00.000000Z',
  data: { message_id: 'm-1', from: 'shop/claude', to: 'human', body, urgent },
});

test('--on is mail:PERSON, notice:SEVERITY or task; anything else is refused in one line', () => {
  assert.deepEqual(parseOn('mail:human'), { event: 'mail', person: 'human' });
  assert.deepEqual(parseOn('notice:critical'), { event: 'notice', severity: 'critical' });
  assert.deepEqual(parseOn(' task '), { event: 'task' });
  assert.throws(() => parseOn('mail:shop/claude'), /takes a person's name/);
  assert.throws(() => parseOn('notice:loud'), /unknown severity 'loud'/);
  assert.throws(() => parseOn('task:x'), /unknown --on 'task:x'/);
  assert.throws(() => parseOn('mail'), /unknown --on 'mail'/);
});

test("a receiver's URL is shown with its path and query masked (Slack and Discord tokens, ntfy topics)", () => {
  assert.equal(maskUrl('https://hooks.slack.com/services/T000/B000/XXXX'), 'https://hooks.slack.com/…');
  assert.equal(maskUrl('https://ntfy.sh/my-secret-topic'), 'https://ntfy.sh/…');
  assert.equal(maskUrl('http://127.0.0.1:8080/'), 'http://127.0.0.1:8080/');
  assert.equal(maskUrl('https://user:pw@example.com/'), 'https://example.com/…');
});

test('a retry waits longer each time, jittered by up to a half, capped, and longer when the receiver asks', () => {
  assert.equal(backoffMs(1, 0), 1000);
  assert.equal(backoffMs(1, 1), 500);
  assert.equal(backoffMs(4, 0), 8000);
  assert.equal(backoffMs(40, 0), MAX_BACKOFF_MS);
  assert.equal(backoffMs(1, 0, 30_000), 30_000, 'Retry-After wins when longer');
  assert.equal(backoffMs(1, 0, 24 * 3600_000), MAX_BACKOFF_MS, 'but never past the cap');
});

test('a webhook is the event as JSON, signed so the generic verifier takes it, with the event id as its delivery id', () => {
  const request = outboundRequest('webhook', mail('hello'), 'abwh_secret', 1_796_000_000);
  assert.equal(request.headers['x-agent-bus-delivery'], '01a2-event');
  assert.equal(request.headers['x-agent-bus-event'], 'mail');
  assert.deepEqual(JSON.parse(request.body), mail('hello'));
  const headers = { signature: request.headers['x-agent-bus-signature'], timestamp: request.headers['x-agent-bus-timestamp'] };
  assert.deepEqual(verifyGeneric(headers, Buffer.from(request.body), ['abwh_secret'], 1_796_000_010), { ok: true });
  assert.equal(verifyGeneric(headers, Buffer.from(request.body), ['another'], 1_796_000_010).ok, false);
});

test("Slack gets text with its markup escaped; Discord content capped at 2,000 with mentions off; ntfy the body with a title and priority", () => {
  const slack = JSON.parse(outboundRequest('slack', mail('<!channel> a & b'), '', 0).body) as { text: string };
  assert.equal(slack.text, '*Mail from shop/claude to human*\n&lt;!channel&gt; a &amp; b');
  const discord = JSON.parse(outboundRequest('discord', mail(`@everyone ${'x'.repeat(3000)}`), '', 0).body) as { content: string; allowed_mentions: unknown };
  assert.equal(discord.content.length, 2000);
  assert.ok(discord.content.startsWith('**Mail from shop/claude to human**\n@everyone'));
  assert.deepEqual(discord.allowed_mentions, { parse: [] });
  const ntfy = outboundRequest('ntfy', mail('ünïcode body '.repeat(1000), true), '', 0);
  assert.equal(ntfy.headers.title, 'Urgent mail from shop/claude to human');
  assert.equal(ntfy.headers.priority, '5', 'urgent mail rings loudest');
  assert.ok(Buffer.byteLength(ntfy.body) <= 4000, 'cut below where ntfy makes an attachment');
  const notice: OutboundEvent = { type: 'notice', id: 'n', timestamp: 't', data: { severity: 'alert', channel: 'ops', source: 'ci', title: 'Ünicode', body: 'b' } };
  const noticed = outboundRequest('ntfy', notice, '', 0);
  assert.deepEqual([noticed.headers.title, noticed.headers.priority, noticed.headers.tags], ['ALERT notice on #ops from ci: ?nicode', '4', 'notice']);
});

test('a send queues each event once for every integration that wants it, naming its message; never back to the integration that sent it; a notice is carried whole', () => {
  const at = '2026-12-05T10:00:00.000000Z';
  const outlets = [
    { name: 'people', on: 'mail:human', channel: null },
    { name: 'archive', on: 'mail:human', channel: null },
    { name: 'results', on: 'task', channel: null },
    { name: 'pager', on: 'notice:alert', channel: 'ops' },
    { name: 'future', on: 'mail:human:newer-syntax', channel: null },
  ];
  const message = (overrides: Partial<MessageRecord>): MessageRecord =>
    ({ messageId: 'm1', fromAgent: 'shop/claude', toAgent: 'human', body: 'hi', threadId: 't1', sentAt: at, addressedTo: 'human', fanoutId: null, toGroup: null, priority: null, taskId: null, taskState: null, ...overrides }) as MessageRecord;
  assert.deepEqual(mailEvents([message({}), message({ messageId: 'm2', toAgent: 'shop/codex' })], outlets, at), [{ event: 'mail', message: 'm1', integrations: ['people', 'archive'], createdAt: at }]);
  assert.deepEqual(mailEvents([message({ fromAgent: 'people' })], outlets, at), [{ event: 'mail', message: 'm1', integrations: ['archive'], createdAt: at }], "an integration's own mail never goes back to it");
  assert.deepEqual(mailEvents([message({ toAgent: 'shop/codex', taskId: 'task-1', taskState: 'done' })], outlets, at), [{ event: 'task', message: 'm1', integrations: ['results'], createdAt: at }]);
  const notice = { noticeId: 'n1', channel: 'ops', severity: 'critical', title: null, body: 'down', source: 'ci', priority: 5, contentHash: 'h', createdAt: at, expiresAt: at } as const;
  const [event] = noticeEvents(notice as never, outlets, at);
  assert.deepEqual([event?.event, event?.integrations, event?.event === 'notice' ? event.body.data.body : null], ['notice', ['pager'], 'down']);
  assert.deepEqual(noticeEvents({ ...notice, channel: 'builds' } as never, outlets, at), [], 'another channel');
  // A queued row's payload leaves its id out: the event id is given back as the event's id.
  const queued = testEvent('people', at);
  assert.equal((JSON.parse(queued.payload) as { id?: string }).id, undefined);
  assert.deepEqual(eventOf(queued), { type: 'test', id: queued.eventId, timestamp: at, data: { body: 'agent-bus: a test delivery for people' } });
});
