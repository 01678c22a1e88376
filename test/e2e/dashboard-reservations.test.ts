/**
 * The dashboard's Reservations view and the reservation rows of Activity, in a real headless
 * Chromium over a real `agent-bus web` and a real hub, on a bus whose reservations the real CLI
 * makes and whose collisions the real pre-tool hook records.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, startWeb } from '../helpers/browser.js';
import { json, readAudit, runCli, tempBus, type TempBus } from '../helpers/bus-env.js';
import { createToken, startHub } from '../helpers/hub.js';
import { waitUntil } from '../helpers/wait.js';
import { repoIn, type Reservation } from '../helpers/reservations.js';

let browser: Browser;
before(async () => {
  browser = await launchBrowser();
});
after(async () => {
  await browser.close();
});


/** `agent-bus reserve ... --name NAME --repo ROOT --json`: what it reserved. */
function reserve(bus: TempBus, root: string, name: string, args: string[]): Reservation[] {
  return json<{ reserved: Reservation[] }>(runCli(['reserve', ...args, '--name', name, '--repo', root, '--json'], { env: bus.env })).reserved;
}

function listed(bus: TempBus): Reservation[] {
  return json<{ reservations: Reservation[] }>(runCli(['reservations', '--json'], { env: bus.env })).reservations;
}

/** A Claude Code-shaped PreToolUse call through the real hook, as the agent `name`. */
function preTool(bus: TempBus, root: string, name: string, toolName: string, file: string): string {
  const result = runCli(['hook-pre-tool', '--client', 'claude'], {
    env: { ...bus.env, AGENT_BUS_NAME: name, AGENT_BUS_REPO: root },
    cwd: root,
    input: JSON.stringify({ session_id: `s-${name}`, cwd: root, hook_event_name: 'PreToolUse', tool_name: toolName, tool_input: { file_path: file, old_string: 'a', new_string: 'b' } }),
  });
  assert.equal(result.code, 0, result.stderr);
  return result.stdout;
}

/** The reservation's item in the view. */
function itemOf(page: Page, id: string) {
  return page.locator(`#reservation-list li.reservation[data-reservation="${id}"]`);
}

/** Seconds a countdown shows (`9s`, `1m 05s`, `1h 02m`). */
function secondsOf(text: string): number {
  const match = /^(?:(\d+)h )?(?:(\d+)m ?)?(?:(\d+)s)?$/.exec(text.trim());
  assert.ok(match !== null && text.trim() !== '', `not a countdown: ${JSON.stringify(text)}`);
  return Number(match[1] ?? 0) * 3600 + Number(match[2] ?? 0) * 60 + Number(match[3] ?? 0);
}

