/**
 * Integrations out, over a real hub and a real HTTP receiver on loopback: mail to a person, notices
 * and task results are queued with what made them and posted by the hub, signed; a receiver that
 * fails is tried again until it takes the event, once; events queued when the hub is killed go out
 * after it restarts; `integration test`, `outbox` and `retry` from the CLI.
 */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { agentEnv, register } from '../helpers/agents.js';
import { json, readAudit, runCli, runCliAsync, tempBus, type TempBus, messageLines } from '../helpers/bus-env.js';
import { startHub, withHub } from '../helpers/hub.js';
import { connect } from '../helpers/mcp.js';
import { waitUntil } from '../helpers/wait.js';

interface Received {
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
  at: number;
}

interface Receiver {
  url: string;
  received: Received[];
  /** The status each next request is answered with (then 200). */
  answers: number[];
  close(): Promise<void>;
}

async function receiver(port = 0): Promise<Receiver> {
  const received: Received[] = [];
  const answers: number[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const status = answers.shift() ?? 200;
      if (status === 200) received.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
      res.writeHead(status, { 'content-type': 'text/plain' }).end(status === 200 ? 'ok' : 'not now');
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${bound}`,
    received,
    answers,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function add(bus: TempBus, args: string[]): { name: string; secret: string; url: string; direction: string; on: string } {
  const made = runCli(['integration', 'add', ...args, '--json'], { env: bus.env });
  assert.equal(made.code, 0, made.stderr);
  return json(made);
}

/** Where file-system events run out (a busy test machine), the hub's outbox loop polls: quickly here. */
const POLL = { AGENT_BUS_WATCH_POLL_SECONDS: '0.2' };

const sign = (secret: string, timestamp: string, body: string): string => `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;

test('mail to human reaches a webhook within a second, signed so it verifies; its copy is delivered by webhook; a notice and a task result go to theirs; list masks the URLs', withHub(POLL, async (bus, hub) => {
  const claude = agentEnv(bus, 'shop/claude', '/repos/shop');
  register(claude);
  register(agentEnv(bus, 'human', '~'));
  register(agentEnv(bus, 'shop/codex', '/repos/shop'));
  const sink = await receiver();
  try {
    const hook = add(bus, ['people', '--kind', 'webhook', '--url', `${sink.url}/hooks/secret-path`, '--on', 'mail:human']);
    assert.equal(hook.direction, 'out');
    assert.match(hook.secret, /^abwh_/);
    assert.equal(hook.url, 'http://127.0.0.1:' + new URL(sink.url).port + '/…', 'the URL is shown masked');
    const alarms = add(bus, ['alarms', '--kind', 'slack', '--url', `${sink.url}/slack/T0/B0/XYZ`, '--on', 'notice:alert', '--channel', 'ops']);
    assert.equal(alarms.secret, '', 'Slack signs nothing: no secret');
    add(bus, ['tasks', '--kind', 'discord', '--url', `${sink.url}/discord/1/tok`, '--on', 'task']);

    const sentAt = Date.now();
    const sent = json<{ message_id: string }>(runCli(['send', 'the deploy is <b>done</b> @everyone', '--to', 'human', '--json'], { env: claude }));
    await waitUntil(() => sink.received.some((request) => request.path === '/hooks/secret-path'), () => `the webhook delivery: ${runCli(['integration', 'outbox', '--json'], { env: bus.env }).stdout} ${JSON.stringify(sink.received.map((request) => request.path))} ${hub.output()}`, 5000, 10);
    const delivery = sink.received.find((request) => request.path === '/hooks/secret-path') as Received;
    assert.ok(delivery.at - sentAt <= 1000, `posted within a second of the send (${delivery.at - sentAt} ms)`);
    const timestamp = String(delivery.headers['x-agent-bus-timestamp']);
    assert.equal(delivery.headers['x-agent-bus-signature'], sign(hook.secret, timestamp, delivery.body), 'the signature verifies with the secret printed at add');
    const event = JSON.parse(delivery.body) as { type: string; id: string; data: Record<string, unknown> };
    assert.equal(event.type, 'mail');
    assert.equal(delivery.headers['x-agent-bus-delivery'], event.id);
    assert.deepEqual([event.data.from, event.data.to, event.data.body, event.data.message_id], ['shop/claude', 'human', 'the deploy is <b>done</b> @everyone', sent.message_id]);
    await waitUntil(() => bus.rows<{ via: string | null }>(`SELECT delivered_via AS via FROM messages WHERE message_id = '${sent.message_id}'`)[0]?.via === 'webhook', "human's copy delivered by webhook");

    // A notice on ops at alert goes to Slack; an info one, or one elsewhere, does not.
    assert.equal(runCli(['channel', 'publish', 'ops', 'db is slow', '-s', 'info'], { env: bus.env }).code, 0);
    assert.equal(runCli(['channel', 'publish', 'builds', 'disk full', '-s', 'critical'], { env: bus.env }).code, 0);
    assert.equal(runCli(['channel', 'publish', 'ops', 'db is down', '-s', 'alert'], { env: bus.env }).code, 0);
    await waitUntil(() => sink.received.some((request) => request.path.startsWith('/slack/')), () => `the Slack post: ${runCli(['integration', 'outbox', '--json'], { env: bus.env }).stdout} ${Date.now()} ${hub.output()}`);
    // A task handed over and closed: its result goes to Discord, with mentions off.
    const task = runCli(['task', 'add', 'ship it', '--to', 'shop/codex'], { env: claude });
    assert.equal(task.code, 0, task.stderr);
    const codex = agentEnv(bus, 'shop/codex', '/repos/shop');
    assert.equal(runCli(['task', 'take', task.stdout.trim()], { env: codex }).code, 0);
    assert.equal(runCli(['task', 'done', task.stdout.trim(), '--result', 'shipped v2'], { env: codex }).code, 0);
    await waitUntil(() => sink.received.some((request) => request.path.startsWith('/discord/')), () => `the Discord post: ${hub.output()}`);
    const slack = sink.received.filter((request) => request.path.startsWith('/slack/'));
    assert.equal(slack.length, 1, 'one notice was severe enough and on its channel');
    assert.match((JSON.parse(slack[0]?.body ?? '{}') as { text: string }).text, /^\*ALERT notice on #ops from .*\*\ndb is down$/);
    const discord = JSON.parse(sink.received.find((request) => request.path.startsWith('/discord/'))?.body ?? '{}') as { content: string; allowed_mentions: unknown };
    assert.deepEqual(discord.allowed_mentions, { parse: [] });
    assert.match(discord.content, /^\*\*Task \S+ done: from shop\/codex\*\*\n[\s\S]*shipped v2/);

    const listed = runCli(['integration', 'list'], { env: bus.env });
    assert.equal(listed.code, 0, listed.stderr);
    assert.ok(!listed.stdout.includes('secret-path') && !listed.stdout.includes('XYZ') && !listed.stdout.includes('tok'), `no URL in clear: ${listed.stdout}`);
    assert.match(listed.stdout, /^people {2}webhook {2}on mail:human {2}http:\/\/127\.0\.0\.1:\d+\/… {2}\(1 delivered, 0 queued, 0 failed\)$/m);
    const audit = readAudit(bus.audit).filter((row) => row.op === 'integration' && row.event === 'delivered');
    assert.deepEqual(audit.map((row) => row.integration).sort(), ['alarms', 'people', 'tasks']);
    assert.ok(!JSON.stringify(readAudit(bus.audit)).includes('secret-path'), 'the audit log holds no receiver URL');
    assert.ok(!hub.output().includes('secret-path'), 'nor does the hub print one');
  } finally {
    await sink.close();
  }
}));

test('a receiver that fails three times and then answers gets the event exactly once; a failed event is shown, retried from the CLI, and delivered', withHub(POLL, async (bus, hub) => {
  const claude = agentEnv(bus, 'shop/claude', '/repos/shop');
  register(claude);
  register(agentEnv(bus, 'human', '~'));
  const sink = await receiver();
  try {
    add(bus, ['people', '--kind', 'webhook', '--url', `${sink.url}/in`, '--on', 'mail:human']);
    sink.answers.push(500, 503, 502);
    assert.equal(runCli(['send', 'third time lucky', '--to', 'human'], { env: claude }).code, 0);
    await waitUntil(() => sink.received.length > 0, () => `the fourth attempt: ${runCli(['integration', 'outbox', '--json'], { env: bus.env }).stdout} ${hub.output()}`, 20_000);
    const outbox = json<Array<{ state: string; attempts: number; last_status: number }>>(runCli(['integration', 'outbox', 'people', '--json'], { env: bus.env }));
    await waitUntil(() => json<Array<{ state: string }>>(runCli(['integration', 'outbox', 'people', '--json'], { env: bus.env }))[0]?.state === 'delivered', 'the event settled as delivered');
    const settled = json<Array<{ state: string; attempts: number; last_status: number }>>(runCli(['integration', 'outbox', 'people', '--json'], { env: bus.env }));
    assert.deepEqual(settled.map((row) => [row.state, row.attempts, row.last_status]), [['delivered', 4, 200]], JSON.stringify(outbox));
    assert.equal(sink.received.length, 1, 'taken once');
    assert.equal(JSON.parse(sink.received[0]?.body ?? '{}').data.body, 'third time lucky');

    // A receiver that answers 410 will never take it: failed at once, shown; retry sends it again.
    sink.answers.push(410);
    assert.equal(runCli(['send', 'gone for good', '--to', 'human'], { env: claude }).code, 0);
    await waitUntil(() => json<unknown[]>(runCli(['integration', 'outbox', '--state', 'failed', '--json'], { env: bus.env })).length === 1, 'the event failed');
    const failed = json<Array<{ event_id: string; last_status: number; last_error: string }>>(runCli(['integration', 'outbox', '--state', 'failed', '--json'], { env: bus.env }))[0];
    assert.equal(failed?.last_status, 410);
    const doctor = runCli(['doctor'], { env: bus.env });
    assert.match(doctor.stdout, /people: 1 failed/);
    const retried = runCli(['integration', 'retry', failed?.event_id as string], { env: bus.env });
    assert.equal(retried.code, 0, retried.stderr);
    await waitUntil(() => sink.received.length === 2, 'the retried event');
    assert.equal(JSON.parse(sink.received[1]?.body ?? '{}').data.body, 'gone for good');
    const again = runCli(['integration', 'retry', 'no-such-event'], { env: bus.env });
    assert.deepEqual([again.code, again.stderr], [1, "agent-bus: no failed or queued event 'no-such-event': integration outbox --state failed lists them\n"]);
  } finally {
    await sink.close();
  }
}));

test("a receiver that hangs holds up only its own integration's events, and one that refuses only its own: the others go out within a second meanwhile", withHub(POLL, async (bus, hub) => {
  const claude = agentEnv(bus, 'shop/claude', '/repos/shop');
  register(claude);
  register(agentEnv(bus, 'human', '~'));
  const sink = await receiver();
  const hanging: Server = createServer(() => undefined);
  await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
  const refusing = await receiver();
  const refusedUrl = refusing.url;
  await refusing.close();
  try {
    add(bus, ['stuck', '--kind', 'webhook', '--url', `http://127.0.0.1:${(hanging.address() as AddressInfo).port}/in`, '--on', 'mail:human']);
    add(bus, ['down', '--kind', 'webhook', '--url', `${refusedUrl}/in`, '--on', 'mail:human']);
    add(bus, ['people', '--kind', 'webhook', '--url', `${sink.url}/in`, '--on', 'mail:human']);
    for (let index = 1; index <= 3; index++) {
      const sentAt = Date.now();
      assert.equal(runCli(['send', `mail ${index}`, '--to', 'human'], { env: claude }).code, 0);
      await waitUntil(() => sink.received.length === index, () => `mail ${index} to people: ${runCli(['integration', 'outbox', '--json'], { env: bus.env }).stdout} ${hub.output()}`, 5000, 10);
      const at = (sink.received[index - 1] as Received).at;
      // A post has 10 seconds: were the stuck integration's attempt waited for, this would take that long.
      assert.ok(at - sentAt <= 1000, `mail ${index} posted to people within a second while stuck's post hangs (${at - sentAt} ms)`);
    }
    const outbox = json<Array<{ integration: string; state: string }>>(runCli(['integration', 'outbox', '--json'], { env: bus.env }));
    assert.deepEqual(outbox.filter((event) => event.state === 'delivered').map((event) => event.integration), ['people', 'people', 'people']);
    assert.equal(outbox.filter((event) => event.integration !== 'people' && event.state === 'queued').length, 6, "stuck's and down's events wait their turn");
  } finally {
    hanging.closeAllConnections();
    await new Promise<void>((resolve) => hanging.close(() => resolve()));
    await sink.close();
  }
}));

test('events queued while the hub is down, and while it is killed mid-retry, go out once it runs again', async () => {
  const bus = tempBus({});
  const sink = await receiver();
  const port = Number(new URL(sink.url).port);
  try {
    const claude = agentEnv(bus, 'shop/claude', '/repos/shop');
    register(claude);
    register(agentEnv(bus, 'human', '~'));
    add(bus, ['people', '--kind', 'webhook', '--url', `${sink.url}/in`, '--on', 'mail:human']);
    // No hub, no long-running process: the send only queues.
    assert.equal(runCli(['send', 'while nobody serves', '--to', 'human'], { env: claude }).code, 0);
    assert.deepEqual(json<Array<{ state: string; attempts: number }>>(runCli(['integration', 'outbox', '--json'], { env: bus.env })).map((row) => [row.state, row.attempts]), [['queued', 0]]);
    // The receiver down: the hub tries, fails, and is killed before it can try again.
    await sink.close();
    const first = await startHub(bus, POLL);
    await waitUntil(() => json<Array<{ attempts: number }>>(runCli(['integration', 'outbox', '--json'], { env: bus.env }))[0]?.attempts === 1, 'a first attempt');
    first.process.kill('SIGKILL');
    await first.stop();
    assert.equal(runCli(['send', 'while the hub is dead', '--to', 'human'], { env: claude }).code, 0);
    const back = await receiver(port);
    const second = await startHub(bus, POLL);
    try {
      await waitUntil(() => back.received.length === 2, 'both events, after the restart', 15_000);
      assert.deepEqual(back.received.map((request) => JSON.parse(request.body).data.body).sort(), ['while nobody serves', 'while the hub is dead']);
    } finally {
      await second.stop();
      await back.close();
    }
  } finally {
    bus.cleanup();
  }
});

test('a hub killed while an attempt hangs: the hub that replaces it posts the event at once, not once the attempt lease runs out', async () => {
  const bus = tempBus({});
  const hanging: Server = createServer(() => undefined);
  await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
  const port = (hanging.address() as AddressInfo).port;
  try {
    const claude = agentEnv(bus, 'shop/claude', '/repos/shop');
    register(claude);
    register(agentEnv(bus, 'human', '~'));
    add(bus, ['people', '--kind', 'webhook', '--url', `http://127.0.0.1:${port}/in`, '--on', 'mail:human']);
    let posted = false;
    hanging.on('request', () => (posted = true));
    const first = await startHub(bus, POLL);
    assert.equal(runCli(['send', 'caught mid-post', '--to', 'human'], { env: claude }).code, 0);
    await waitUntil(() => posted, 'the first attempt, hanging');
    first.process.kill('SIGKILL');
    await first.stop();
    hanging.closeAllConnections();
    await new Promise<void>((resolve) => hanging.close(() => resolve()));
    const back = await receiver(port);
    const second = await startHub(bus, POLL);
    try {
      // The attempt's lease is a minute: were it waited out, this would time out.
      await waitUntil(() => back.received.length === 1, () => `the event, after the restart: ${runCli(['integration', 'outbox', '--json'], { env: bus.env }).stdout}`, 10_000);
      assert.equal(JSON.parse(back.received[0]?.body ?? '{}').data.body, 'caught mid-post');
    } finally {
      await second.stop();
      await back.close();
    }
  } finally {
    if (hanging.listening) hanging.close();
    bus.cleanup();
  }
});

test('integration test posts a test event and prints the status; a receiver that refuses fails the command; bad set-ups are refused in one line', withHub(POLL, async (bus) => {
  const sink = await receiver();
  try {
    add(bus, ['pager', '--kind', 'ntfy', '--url', `${sink.url}/my-topic`, '--on', 'notice:critical']);
    const ok = await runCliAsync(['integration', 'test', 'pager'], { env: bus.env });
    assert.deepEqual([ok.code, ok.stdout], [0, 'pager: delivered (status 200)\n'], ok.stderr);
    const posted = sink.received.at(-1) as Received;
    assert.deepEqual([posted.path, posted.headers.title, posted.body], ['/my-topic', 'agent-bus test', 'agent-bus: a test delivery for pager']);
    sink.answers.push(404);
    const refused = await runCliAsync(['integration', 'test', 'pager', '--json'], { env: bus.env });
    assert.equal(refused.code, 1);
    assert.deepEqual(JSON.parse(refused.stdout).status, 404);
    for (const [args, pattern] of [
      [['add', 'x1', '--kind', 'slack', '--url', 'ftp://example.com/x', '--on', 'mail:human'], /--url must be http:\/\/ or https:\/\//],
      [['add', 'x2', '--kind', 'slack', '--url', 'not a url', '--on', 'mail:human'], /is not a URL/],
      [['add', 'x3', '--kind', 'slack', '--url', 'https://hooks.slack.com/x', '--on', 'mail'], /unknown --on 'mail': use mail:PERSON, notice:SEVERITY/],
      [['add', 'x4', '--kind', 'slack', '--url', 'https://hooks.slack.com/x', '--on', 'notice:loud'], /unknown severity 'loud'/],
      [['add', 'x5', '--kind', 'slack', '--on', 'task'], /needs --url URL and --on/],
      [['add', 'x6', '--kind', 'webhook', '--url', 'https://e.com/x', '--on', 'task', '--to', 'shop'], /--to is for integrations in/],
      [['add', 'x7', '--kind', 'generic', '--to', 'shop', '--url', 'https://e.com/x'], /--url and --on are for integrations out/],
      [['add', 'x8', '--kind', 'slack', '--url', 'https://e.com/x', '--on', 'mail:shop/claude'], /takes a person's name/],
      [['test', 'nobody'], /no integration named 'nobody'/],
      [['outbox', '--state', 'lost'], /unknown state 'lost'/],
    ] as const) {
      const run = runCli(['integration', ...args], { env: bus.env });
      assert.notEqual(run.code, 0, args.join(' '));
      assert.match(run.stderr, pattern, args.join(' '));
      assert.equal(messageLines(run.stderr).length, 1, `one line: ${run.stderr}`);
    }
    assert.deepEqual(json<Array<{ name: string }>>(runCli(['integration', 'list', '--json'], { env: bus.env })).map((row) => row.name), ['pager'], 'nothing set up by the refused ones');
  } finally {
    await sink.close();
  }
}));

test('on one machine, running MCP servers post the events: one process at a time, each event once; a server that ends lets another take over', async () => {
  const bus = tempBus(POLL);
  const sink = await receiver();
  try {
    const claude = agentEnv(bus, 'shop/claude', '/repos/shop');
    register(claude);
    register(agentEnv(bus, 'human', '~'));
    add(bus, ['people', '--kind', 'webhook', '--url', `${sink.url}/in`, '--on', 'mail:human']);
    const first = await connect(agentEnv(bus, 'shop/claude', '/repos/shop'));
    const second = await connect(agentEnv(bus, 'shop/codex', '/repos/shop'));
    try {
      for (let i = 0; i < 6; i++) await first.call('send_message', { to: 'human', body: `mail ${i}` });
      await waitUntil(() => sink.received.length >= 6, () => `six posts: ${sink.received.length}`, 10_000);
      assert.deepEqual(sink.received.map((request) => JSON.parse(request.body).data.body).sort(), ['mail 0', 'mail 1', 'mail 2', 'mail 3', 'mail 4', 'mail 5'], 'each once');
      await first.close();
      // The one left serves the outbox once the first has let go (or it took it already).
      assert.equal(runCli(['send', 'after the first ended', '--to', 'human'], { env: claude }).code, 0);
      await waitUntil(() => sink.received.length === 7, 'the seventh post', 10_000);
    } finally {
      await first.close().catch(() => undefined);
      await second.close();
    }
    assert.equal(sink.received.length, 7, 'nothing posted twice');
  } finally {
    await sink.close();
    bus.cleanup();
  }
});
