/**
 * The dashboard's Integrations view in a real headless Chromium over a real `agent-bus web`, which
 * also serves the outbox: each integration with its URL masked, the deliveries in, the events out
 * with their attempts, and a failed event retried with a click until a real receiver takes it.
 */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { agentEnv, register } from '../helpers/agents.js';
import { launchBrowser, startWeb } from '../helpers/browser.js';
import { json, runCli, tempBus } from '../helpers/bus-env.js';
import { startHub } from '../helpers/hub.js';
import { waitUntil } from '../helpers/wait.js';

let browser: Browser;
before(async () => {
  browser = await launchBrowser();
});
after(async () => {
  await browser.close();
});

test('integrations in and out are listed without secrets; a failed event out shows its status and error, and Retry sends it again to a receiver that now takes it', async () => {
  const bus = tempBus({ AGENT_BUS_WATCH_POLL_SECONDS: '0.2' });
  const answers = [410];
  const received: string[] = [];
  const receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const status = answers.shift() ?? 200;
      if (status === 200) received.push(body);
      res.writeHead(status).end(status === 200 ? 'ok' : 'gone');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const port = (receiver.address() as AddressInfo).port;
  const web = await startWeb(bus, { AGENT_BUS_NAME: 'maria', AGENT_BUS_WATCH_POLL_SECONDS: '0.2' });
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const errors: string[] = [];
  try {
    const claude = agentEnv(bus, 'shop/claude', '/repos/shop');
    register(claude);
    register(agentEnv(bus, 'human', '~'));
    const out = runCli(['integration', 'add', 'people', '--kind', 'webhook', '--url', `http://127.0.0.1:${port}/private-path`, '--on', 'mail:human', '--json'], { env: bus.env });
    assert.equal(out.code, 0, out.stderr);
    const made = runCli(['integration', 'add', 'ci', '--kind', 'generic', '--to', 'shop/claude', '--json'], { env: bus.env });
    assert.equal(made.code, 0, made.stderr);
    const secret = json<{ secret: string; path: string }>(made);
    // A delivery in, through a hub on the same store.
    const hub = await startHub(bus);
    try {
      const body = JSON.stringify({ body: 'nightly build is red' });
      const at = String(Math.floor(Date.now() / 1000));
      const response = await fetch(`${hub.url}${secret.path}`, { method: 'POST', headers: { 'x-agent-bus-timestamp': at, 'x-agent-bus-signature': `sha256=${createHmac('sha256', secret.secret).update(`${at}.${body}`).digest('hex')}` }, body });
      assert.equal(response.status, 200);
    } finally {
      await hub.stop();
    }
    // Mail to the person: the web process posts it, the receiver answers 410, and it has failed.
    assert.equal(runCli(['send', 'the release is out', '--to', 'human'], { env: claude }).code, 0);
    await waitUntil(() => json<unknown[]>(runCli(['integration', 'outbox', '--state', 'failed', '--json'], { env: bus.env })).length === 1, 'the event failed', 10_000);

    const page = await context.newPage();
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(web.url);
    await page.locator('#live.on').waitFor({ timeout: 10_000 });
    const people = page.locator('#integration-list li[data-integration="people"]');
    await people.waitFor({ timeout: 5_000 });
    assert.match(await people.innerText(), /webhook \(out\)[\s\S]*1 failed[\s\S]*on mail:human → http:\/\/127\.0\.0\.1:\d+\/…[\s\S]*0 delivered, 0 queued, 1 failed/);
    assert.match(await page.locator('#integration-list li[data-integration="ci"]').innerText(), /generic \(in\)[\s\S]*→ shop\/claude at \/v1\/integrations\/ci/);
    assert.match(await page.locator('#integration-in').innerText(), /ci mail nightly build is red/);
    const failed = page.locator('#integration-out li.outbox.failed');
    assert.match(await failed.innerText(), /people\s+failed\s+mail, 1 attempt, status 410[\s\S]*status 410: gone/);
    const html = await page.content();
    assert.ok(!html.includes('private-path') && !html.includes(secret.secret), 'no URL in clear and no secret on the page');

    await failed.getByRole('button', { name: /Retry people's mail event/ }).click();
    await page.locator('#integration-result.ok', { hasText: "Queued people's mail event again." }).waitFor();
    await waitUntil(() => received.length === 1, 'the retried event at the receiver', 10_000);
    assert.equal(JSON.parse(received[0] as string).data.body, 'the release is out');
    await page.locator('#integration-out li.outbox.delivered').waitFor({ timeout: 10_000 });
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
    await web.stop();
    await new Promise<void>((resolve) => {
      receiver.closeAllConnections();
      receiver.close(() => resolve());
    });
    bus.cleanup();
  }
});
