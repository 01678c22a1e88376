/**
 * The dashboard in a real headless Chromium (Debian's, driven by playwright-core), over a real
 * `agent-bus web` and a real hub, on a real bus written by the CLI.
 */
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'node:http';
import { after, before, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchBrowser, startWeb, type RunningWeb } from '../helpers/browser.js';
import { json, readAudit, runCli, runCliAsync, tempBus, type TempBus, messageLines } from '../helpers/bus-env.js';
import { createToken, startHub } from '../helpers/hub.js';
import { sleep, waitUntil } from '../helpers/wait.js';

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

/** A GET with headers fetch will not send (Host): status and body. */
function rawGet(url: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const call = request(url, { headers }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    call.on('error', reject);
    call.end();
  });
}

/** The cookie a dashboard on `origin` sets: its name carries the port, so two dashboards on one host never overwrite each other. */
function cookieFor(origin: string, value: string): string {
  return `agent_bus_dashboard_${new URL(origin).port}=${value}`;
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
    // How each is woken, as its watcher row says: through its inbox socket, or a socket given up (and why, on hover).
    bus.sql(`INSERT INTO watchers (session, token, pid, started_at, agent, way, note) VALUES ('socket:1', 't1', ${process.pid}, '2026-01-01T00:00:00.000000Z', 'repo-a/claude', 'socket', NULL)`);
    bus.sql(`INSERT INTO watchers (session, token, pid, started_at, agent, way, note) VALUES ('socket:2', 't2', ${process.pid}, '2026-01-01T00:00:00.000000Z', 'repo-b/opencode', 'refused', 'no turn began within 10 s of a post')`);
    assert.equal(runCli(['send', 'a change for the roster', '--to', 'repo-a/codex', '--name', 'human'], { env: bus.env }).code, 0);
    await roster.locator('li.agent', { hasText: 'repo-a/claude' }).locator('.wake', { hasText: 'wake: socket' }).waitFor();
    const refused = roster.locator('li.agent', { hasText: 'repo-b/opencode' }).locator('.wake');
    await refused.filter({ hasText: 'wake: watcher (socket given up)' }).waitFor();
    assert.equal(await refused.getAttribute('title'), 'the inbox socket was given up: no turn began within 10 s of a post');
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
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'thread-title', 'opening a thread moves the keyboard to it');
    // Shown to human, whose page it is: another recipient's copy is not delivered by it.
    await page.locator('#thread-sends .copies [data-state="sent"]', { hasText: 'repo-a/claude: sent' }).waitFor();
    assert.equal(bus.rows<{ delivered_at: string | null }>("SELECT delivered_at FROM messages WHERE body = 'please look at the build'")[0]?.delivered_at, null);
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
    // The thread shows each recipient's receipt. The page showed the reply to human, whose page it is:
    // delivered by web (in the store, not only on the page), read once human reads it.
    const copy = page.locator('#thread-sends li.send', { hasText: reply }).locator('.copies li', { hasText: 'human:' });
    await copy.locator('[data-state="delivered"]', { hasText: /human: delivered .+ by web/ }).waitFor();
    const [replyRow] = bus.rows<{ message_id: string }>("SELECT message_id FROM messages WHERE body LIKE 'looked:%'");
    const stored = json<{ copies: Array<{ state: string; delivered_via: string | null }> }>(runCli(['status', replyRow?.message_id ?? '', '--json'], { env: bus.env }));
    assert.deepEqual([stored.copies[0]?.state, stored.copies[0]?.delivered_via], ['delivered', 'web']);
    assert.equal(await copy.locator('.tick').textContent(), '✓✓');
    cli(bus, ['inbox', '--name', 'human']);
    await copy.locator('[data-state="read"]', { hasText: /human: read .+ by inbox/ }).waitFor({ timeout: 3_000 });
    // Back to the list puts the keyboard on the thread it came from, and a redraw keeps it there.
    await page.getByRole('button', { name: 'Back to threads' }).click();
    assert.equal(await page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset.thread), first.thread_id);
    cli(bus, ['send', 'one more', '--to', 'repo-a/codex', '--name', 'human']);
    await page.locator('#thread-list button.thread', { hasText: 'one more' }).waitFor();
    assert.equal(await page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset.thread), first.thread_id, 'the redraw lost the keyboard focus');
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
    await page.locator('#compose-result [data-state="sent"]').waitFor();
    assert.equal(await page.locator('#compose-result .tick').textContent(), '✓');
    const inbox = json<Array<{ from: string; body: string }>>(runCli(['inbox', '--name', 'repo-a/claude', '--json'], { env: bus.env }));
    assert.deepEqual(
      inbox.filter((message) => message.from === 'maria').map((message) => message.body),
      ['sent from the dashboard'],
    );
    // The read ticks on the sent message as it happens, with no reload.
    await page.locator('#compose-result [data-state="read"]', { hasText: 'read' }).waitFor({ timeout: 3_000 });
    assert.equal(await page.locator('#compose-result .tick').textContent(), '✓✓');
  } finally {
    await opened.close();
  }
});