async function post(origin: string, cookie: string, path: string, body: unknown): Promise<{ status: number; error: string | undefined; body: Record<string, unknown> }> {
  const response = await fetch(`${origin}${path}`, { method: 'POST', headers: { cookie, origin, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const answer = (await response.json()) as Record<string, unknown>;
  return { status: response.status, error: typeof answer.error === 'string' ? answer.error : undefined, body: answer };
}

test('reservations made by the CLI appear live with holder, path, mode, reason and a ticking countdown; the human releases one, and one that runs out leaves', async () => {
  const bus = tempBus();
  const root = repoIn(bus);
  const web = await startWeb(bus, { AGENT_BUS_NAME: 'maria' });
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const errors: string[] = [];
  try {
    const page = await context.newPage();
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(web.url);
    await page.locator('#live.on').waitFor({ timeout: 10_000 });
    await page.locator('#reservation-list', { hasText: 'No live reservations.' }).waitFor();

    // Made after the page opened: it comes without a reload.
    const [auth] = reserve(bus, root, 'shop/claude', ['src/auth.ts', '--reason', 'rewriting <b>login</b>', '--ttl', '2h']);
    const [readme] = reserve(bus, root, 'shop/codex', ['README.md', '--shared', '--ttl', '8s']);
    assert.ok(auth !== undefined && readme !== undefined);
    const held = itemOf(page, auth.id);
    await held.waitFor({ timeout: 5_000 });
    assert.equal(await held.locator('.holder').textContent(), 'shop/claude');
    assert.equal(await held.locator('.path').textContent(), 'src/auth.ts');
    assert.equal(await held.locator('.mode').textContent(), 'exclusive');
    assert.equal(await held.locator('.repo-name').textContent(), 'in shop');
    // The reason is text: no element was made from it.
    assert.equal(await held.locator('.reason').textContent(), 'rewriting <b>login</b>');
    assert.equal(await page.locator('#reservation-list b').count(), 0);
    assert.equal(await held.locator('time.since').getAttribute('datetime'), auth.since);
    assert.equal(await held.locator('time.until').getAttribute('datetime'), auth.until);
    const authLeft = secondsOf((await held.locator('.ttl').textContent()) ?? '');
    assert.ok(authLeft > 7_000 && authLeft <= 7_200, `2h shown as ${authLeft} s`);

    // The short one counts down, second by second, with no request to the server.
    const shared = itemOf(page, readme.id);
    await shared.waitFor({ timeout: 5_000 });
    assert.equal(await shared.locator('.mode').textContent(), 'shared');
    const first = secondsOf((await shared.locator('.ttl').textContent()) ?? '');
    assert.ok(first >= 1 && first <= 8, `8 s shown as ${first} s`);
    await page.waitForFunction(
      ({ id, was }) => {
        const text = document.querySelector(`[data-reservation="${id}"] .ttl`)?.textContent ?? '';
        return text !== '' && text !== was;
      },
      { id: readme.id, was: `${first}s` },
      { timeout: 3_000 },
    );
    const later = secondsOf((await shared.locator('.ttl').textContent()) ?? '');
    assert.ok(later < first, `the countdown went from ${first} s to ${later} s`);

    // The human releases another's: gone from the view, from the bus, and audited as theirs.
    await page.getByRole('button', { name: "Release shop/claude's reservation of src/auth.ts in shop" }).click();
    await held.waitFor({ state: 'detached', timeout: 5_000 });
    await page.locator('#reservation-result.ok', { hasText: "Released shop/claude's src/auth.ts in shop." }).waitFor();
    assert.deepEqual(
      listed(bus).map((row) => row.id),
      [readme.id],
      'the released reservation is still on the bus',
    );
    const releases = readAudit(bus.audit).filter((row) => row.op === 'release');
    assert.deepEqual(
      releases.map((row) => [row.actor, row.from, row.to, row.body_preview, row.message_id]),
      [['maria', 'shop/claude', 'shop', 'src/auth.ts', auth.id]],
    );
    await page.locator('#activity-list li.op-release', { hasText: "maria released shop/claude's src/auth.ts in shop" }).waitFor({ timeout: 3_000 });
    await page.locator('#activity-list li.op-reserve', { hasText: 'shop/claude reserved src/auth.ts in shop (exclusive' }).waitFor();

    // The one that runs out leaves the view at its time, and the bus ends it (an expire row).
    await shared.waitFor({ state: 'detached', timeout: 10_000 });
    await page.locator('#activity-list li.op-expire', { hasText: 'shop/codex no longer holds README.md in shop' }).waitFor({ timeout: 5_000 });
    assert.deepEqual(listed(bus), []);
    await page.locator('#reservation-list', { hasText: 'No live reservations.' }).waitFor();
    assert.deepEqual(errors, []);

    // The API takes a reservation's id, and says in one line what is wrong.
    const cookie = `agent_bus_dashboard_${new URL(web.origin).port}=${web.key}`;
    for (const [body, expected] of [
      [{}, 'reservation_id is required'],
      [{ reservation_id: 7 }, 'reservation_id must be text'],
      [{ reservation_id: auth.id }, `no live reservation '${auth.id}': it was released or has expired`],
    ] as const) {
      const refused = await post(web.origin, cookie, '/api/reservations/release', body);
      assert.equal(refused.status, 400, JSON.stringify(body));
      assert.equal(refused.error, expected);
    }
  } finally {
    await context.close();
    await web.stop();
    bus.cleanup();
  }
});

test('Activity shows collisions and refused writes readably, and its op filter picks them out', async () => {
  const bus = tempBus();
  const root = repoIn(bus);
  for (const name of ['shop/claude', 'shop/codex']) assert.equal(runCli(['send', 'joining', '--to', name, '--name', name], { env: bus.env }).code, 0);
  const web = await startWeb(bus);
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const errors: string[] = [];
  try {
    const page = await context.newPage();
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(web.url);
    await page.locator('#live.on').waitFor({ timeout: 10_000 });

    // Two agents write one file within the window: a collision, audited and pushed to the page.
    assert.equal(preTool(bus, root, 'shop/claude', 'Edit', `${root}/src/shared.ts`), '');
    assert.match(preTool(bus, root, 'shop/codex', 'Write', `${root}/src/shared.ts`), /shop\/claude wrote src\/shared\.ts/);
    const collisions = readAudit(bus.audit).filter((row) => row.op === 'collision');
    assert.equal(collisions.length, 1, 'the hook recorded no collision');
    const collision = page.locator('#activity-list li.op-collision');
    await collision.waitFor({ timeout: 3_000 });
    assert.equal(await collision.locator('.op').textContent(), 'collision');
    assert.equal(await collision.locator('.who').textContent(), 'shop/codex');
    assert.match((await collision.textContent()) ?? '', /shop\/codex\s*wrote src\/shared\.ts in shop, which shop\/claude also wrote (just now|\d+ s ago)$/);

    // A write refused by another's reservation: who was refused, which file, who holds it.
    reserve(bus, root, 'shop/codex', ['src/auth.ts', '--reason', 'login']);
    assert.match(preTool(bus, root, 'shop/claude', 'Edit', `${root}/src/auth.ts`), /"permissionDecision":"deny"/);
    const denied = page.locator('#activity-list li.op-deny');
    await denied.waitFor({ timeout: 3_000 });
    assert.match((await denied.textContent()) ?? '', /shop\/claude\s*was refused a write of src\/auth\.ts in shop: shop\/codex holds src\/auth\.ts \(ends in \d+ (min|h)\)$/);

    // The op filter has every reservation op, and shows only the op chosen.
    const ops = await page.locator('#activity-op option').allTextContents();
    for (const op of ['reserve', 'release', 'expire', 'deny', 'collision']) assert.ok(ops.includes(op), `no ${op} in the op filter: ${ops.join(' ')}`);
    await page.getByLabel('Op', { exact: true }).selectOption('collision');
    await page.waitForFunction(() => {
      const rows = [...document.querySelectorAll('#activity-list li')];
      return rows.length === 1 && rows[0]?.classList.contains('op-collision');
    });
    await page.getByLabel('Op', { exact: true }).selectOption('deny');
    await page.waitForFunction(() => {
      const rows = [...document.querySelectorAll('#activity-list li')];
      return rows.length === 1 && rows[0]?.classList.contains('op-deny');
    });
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
    await web.stop();
    bus.cleanup();
  }
});

test("on the hub: a token's dashboard shows every reservation, releases only its own agent's, and is refused another's", async () => {
  const bus = tempBus();
  const root = repoIn(bus);
  const hub = await startHub(bus);
  const lead = createToken(bus, 'lead');
  const codex = createToken(bus, 'shop/codex');
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  try {
    const [theirs] = reserve(bus, root, 'shop/claude', ['src/auth.ts', '--reason', 'rewriting login']);
    const [own] = reserve(bus, root, 'shop/codex', ['docs/']);
    assert.ok(theirs !== undefined && own !== undefined);

    const page = await context.newPage();
    const requests: string[] = [];
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (url.pathname.startsWith('/api/')) requests.push(url.pathname);
    });
    await page.goto(`${hub.url}/`);
    await page.getByLabel('Token').fill(lead.token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#whoami', { hasText: 'On the hub as lead' }).waitFor();
    await itemOf(page, theirs.id).locator('.reason', { hasText: 'rewriting login' }).waitFor();
    await itemOf(page, own.id).locator('.path', { hasText: 'docs/**' }).waitFor();
    assert.equal(await page.locator('#reservation-list button').count(), 0, 'a Release button shown to a token that holds none');

    const port = new URL(hub.url).port;
    const asLead = `agent_bus_dashboard_${port}=${lead.token}`;
    const refused = await post(hub.url, asLead, '/api/reservations/release', { reservation_id: theirs.id });
    assert.equal(refused.status, 403);
    assert.equal(refused.error, "over the hub a token releases only its own agent's reservations: release shop/claude's on the hub's machine (agent-bus release --holder shop/claude there)");
    assert.equal(listed(bus).length, 2, 'a refused release released something');
    assert.equal(readAudit(bus.audit).filter((row) => row.op === 'release').length, 0);

    // The token of shop/codex releases its own, audited as that agent.
    const asCodex = `agent_bus_dashboard_${port}=${codex.token}`;
    const me = (await (await fetch(`${hub.url}/api/me`, { headers: { cookie: asCodex } })).json()) as { name: string; may_release_reservations: boolean };
    assert.deepEqual([me.name, me.may_release_reservations], ['shop/codex', false]);
    assert.equal((await post(hub.url, asCodex, '/api/reservations/release', { reservation_id: theirs.id })).status, 403);
    const released = await post(hub.url, asCodex, '/api/reservations/release', { reservation_id: own.id });
    assert.equal(released.status, 200, released.error);
    assert.deepEqual(
      listed(bus).map((row) => row.id),
      [theirs.id],
    );
    const rows = readAudit(bus.audit).filter((row) => row.op === 'release');
    assert.deepEqual(
      rows.map((row) => [row.actor, row.from, row.body_preview]),
      [['shop/codex', 'shop/codex', 'docs/**']],
    );
    // The lead's page follows: the released one leaves without a reload.
    await itemOf(page, own.id).waitFor({ state: 'detached', timeout: 5_000 });
    await waitUntil(async () => (await page.locator('#reservation-list li.reservation').count()) === 1, 'one reservation left on the page');
    // Reading the reservations changes nothing when nothing has run out: an idle page asks for nothing more.
    await page.waitForTimeout(1_500);
    const asked = requests.length;
    await page.waitForTimeout(2_500);
    assert.deepEqual(requests.slice(asked), [], 'the page kept reading while nothing happened');
    // A session of the token's agent holds as its session address: the token releases that too.
    const session = reserve(bus, root, 'shop/codex-2', ['lib/'])[0] as Reservation;
    const sessions = await post(hub.url, asCodex, '/api/reservations/release', { reservation_id: session.id });
    assert.equal(sessions.status, 200, sessions.error);
    assert.deepEqual(listed(bus).map((row) => row.id), [theirs.id]);
  } finally {
    await context.close();
    await hub.stop();
    bus.cleanup();
  }
});
