/**
 * The dashboard in a real headless Chromium (Debian's, driven by playwright-core), over a real
 * `agent-bus web` and a real hub, on a real bus written by the CLI.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchBrowser, startWeb, type RunningWeb } from '../helpers/browser.js';
import { json, runCli, tempBus, type TempBus } from '../helpers/bus-env.js';
import { createToken, startHub } from '../helpers/hub.js';

let browser: Browser;
before(async () => {
  browser = await launchBrowser();
});
after(async () => {
  await browser.close();
});

/** Put names on the roster the way agents do: each says something to everyone. */
function arrive(bus: TempBus, names: string[]): void {
  for (const name of names) {
    const sent = runCli(['send', `${name} is here`, '--to', '*', '--name', name], { env: bus.env });
    assert.equal(sent.code, 0, sent.stderr);
  }
}

function cli(bus: TempBus, args: string[]): string {
  const result = runCli(args, { env: bus.env });
  assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

interface Opened {
  bus: TempBus;
  web: RunningWeb;
  context: BrowserContext;
  page: Page;
  /** Requests the page made to the API, by path (the event stream included). */
  requests: string[];
  /** Errors the page's script threw, and console errors. */
  errors: string[];
  close(): Promise<void>;
}

async function openDashboard(names: string[] = ['repo-a/claude', 'repo-a/codex', 'repo-b/opencode'], env: NodeJS.ProcessEnv = {}): Promise<Opened> {
  const bus = tempBus(env);
  arrive(bus, names);
  const web = await startWeb(bus);
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const requests: string[] = [];
  const errors: string[] = [];
  page.on('request', (request) => {
    const url = new URL(request.url());
    if (url.pathname.startsWith('/api/')) requests.push(url.pathname);
  });
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  await page.goto(web.url);
  await page.locator('#live.on').waitFor({ timeout: 10_000 });
  return {
    bus,
    web,
    context,
    page,
    requests,
    errors,
    async close() {
      await context.close();
      await web.stop();
      bus.cleanup();
    },
  };
}

test('the printed URL signs the browser in with an HttpOnly, SameSite=Strict cookie and shows the roster of this bus', async () => {
  const opened = await openDashboard(['repo-a/claude', 'repo-a/codex', 'repo-b/opencode']);
  const { page, web, context, bus } = opened;
  try {
    // The key leaves the address bar.
    assert.equal(page.url(), `${web.origin}/`);
    const [cookie, ...others] = await context.cookies();
    assert.equal(others.length, 0);
    assert.equal(cookie?.httpOnly, true);
    assert.equal(cookie?.sameSite, 'Strict');
    assert.equal(cookie?.value, web.key);
    // The roster is the bus's: names by repo, with the unread count the CLI's `agents` gives.
    const roster = page.locator('#roster-list');
    for (const name of ['repo-a/claude', 'repo-a/codex', 'repo-b/opencode']) await roster.getByText(name, { exact: true }).waitFor();
    const agents = json<Array<{ name: string; pending_count: number }>>(runCli(['agents', '--json'], { env: bus.env }));
    const codex = agents.find((agent) => agent.name === 'repo-a/codex');
    assert.ok(codex !== undefined && codex.pending_count > 0);
    assert.equal(await roster.locator('li.agent', { hasText: 'repo-a/codex' }).locator('.badge').textContent(), `${codex.pending_count} unread`);
    await page.locator('#roster-summary', { hasText: '3 names in 2 repos' }).waitFor();
    // Every control is labelled, and the page loaded nothing from elsewhere and threw nothing.
    const unlabelled = await page.evaluate(() =>
      [...document.querySelectorAll('input, select, textarea')].filter((control) => (control as HTMLInputElement).labels?.length === 0 && !control.closest('[hidden]')).map((control) => control.id),
    );
    assert.deepEqual(unlabelled, []);
    assert.deepEqual(opened.errors, []);
    const response = await fetch(`${web.origin}/`);
    assert.match(response.headers.get('content-security-policy') ?? '', /default-src 'none'; script-src 'self'/);
    assert.equal(response.headers.get('referrer-policy'), 'no-referrer');
  } finally {
    await opened.close();
  }
});

test('a CLI send appears in Activity and in its open thread within 1 s, as text, pushed without a poll', async () => {
  const opened = await openDashboard();
  const { page, bus } = opened;
  try {
    const first = json<{ thread_id: string }>(runCli(['send', 'please look at the build', '--to', 'repo-a/claude', '--name', 'human', '--json'], { env: bus.env }));
    await page.locator('#thread-list button.thread', { hasText: 'please look at the build' }).click();
    await page.locator('#thread-sends', { hasText: 'please look at the build' }).waitFor();
    // Idle: the page asks the server for nothing until the bus moves.
    const asked = opened.requests.length;
    await page.waitForTimeout(2_500);
    assert.deepEqual(opened.requests.slice(asked), [], 'the page polled while nothing happened');

    const reply = 'looked: <img src=x onerror="document.title=\'owned\'"> & <b>fine</b>';
    const sent = Date.now();
    cli(bus, ['send', reply, '--to', 'human', '--name', 'repo-a/claude', '--thread', first.thread_id]);
    await Promise.all([
      page.locator('#activity-list li', { hasText: reply }).first().waitFor({ timeout: 1_000 + (Date.now() - sent) }),
      page.locator('#thread-sends li.send', { hasText: reply }).waitFor({ timeout: 1_000 + (Date.now() - sent) }),
    ]);
    const shownAfter = Date.now() - sent;
    assert.ok(shownAfter < 1_000 + 500, `shown ${shownAfter} ms after the send returned`);
    // The body is text: no element was made from it, and nothing in it ran.
    assert.equal(await page.locator('#thread-sends img, #activity-list img, #thread-sends b').count(), 0);
    assert.notEqual(await page.title(), 'owned');
    // The thread shows each recipient's read state: the reply is unread by human until human reads it.
    await page.locator('#thread-sends li.send', { hasText: reply }).locator('.copies li.unread', { hasText: 'human' }).waitFor();
    cli(bus, ['inbox', '--name', 'human']);
    await page.locator('#thread-sends li.send', { hasText: reply }).locator('.copies li.read', { hasText: 'human' }).waitFor({ timeout: 3_000 });
    // What the page asked for after the send was asked because the server said the bus moved.
    assert.ok(opened.requests.includes('/api/events'));
    assert.deepEqual(opened.errors, []);
  } finally {
    await opened.close();
  }
});

test('composing on the page reaches the recipient, and an unknown name lists close matches and sends nothing', async () => {
  const opened = await openDashboard(['repo-a/claude', 'repo-a/codex'], { AGENT_BUS_NAME: 'maria' });
  const { page, bus } = opened;
  try {
    await page.locator('#compose-as', { hasText: 'Mail goes from maria.' }).waitFor();
    // Completion offers everyone, repos and names.
    await page.getByLabel('To', { exact: true }).fill('repo');
    const offered = (): Promise<string> => page.evaluate(() => [...document.querySelectorAll('#compose-names option')].map((option) => (option as HTMLOptionElement).value).join(' '));
    await page.waitForFunction(() => [...document.querySelectorAll('#compose-names option')].map((option) => (option as HTMLOptionElement).value).join(' ') === 'repo-a repo-a/claude repo-a/codex', undefined, { timeout: 3_000 }).catch(async () => {
      assert.fail(`completion of "repo" offered ${await offered()}`);
    });
    await page.getByLabel('To', { exact: true }).fill('*');
    await page.waitForFunction(() => [...document.querySelectorAll('#compose-names option')].some((option) => (option as HTMLOptionElement).value === '*'));

    const before = bus.rows<{ n: number | string }>('SELECT COUNT(*) AS n FROM messages')[0]?.n;
    await page.getByLabel('To', { exact: true }).fill('rep-a/claude');
    await page.getByLabel('Message', { exact: true }).fill('this goes nowhere');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    const refused = await page.locator('#compose-result.error').textContent({ timeout: 5_000 });
    const cliRefusal = runCli(['send', 'this goes nowhere', '--to', 'rep-a/claude', '--name', 'maria'], { env: bus.env });
    assert.equal(cliRefusal.code, 1);
    assert.match(refused ?? '', /Did you mean: .*repo-a\/claude/);
    assert.equal(`agent-bus: ${refused}`, cliRefusal.stderr.trim(), 'the page says what the CLI says');
    assert.equal(bus.rows<{ n: number | string }>('SELECT COUNT(*) AS n FROM messages')[0]?.n, before, 'nothing was sent');

    // By keyboard alone: the To field, the message, then Enter on Send.
    await page.getByLabel('To', { exact: true }).fill('repo-a/claude');
    await page.getByLabel('Message', { exact: true }).fill('sent from the dashboard');
    await page.getByLabel('Thread (to reply in one)').focus();
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Send');
    await page.keyboard.press('Enter');
    await page.locator('#compose-result.ok', { hasText: 'Sent to repo-a/claude.' }).waitFor({ timeout: 5_000 });
    const inbox = json<Array<{ from: string; body: string }>>(runCli(['inbox', '--name', 'repo-a/claude', '--json'], { env: bus.env }));
    assert.deepEqual(
      inbox.filter((message) => message.from === 'maria').map((message) => message.body),
      ['sent from the dashboard'],
    );
  } finally {
    await opened.close();
  }
});

test('a notice published by the CLI appears, counts down, and leaves at its TTL', async () => {
  const opened = await openDashboard();
  const { page, bus } = opened;
  try {
    const published = Date.now();
    cli(bus, ['channel', 'publish', 'ops', 'the staging database restarts', '-s', 'critical', '--ttl', '4']);
    const notice = page.locator('#notice-list li.notice', { hasText: 'the staging database restarts' });
    await notice.waitFor({ timeout: 2_000 });
    assert.equal(await notice.locator('.channel').textContent(), 'ops');
    assert.equal(await notice.locator('.severity').textContent(), 'critical');
    const first = Number((await notice.locator('.ttl').textContent())?.replace(/s$/, ''));
    assert.ok(first >= 1 && first <= 4, `the countdown starts at ${first}`);
    await page.waitForFunction((start) => Number(document.querySelector('#notice-list .ttl')?.textContent?.replace(/s$/, '')) < start, first, { timeout: 3_000 });
    await notice.waitFor({ state: 'detached', timeout: 6_000 });
    const left = Date.now() - published;
    assert.ok(left >= 3_000, `the notice left after ${left} ms, before its TTL of 4 s`);
    // Published on the page: it is the bus's (the CLI lists it).
    await page.locator('#notices summary').click();
    await page.getByLabel('Channel (empty: everyone)').fill('deploys');
    await page.getByLabel('Severity').selectOption('alert');
    await page.getByLabel('TTL').fill('30m');
    await page.getByLabel('Notice', { exact: true }).fill('freeze until five');
    await page.getByRole('button', { name: 'Publish' }).click();
    await page.locator('#notice-list li.notice', { hasText: 'freeze until five' }).waitFor();
    const listed = json<Array<{ channel: string; severity: string; message: string; source: string }>>(runCli(['channel', 'list', 'deploys', '--json'], { env: bus.env }));
    assert.deepEqual(
      listed.map((row) => [row.channel, row.severity, row.message, row.source]),
      [['deploys', 'alert', 'freeze until five', 'human']],
    );
    // And cleared from it.
    await page.locator('#notice-list li.notice', { hasText: 'freeze until five' }).getByRole('button', { name: /clear notice/ }).click();
    await page.locator('#notice-list li.notice', { hasText: 'freeze until five' }).waitFor({ state: 'detached' });
    assert.deepEqual(json<unknown[]>(runCli(['channel', 'list', 'deploys', '--json'], { env: bus.env })), []);
  } finally {
    await opened.close();
  }
});

test('the API refuses a request without the key, with a wrong key, and a cross-origin POST', async () => {
  const bus = tempBus();
  arrive(bus, ['repo-a/claude']);
  const web = await startWeb(bus);
  try {
    const cookie = `agent_bus_dashboard=${web.key}`;
    const send = (headers: Record<string, string>): Promise<Response> =>
      fetch(`${web.origin}/api/send`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ to: 'repo-a/claude', body: 'forged' }) });
    assert.equal((await fetch(`${web.origin}/api/roster`)).status, 401);
    assert.equal((await fetch(`${web.origin}/api/roster`, { headers: { cookie: 'agent_bus_dashboard=not-the-key' } })).status, 401);
    assert.equal((await fetch(`${web.origin}/api/events`)).status, 401);
    assert.equal((await send({ origin: web.origin })).status, 401, 'no cookie');
    assert.equal((await send({ cookie, origin: 'http://evil.example' })).status, 403, 'another origin');
    assert.equal((await send({ cookie })).status, 403, 'no origin');
    const formPost = await fetch(`${web.origin}/api/send`, { method: 'POST', headers: { cookie, origin: web.origin, 'content-type': 'application/x-www-form-urlencoded' }, body: 'to=repo-a%2Fclaude&body=forged' });
    assert.equal(formPost.status, 415, 'a plain form post');
    assert.equal(bus.rows<{ n: number | string }>("SELECT COUNT(*) AS n FROM messages WHERE body = 'forged'")[0]?.n ?? 0, 0);
    // The same request from the page's own origin with the cookie is taken: the refusals above were for their reasons.
    const taken = await send({ cookie, origin: web.origin });
    assert.equal(taken.status, 200);
    assert.equal(Number(bus.rows<{ n: number | string }>("SELECT COUNT(*) AS n FROM messages WHERE body = 'forged'")[0]?.n), 1);
    // A wrong key in the URL signs nothing in: the page asks for the key.
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${web.origin}/?key=wrong`);
    await page.getByLabel('Key').waitFor();
    assert.deepEqual(await context.cookies(), []);
    await page.getByLabel('Key').fill('still wrong');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#signin-error', { hasText: 'that is not the key this dashboard printed' }).waitFor();
    await page.getByLabel('Key').fill(web.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#roster-list').getByText('repo-a/claude', { exact: true }).waitFor();
    await context.close();
  } finally {
    await web.stop();
    bus.cleanup();
  }
});

test("the hub's dashboard signs in with a token, refuses a bad one, and acts as the token's agent", async () => {
  const bus = tempBus();
  arrive(bus, ['repo-a/claude']);
  const hub = await startHub(bus);
  const token = createToken(bus, 'lead');
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.goto(`${hub.url}/`);
    await page.getByLabel('Token').fill(`${token.token.slice(0, -4)}xxxx`);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#signin-error', { hasText: 'no such token' }).waitFor();
    assert.deepEqual(await context.cookies(), []);
    assert.equal((await fetch(`${hub.url}/api/roster`)).status, 401);
    await page.getByLabel('Token').fill(token.token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#whoami', { hasText: 'On the hub as lead' }).waitFor();
    const [cookie] = await context.cookies();
    assert.equal(cookie?.httpOnly, true);
    assert.equal(cookie?.sameSite, 'Strict');
    await page.locator('#roster-list').getByText('repo-a/claude', { exact: true }).waitFor();
    await page.getByLabel('To', { exact: true }).fill('repo-a/claude');
    await page.getByLabel('Message', { exact: true }).fill('from the hub dashboard');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.locator('#compose-result.ok').waitFor();
    const inbox = json<Array<{ from: string; body: string }>>(runCli(['inbox', '--name', 'repo-a/claude', '--json'], { env: bus.env }));
    assert.deepEqual(
      inbox.filter((message) => message.body === 'from the hub dashboard').map((message) => message.from),
      ['lead'],
    );
    // Clearing notices for everyone stays on the hub's machine, as over /v1/call.
    const refused = await fetch(`${hub.url}/api/notices/clear`, {
      method: 'POST',
      headers: { cookie: `${cookie?.name}=${cookie?.value}`, origin: hub.url, 'content-type': 'application/json' },
      body: JSON.stringify({ all: true }),
    });
    assert.equal(refused.status, 403);
    // A revoked token's cookie signs nothing in any more.
    cli(bus, ['token', 'revoke', token.id]);
    assert.equal((await fetch(`${hub.url}/api/roster`, { headers: { cookie: `${cookie?.name}=${cookie?.value}` } })).status, 401);
  } finally {
    await context.close();
    await hub.stop();
    bus.cleanup();
  }
});