test('an urgent send from the page reaches the recipient at its next tool call, and its thread marks it urgent', async () => {
  const opened = await openDashboard(['repo-a/claude'], { AGENT_BUS_NAME: 'maria' });
  const { page, bus } = opened;
  try {
    await page.getByLabel('To', { exact: true }).fill('repo-a/claude');
    await page.getByLabel('Message', { exact: true }).fill('hold the deploy, the dashboard says so');
    await page.getByLabel(/Urgent/).check();
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.locator('#compose-result.ok', { hasText: 'Sent to repo-a/claude.' }).waitFor({ timeout: 5_000 });
    assert.equal(await page.getByLabel(/Urgent/).isChecked(), false, 'the box is cleared for the next message');
    const hook = runCli(['hook-pre-tool', '--client', 'claude'], {
      env: { ...bus.env, AGENT_BUS_NAME: 'repo-a/claude', AGENT_BUS_REPO: '/repos/a' },
      input: JSON.stringify({ session_id: 's-1', tool_name: 'Bash', tool_input: { command: 'ls' } }),
    });
    assert.match(hook.stdout, /urgent message\(s\) arrived during this turn.*hold the deploy, the dashboard says so/);
    await page.locator('#thread-list button.thread', { hasText: 'hold the deploy' }).click();
    const send = page.locator('#thread-sends li.send', { hasText: 'hold the deploy' });
    await send.locator('.head .urgent', { hasText: 'urgent' }).waitFor();
    await send.locator('[data-state="read"]', { hasText: /repo-a\/claude: read .+ by hook-pre-tool/ }).waitFor({ timeout: 3_000 });
    // A plain send is not marked.
    await page.getByLabel('Message', { exact: true }).fill('and a plain one');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    const sent = (): Array<[string, string | null]> =>
      bus.rows<{ body: string; priority: string | null }>("SELECT body, priority FROM messages WHERE from_agent = 'maria' ORDER BY sent_at").map((row) => [row.body, row.priority]);
    await waitUntil(() => sent().length === 2, 'the plain send is stored');
    assert.deepEqual(sent(), [
      ['hold the deploy, the dashboard says so', 'urgent'],
      ['and a plain one', null],
    ]);
  } finally {
    await opened.close();
  }
});

test('the task board: a task made on the page is offered, moves column as the CLI takes it, shows its history, and is reassigned and cancelled from the page', async () => {
  const opened = await openDashboard(['repo-a/claude', 'repo-a/codex'], { AGENT_BUS_NAME: 'maria' });
  const { page, bus } = opened;
  try {
    const column = (state: string) => page.locator(`#task-board .column[data-state="${state}"]`);
    await page.locator('#tasks summary', { hasText: 'New task' }).click();
    await page.getByLabel('Title', { exact: true }).fill('write the release notes');
    await page.getByLabel('For', { exact: true }).fill('repo-a/codex');
    await page.getByLabel('What to do', { exact: true }).fill('for 2.4 <b>bold</b>');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    await page.locator('#task-result.ok', { hasText: 'made for repo-a/codex' }).waitFor({ timeout: 5_000 });
    await column('open').locator('button.task', { hasText: 'write the release notes' }).waitFor();
    const [made] = json<Array<{ id: string; creator: string }>>(runCli(['task', 'list', '--json'], { env: bus.env }));
    assert.equal(made?.creator, 'maria');
    const offered = json<Array<{ body: string }>>(runCli(['inbox', '--name', 'repo-a/codex', '--json'], { env: bus.env }));
    assert.ok(offered.some((message) => message.body.startsWith(`[agent-bus task ${made?.id.slice(-12)}] write the release notes`)), 'offered as mail');
    // Taken from the CLI: the card moves with no reload.
    cli(bus, ['task', 'take', made?.id ?? '', '--name', 'repo-a/codex']);
    await column('taken').locator('li', { hasText: 'held by repo-a/codex' }).waitFor({ timeout: 3_000 });
    // The roster shows the task in hand, and the presence its prompt hook notes.
    const codexRow = page.locator('#roster-list li.agent', { hasText: 'repo-a/codex' });
    await codexRow.locator('.task-in-hand', { hasText: 'task: write the release notes' }).waitFor({ timeout: 3_000 });
    assert.equal(runCli(['hook-user-prompt', '--client', 'codex'], { env: { ...bus.env, AGENT_BUS_NAME: 'repo-a/codex', AGENT_BUS_REPO: '/repos/a' }, input: '{}' }).code, 0);
    await codexRow.locator('.state.working', { hasText: /^working/ }).waitFor({ timeout: 3_000 });
    await column('taken').locator('button.task', { hasText: 'write the release notes' }).click();
    await page.locator('#task-history li', { hasText: 'take by repo-a/codex → taken' }).waitFor();
    assert.equal(await page.locator('#task-body b').count(), 0, 'the body is text');
    await page.getByLabel('Reassign to').fill('repo-a/claude');
    await page.getByRole('button', { name: 'Reassign', exact: true }).click();
    await page.locator('#task-result.ok', { hasText: 'Reassigned: write the release notes is open, for repo-a/claude' }).waitFor({ timeout: 5_000 });
    await page.locator('#task-history li', { hasText: 'reassign by maria → open' }).waitFor();
    const told = json<Array<{ body: string; urgent: boolean }>>(runCli(['inbox', '--name', 'repo-a/codex', '--json'], { env: bus.env }));
    assert.ok(told.some((message) => message.urgent && message.body.includes('reassigned to repo-a/claude by maria')), 'the holder is told');
    await page.getByRole('button', { name: 'Cancel the task', exact: true }).click();
    await page.locator('#task-result.ok', { hasText: 'Cancelled: write the release notes is cancelled' }).waitFor({ timeout: 5_000 });
    await page.getByRole('button', { name: 'Back to the board' }).click();
    await column('cancelled').locator('button.task', { hasText: 'write the release notes' }).waitFor();
    assert.deepEqual(readAudit(bus.audit).filter((row) => row.op === 'task').map((row) => row.event), ['create', 'take', 'reassign', 'cancel']);
    assert.deepEqual(opened.errors, []);
  } finally {
    await opened.close();
  }
});

test('the task board: going back while the open task is being read again leaves the board shown', async () => {
  const opened = await openDashboard(['repo-a/claude', 'repo-a/codex'], { AGENT_BUS_NAME: 'maria' });
  const { page, bus } = opened;
  try {
    const id = cli(bus, ['task', 'add', 'tidy the changelog', '--to', 'repo-a/codex']).trim();
    const card = page.locator('#task-board button.task', { hasText: 'tidy the changelog' });
    await card.click();
    await page.locator('#task-title', { hasText: 'tidy the changelog' }).waitFor();
    // From now on the open task's reads answer late: the bus moves (its refresh starts), and the
    // user goes back to the board before the refresh's answer comes.
    let late = 0;
    await page.route('**/api/task?*', async (route) => {
      late++;
      await new Promise((resolve) => setTimeout(resolve, 800));
      await route.continue();
    });
    cli(bus, ['task', 'take', id, '--name', 'repo-a/codex']);
    await waitUntil(() => late > 0, 'the open task read again');
    await page.getByRole('button', { name: 'Back to the board' }).click();
    await page.waitForTimeout(1_500);
    assert.equal(await page.locator('#task-board').isVisible(), true, 'the board is shown');
    assert.equal(await page.locator('#task-view').isVisible(), false, "the task's view is not");
    assert.deepEqual(opened.errors, []);
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
    await page.locator('#notice-list li.notice', { hasText: 'freeze until five' }).getByRole('button', { name: /^Clear the alert notice on deploys/ }).click();
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
    const cookie = cookieFor(web.origin, web.key);
    const send = (headers: Record<string, string>): Promise<Response> =>
      fetch(`${web.origin}/api/send`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ to: 'repo-a/claude', body: 'forged' }) });
    assert.equal((await fetch(`${web.origin}/api/roster`)).status, 401);
    assert.equal((await fetch(`${web.origin}/api/roster`, { headers: { cookie: cookieFor(web.origin, 'not-the-key') } })).status, 401);
    assert.equal((await fetch(`${web.origin}/api/roster`, { headers: { cookie: `agent_bus_dashboard=${web.key}` } })).status, 401, "another port's cookie");
    // Another name rebound to this address is refused before anything else.
    assert.equal((await rawGet(`${web.origin}/api/roster`, { host: `evil.example:${new URL(web.origin).port}`, cookie })).status, 421);
    assert.equal((await rawGet(`${web.origin}/api/roster`, { host: `localhost:${new URL(web.origin).port}`, cookie })).status, 200);
    // Who asks is known before a body is read: a huge body without the cookie is refused for that, and a sign-in is small.
    const huge = await fetch(`${web.origin}/api/send`, { method: 'POST', headers: { origin: web.origin, 'content-type': 'application/json' }, body: 'x'.repeat(3 << 20) });
    assert.equal(huge.status, 401);
    const bigSignIn = await fetch(`${web.origin}/api/signin`, { method: 'POST', headers: { origin: web.origin, 'content-type': 'application/json' }, body: JSON.stringify({ secret: 'k'.repeat(10_000) }) });
    assert.equal(bigSignIn.status, 413);
    // Live pages per sign-in are bounded: the 17th stream is refused, none is pushed out.
    const streams = await Promise.all(Array.from({ length: 16 }, () => fetch(`${web.origin}/api/events`, { headers: { cookie } })));
    assert.deepEqual([...new Set(streams.map((stream) => stream.status))], [200]);
    const seventeenth = await fetch(`${web.origin}/api/events`, { headers: { cookie } });
    assert.equal(seventeenth.status, 503);
    await seventeenth.body?.cancel();
    for (const stream of streams) await stream.body?.cancel();
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
    // The printed URL's answer: a redirect that sets the cookie, Secure only behind a proxy speaking HTTPS.
    const plain = await fetch(web.url, { redirect: 'manual' });
    assert.equal(plain.status, 303);
    assert.equal(plain.headers.get('location'), '/');
    assert.equal(plain.headers.get('set-cookie'), `${cookie}; Path=/; HttpOnly; SameSite=Strict`);
    const proxied = await fetch(web.url, { redirect: 'manual', headers: { 'x-forwarded-proto': 'https' } });
    assert.equal(proxied.headers.get('set-cookie'), `${cookie}; Path=/; HttpOnly; SameSite=Strict; Secure`);
    // A wrong key in the URL signs nothing in: the page asks for the key.
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${web.origin}/?key=wrong`);
    await page.getByLabel('Key').waitFor();
    assert.equal(await page.locator('#board').isVisible(), false, 'the board shows under the sign-in form');
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
  writeFileSync(join(bus.folder, 'wake.json'), JSON.stringify({ 'repo-a/claude': 'notify-send secret-looking-command' }));
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
    // The hub machine's wake commands are not shown over the hub; a token never signs in from a URL.
    const wake = (await (await fetch(`${hub.url}/api/wake`, { headers: { cookie: `${cookie?.name}=${cookie?.value}` } })).json()) as { entries: Record<string, unknown>; path: string };
    assert.deepEqual(wake.entries, { 'repo-a/claude': '(a command, on the hub)' });
    assert.doesNotMatch(JSON.stringify(wake), /notify-send|wake\.json"/);
    const byUrl = await fetch(`${hub.url}/?key=${encodeURIComponent(token.token)}`, { redirect: 'manual' });
    assert.equal(byUrl.status, 200);
    assert.equal(byUrl.headers.get('set-cookie'), null);
    await byUrl.body?.cancel();
    // A revoked token's cookie signs nothing in any more.
    cli(bus, ['token', 'revoke', token.id]);
    assert.equal((await fetch(`${hub.url}/api/roster`, { headers: { cookie: `${cookie?.name}=${cookie?.value}` } })).status, 401);
  } finally {
    await context.close();
    await hub.stop();
    bus.cleanup();
  }
});

test('the pictures draw the last day: 24 hourly bars and who wrote to whom', async () => {
  const opened = await openDashboard(['repo-a/claude', 'repo-a/codex']);
  const { page, bus } = opened;
  try {
    cli(bus, ['send', 'one', '--to', 'repo-a/claude', '--name', 'human']);
    cli(bus, ['send', 'two', '--to', 'repo-a/claude', '--name', 'human']);
    cli(bus, ['send', 'back', '--to', 'human', '--name', 'repo-a/claude']);
    // codex's arrival to everyone (claude's came first and reached nobody), two sends to claude, one reply.
    await page.locator('#mail-chart p', { hasText: '4 sends' }).waitFor({ timeout: 3_000 });
    assert.equal(await page.locator('#mail-chart rect.bar').count(), 24);
    const titles = await page.locator('#talk-graph path.edge title').allTextContents();
    assert.deepEqual(titles.sort(), ['human → repo-a/claude: 2', 'repo-a/claude → human: 1', 'repo-a/codex → *: 1'].sort());
    assert.equal(await page.locator('#talk-graph g.node').count(), 4);
  } finally {
    await opened.close();
  }
});

test('Activity filters by agent, op and thread, for rows already there and rows as they come', async () => {
  const opened = await openDashboard(['repo-a/claude', 'repo-b/codex']);
  const { page, bus } = opened;
  try {
    const thread = json<{ thread_id: string }>(runCli(['send', 'for claude', '--to', 'repo-a/claude', '--name', 'human', '--json'], { env: bus.env })).thread_id;
    cli(bus, ['send', 'for codex', '--to', 'repo-b/codex', '--name', 'human']);
    await page.locator('#activity-list li', { hasText: 'for codex' }).waitFor();
    await page.getByLabel('Agent', { exact: true }).fill('repo-b');
    await page.locator('#activity-list li', { hasText: 'for claude' }).waitFor({ state: 'detached' });
    assert.ok((await page.locator('#activity-list li', { hasText: 'for codex' }).count()) > 0);
    // A row that comes while the filter is set shows only if it matches.
    cli(bus, ['send', 'claude again', '--to', 'repo-a/claude', '--name', 'human']);
    cli(bus, ['send', 'codex again', '--to', 'repo-b/codex', '--name', 'human']);
    await page.locator('#activity-list li', { hasText: 'codex again' }).waitFor();
    assert.equal(await page.locator('#activity-list li', { hasText: 'claude again' }).count(), 0);
    await page.getByLabel('Agent', { exact: true }).fill('');
    await page.getByLabel('Op', { exact: true }).selectOption('read');
    await page.locator('#activity-list li', { hasText: 'codex again' }).waitFor({ state: 'detached' });
    await page.locator('#activity-list li.empty', { hasText: 'Nothing matches.' }).waitFor();
    assert.equal(await page.locator('#activity-list li.row').count(), 0);
    cli(bus, ['inbox', '--name', 'repo-a/claude']);
    await page.locator('#activity-list li.op-read').first().waitFor();
    assert.equal(await page.locator('#activity-list li.empty').count(), 0, 'the row came, and the list still says nothing matches');
    await page.getByLabel('Op', { exact: true }).selectOption('');
    await page.getByLabel('Thread', { exact: true }).fill(thread.slice(0, 8));
    await page.locator('#activity-list li.op-send', { hasText: 'for claude' }).waitFor();
    const texts = await page.locator('#activity-list li').allTextContents();
    assert.ok(texts.length >= 2 && texts.every((text) => text.includes(`[${thread.replace(/-/g, '').slice(0, 12)}]`)), texts.join(' | '));
  } finally {
    await opened.close();
  }
});

test('lists are paged: repos a page at a time, older threads on demand', async () => {
  const names = Array.from({ length: 43 }, (_, index) => `repo-${String(index).padStart(2, '0')}/claude`);
  const bus = tempBus();
  await Promise.all(names.map((name) => runCliAsync(['send', `${name} is here`, '--to', '*', '--name', name], { env: bus.env })));
  const web = await startWeb(bus);
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.goto(web.url);
    await page.locator('#roster-summary', { hasText: '43 names in 43 repos (repos 1–40)' }).waitFor();
    assert.equal(await page.locator('#roster-list details.repo').count(), 40);
    await page.getByRole('button', { name: 'Next repos' }).click();
    await page.locator('#roster-summary', { hasText: '(repos 41–43)' }).waitFor();
    assert.deepEqual(await page.locator('#roster-list details.repo summary strong').allTextContents(), ['repo-40', 'repo-41', 'repo-42']);
    assert.equal(await page.getByRole('button', { name: 'Next repos' }).isDisabled(), true);
    // A thread per arrival but the first (it reached nobody): 25 at first, the rest on demand, none twice.
    const threads = Number(bus.rows<{ n: number | string }>('SELECT COUNT(DISTINCT thread_id) AS n FROM messages')[0]?.n);
    assert.ok(threads > 25, `${threads} threads`);
    // The thread list comes in beside the roster, in a request of its own: wait for it, then count.
    await page.locator('#thread-list li').first().waitFor();
    assert.equal(await page.locator('#thread-list li').count(), 25);
    await page.getByRole('button', { name: 'Older threads' }).click();
    await page.waitForFunction((count) => document.querySelectorAll('#thread-list li').length === count, threads);
    const previews = await page.locator('#thread-list .preview').allTextContents();
    assert.equal(new Set(previews).size, threads);
    assert.equal(await page.getByRole('button', { name: 'Older threads' }).isHidden(), true);
  } finally {
    await context.close();
    await web.stop();
    bus.cleanup();
  }
});

test('the brain view refreshes on demand, and the wake view shows wake.json and the wakes it made', async () => {
  const bus = tempBus();
  arrive(bus, ['repo-a/claude']);
  mkdirSync(join(bus.folder, 'brain-feed'), { recursive: true });
  writeFileSync(join(bus.folder, 'brain-feed', 'arcs.md'), '---\ntitle: Active arcs\nseverity: alert\nttl: 600\n---\nthe release train leaves at five\n');
  writeFileSync(join(bus.folder, 'wake.json'), JSON.stringify({ 'repo-a/claude': 'true', 'repo-b': false }));
  const web = await startWeb(bus);
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.goto(web.url);
    const facts = page.locator('#brain-facts');
    await facts.getByText('0 (0 live notices)').waitFor();
    await page.getByRole('button', { name: 'Refresh the brain' }).click();
    await facts.getByText('1 (1 live notices)').waitFor();
    assert.match((await facts.locator('dt:text-is("Content hash") + dd').textContent()) ?? '', /^[0-9a-f]{16}$/);
    await page.locator('#notice-list li.notice', { hasText: 'the release train leaves at five' }).waitFor();
    assert.equal(json<{ entry_count: number }>(runCli(['brain', 'status', '--json'], { env: bus.env })).entry_count, 1);

    const entries = await page.locator('#wake-entries li').allTextContents();
    assert.deepEqual(entries, ['repo-a/claude true', 'repo-b off']);
    cli(bus, ['send', 'wake up', '--to', 'repo-a/claude', '--name', 'human']);
    await page.locator('#wake-rows li', { hasText: 'repo-a/claude' }).waitFor({ timeout: 3_000 });
    const row = await page.locator('#wake-rows li', { hasText: 'repo-a/claude' }).textContent();
    const audited = cli(bus, ['tail', '--json', '--limit', '20'])
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { op: string; wake_status?: string })
      .find((entry) => entry.op === 'wake');
    assert.ok(audited?.wake_status !== undefined && row?.includes(audited.wake_status), `${row} shows ${audited?.wake_status}`);
  } finally {
    await context.close();
    await web.stop();
    bus.cleanup();
  }
});

test('light and dark themes follow the system, and a 375-pixel phone scrolls only down', async () => {
  // Every text's contrast in both themes is dashboard-front.test.ts's audit.
  const opened = await openDashboard();
  const { page, bus } = opened;
  try {
    cli(bus, ['notice', 'contrast check', '-s', 'critical']);
    cli(bus, ['channel', 'publish', 'ops', 'an alert', '-s', 'alert']);
    cli(bus, ['channel', 'publish', 'ops', 'some info', '-s', 'info']);
    await page.locator('#notice-list li.notice', { hasText: 'some info' }).waitFor();
    const background = (): Promise<string> => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    const light = { body: await background() };
    await page.emulateMedia({ colorScheme: 'dark' });
    const dark = { body: await background() };
    assert.notEqual(dark.body, light.body);
    assert.ok(Number(/\d+/.exec(dark.body)?.[0]) < 40, `a dark background: ${dark.body}`);
    await page.setViewportSize({ width: 375, height: 812 });
    await page.waitForFunction(() => window.innerWidth === 375);
    const widths = await page.evaluate(() => ({
      page: document.documentElement.scrollWidth,
      view: window.innerWidth,
      wide: [...document.querySelectorAll('body *')].filter((node) => node.getBoundingClientRect().right > window.innerWidth + 1).map((node) => `${node.tagName}#${node.id}.${node.className}`).slice(0, 5),
    }));
    assert.ok(widths.page <= widths.view, `the page is ${widths.page} px wide in a ${widths.view} px window: ${widths.wide.join(', ')}`);
  } finally {
    await opened.close();
  }
});

test('the first page is under 200 KB compressed and loads nothing from elsewhere', async () => {
  const opened = await openDashboard();
  const { page, web } = opened;
  try {
    let total = 0;
    for (const path of ['/', '/app.js', '/app.css', '/icon.svg']) {
      const response = await fetch(`${web.origin}${path}`, { headers: { 'accept-encoding': 'gzip' } });
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('content-encoding'), 'gzip', path);
      total += Number(response.headers.get('content-length'));
      await response.body?.cancel();
    }
    assert.ok(total > 1_000 && total < 200_000, `${total} bytes`);
    const foreign = await page.evaluate(() => performance.getEntriesByType('resource').map((entry) => entry.name).filter((name) => !name.startsWith(location.origin)));
    assert.deepEqual(foreign, []);
  } finally {
    await opened.close();
  }
});

test('agent-bus web: a bad port, a busy port and a machine set to use a hub are one-line errors', async () => {
  const bus = tempBus();
  try {
    const bad = runCli(['web', '--no-open', '--port', 'eighty'], { env: bus.env });
    assert.equal(bad.code, 2);
    assert.equal(messageLines(bad.stderr).length, 1);
    assert.match(bad.stderr, /--port must be a port number from 0 to 65535, got 'eighty'/);
    const hubbed = runCli(['web', '--no-open'], { env: { ...bus.env, AGENT_BUS_URL: 'http://hub.example:8787', AGENT_BUS_TOKEN: 'abt_x' } });
    assert.equal(hubbed.code, 2);
    assert.match(hubbed.stderr, /this machine uses the hub at http:\/\/hub\.example:8787: its dashboard is at http:\/\/hub\.example:8787\//);
    const first = await startWeb(bus);
    try {
      const port = new URL(first.origin).port;
      const busy = runCli(['web', '--no-open', '--port', port], { env: bus.env });
      assert.equal(busy.code, 1);
      assert.match(busy.stderr, new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port}: the port is in use`));
      assert.match(first.url, /^http:\/\/127\.0\.0\.1:\d+\/\?key=[A-Za-z0-9_-]{32}$/);
    } finally {
      await first.stop();
    }
    const open = await startWeb(bus, {}, ['--host', '0.0.0.0']);
    try {
      await waitUntil(() => /agent-bus web: listening on 0\.0\.0\.0/.test(open.output()), () => `the warning; got: ${open.output()}`);
      assert.match(open.output(), /agent-bus web: listening on 0\.0\.0\.0, not only this machine: the key travels over plain HTTP/);
    } finally {
      await open.stop();
    }
    const help = runCli(['web', '--help'], { env: bus.env });
    assert.match(help.stdout, /--no-open/);
    assert.match(help.stdout, /8788/);
  } finally {
    bus.cleanup();
  }
});

test('agent-bus web opens the printed URL in the browser, given as an argument, unless --no-open', async () => {
  const bus = tempBus();
  const opened = join(bus.dir, 'opened.txt');
  const browserScript = join(bus.dir, 'browser.sh');
  writeFileSync(browserScript, `#!/bin/sh\nprintf '%s\\n' "$#" "$@" > '${opened}'\n`);
  chmodSync(browserScript, 0o755);
  try {
    const quiet = await startWeb(bus, { BROWSER: browserScript });
    // Nothing says the server decided not to open a browser: a pause for one to show.
    await sleep(500);
    await quiet.stop();
    assert.equal(existsSync(opened), false, '--no-open opened a browser');
    // startWeb passes --no-open; this one does not.
    const { spawn } = await import('node:child_process');
    const { CLI } = await import('../helpers/bus-env.js');
    const child = spawn(process.execPath, [CLI, 'web', '--port', '0'], { env: { ...bus.env, BROWSER: browserScript }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    try {
      // The browser stand-in has written both its lines.
      await waitUntil(() => existsSync(opened) && readFileSync(opened, 'utf8').split('\n').length >= 3, 'the browser to be opened', 10_000, 50);
      const url = /agent-bus web: (\S+)/.exec(out)?.[1];
      assert.ok(url !== undefined, out);
      assert.deepEqual(readFileSync(opened, 'utf8').trim().split('\n'), ['1', url]);
    } finally {
      child.kill('SIGTERM');
    }
  } finally {
    bus.cleanup();
  }
});
