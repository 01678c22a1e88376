/**
 * The hub (`agent-bus serve --http`) as another machine meets it: a real hub
 * process with its own HOME and database, an MCP client over Streamable HTTP
 * holding only a URL and a token, and every way of asking wrongly.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { filesUnder, ON_POSTGRES, readAudit, runCli, tempBus, type TempBus, messageLines } from '../helpers/bus-env.js';
import { connectHttp, createToken, rawCall, requestsInFlight, slowCall, startHub, withHub } from '../helpers/hub.js';
import { sleep, waitUntil } from '../helpers/wait.js';

const CHALLENGE = 'Bearer realm="agent-bus", error="invalid_token"';

/** Every byte the bus keeps on disk (the database files, the audit log), for a search. */
function storedText(bus: TempBus): string {
  let text = filesUnder(bus.folder).map((path) => readFileSync(path).toString('latin1')).join('');
  if (bus.engine === 'postgres') text += JSON.stringify(bus.rows('SELECT * FROM tokens'));
  return text;
}

test('another machine with only a URL and a token sends and reads over MCP; the mail lands in the hub\'s bus, audited with the hub and the token id', withHub({}, async (bus, hub) => {
  const alice = createToken(bus, 'shop/claude');
  const bob = createToken(bus, 'lab/codex');
  assert.match(alice.token, /^abt_[0-9a-f]{16}_[A-Za-z0-9_-]{43}$/);
  const remoteAlice = await connectHttp(hub.url, alice.token);
  const remoteBob = await connectHttp(hub.url, bob.token);
  try {
    const tools = (await remoteAlice.client.listTools()).tools.map((tool) => tool.name);
    for (const tool of ['whoami', 'send_message', 'read_inbox', 'list_agents', 'read_thread', 'set_session', 'tail_audit']) assert.ok(tools.includes(tool), tool);
    for (const tool of (await remoteAlice.client.listTools()).tools) {
      // search_messages' `from` filters the mail found by its sender, notify_when's `name` is the agent to
      // watch, stop_agent's and agent_logs' the agent to act on; whose search, watch or act it is comes from the token.
      const args = Object.keys((tool.inputSchema as { properties?: object }).properties ?? {}).filter(
        (arg) => !(tool.name === 'search_messages' && arg === 'from') && !(['notify_when', 'stop_agent', 'agent_logs'].includes(tool.name) && arg === 'name'),
      );
      assert.ok(!args.some((arg) => /^(from|sender|name|agent|token)$/.test(arg)), `${tool.name} takes no identity: ${args.join(', ')}`);
    }
    const whoami = await remoteAlice.call('whoami');
    assert.equal((whoami.value as { name: string }).name, 'shop/claude');
    // A would-be sender's name in the arguments is not an identity: the token is.
    const sent = await remoteAlice.call('send_message', { to: 'lab/codex', body: 'over the hub', from: 'lab/codex' });
    assert.equal(sent.isError, false, sent.text);
    const inbox = await remoteBob.call('read_inbox');
    assert.deepEqual((inbox.value as Array<{ from: string; body: string }>).map((row) => [row.from, row.body]), [['shop/claude', 'over the hub']]);
    // The hub's own bus holds it, read and from the token's agent.
    assert.deepEqual(bus.rows("SELECT from_agent, to_agent, CASE WHEN read_at IS NULL THEN 'unread' ELSE 'read' END AS state FROM messages WHERE body = 'over the hub'"), [{ from_agent: 'shop/claude', to_agent: 'lab/codex', state: 'read' }]);
    const rows = readAudit(bus.audit).filter((row) => row.body_preview === 'over the hub');
    assert.deepEqual(rows.map((row) => [row.op, row.actor, row.token_id]), [
      ['send', 'shop/claude', alice.id],
      ['read', 'lab/codex', bob.id],
    ]);
    assert.ok(rows.every((row) => typeof row.hub === 'string' && (row.hub as string).endsWith(`:${new URL(hub.url).port}`)), JSON.stringify(rows));
  } finally {
    await remoteAlice.close();
    await remoteBob.close();
  }
  assert.equal(await hub.stop(), 0);
  // No token anywhere after it was made: not in the database files, the audit log, the hub's output or the listing.
  const listing = runCli(['token', 'list', '--json'], { env: bus.env });
  const listingText = runCli(['token', 'list'], { env: bus.env });
  for (const { token } of [alice, bob]) {
    const secret = token.slice('abt_'.length + 17);
    for (const [where, text] of [['the store', storedText(bus)], ['the hub', hub.output()], ['token list', listing.stdout + listingText.stdout]] as const) {
      assert.ok(!text.includes(secret), `${where} holds a token`);
    }
  }
  const listed = JSON.parse(listing.stdout) as Array<Record<string, unknown>>;
  assert.deepEqual(listed.map((row) => Object.keys(row).sort()), [0, 1].map(() => ['created_at', 'expires_at', 'id', 'last_used_at', 'name', 'repo', 'revoked_at', 'scopes']));
  assert.ok(listed.every((row) => typeof row.last_used_at === 'string'), 'each token notes its use');
  assert.equal((statSync(bus.audit).mode & 0o777).toString(8), '600');
}));

test('asking wrongly: no token, a bad, expired or revoked one get 401 and a challenge that starts no OAuth; GET and DELETE 405; a foreign Origin 403; an oversized body 413', withHub({}, async (bus, hub) => {
  const good = createToken(bus, 'shop/claude');
  const brief = createToken(bus, 'shop/codex', ['--expires', '1s']);
  const doomed = createToken(bus, 'lab/opencode');
  const ok = await rawCall(hub.url, { authorization: `Bearer ${good.token}` });
  assert.equal(ok.status, 200);
  assert.match(await ok.text(), /shop\/claude/);
  const refused = async (headers: Record<string, string>, why: RegExp): Promise<void> => {
    const response = await rawCall(hub.url, headers);
    assert.equal(response.status, 401);
    assert.equal(response.headers.get('www-authenticate'), CHALLENGE);
    const body = (await response.json()) as { error: string; error_description: string };
    assert.equal(body.error, 'invalid_token');
    assert.match(body.error_description, why);
  };
  await refused({}, /needs a bearer token/);
  await refused({ authorization: good.token }, /needs a bearer token/);
  await refused({ authorization: 'Bearer nonsense' }, /not an agent-bus token/);
  // The right shape and a real id, the wrong secret.
  await refused({ authorization: `Bearer ${good.token.slice(0, -4)}AAAA` }, /no such token/);
  await waitUntil(() => Date.now() > Date.parse(brief.expires_at ?? '') + 1, 'the one-second token to expire');
  await refused({ authorization: `Bearer ${brief.token}` }, /expired/);
  assert.equal((await rawCall(hub.url, { authorization: `Bearer ${doomed.token}` })).status, 200);
  const revoke = runCli(['token', 'revoke', doomed.id], { env: bus.env });
  assert.equal(revoke.code, 0, revoke.stderr);
  assert.match(revoke.stdout, new RegExp(`revoked 1 token: ${doomed.id}`));
  await refused({ authorization: `Bearer ${doomed.token}` }, /revoked/);
  for (const method of ['GET', 'DELETE']) {
    const response = await rawCall(hub.url, { authorization: `Bearer ${good.token}` }, undefined, method);
    assert.equal(response.status, 405, method);
    await response.body?.cancel();
  }
  for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-authorization-server']) {
    const response = await fetch(`${hub.url}${path}`);
    assert.equal(response.status, 404, path);
    await response.body?.cancel();
  }
  const foreign = await rawCall(hub.url, { authorization: `Bearer ${good.token}`, origin: 'http://evil.example' });
  assert.equal(foreign.status, 403);
  await foreign.body?.cancel();
  const sameOrigin = await rawCall(hub.url, { authorization: `Bearer ${good.token}`, origin: hub.url });
  assert.equal(sameOrigin.status, 200);
  await sameOrigin.body?.cancel();
  const huge = await rawCall(hub.url, { authorization: `Bearer ${good.token}` }, 'x'.repeat(3 << 20));
  assert.equal(huge.status, 413);
  await huge.body?.cancel();
  const notJson = await rawCall(hub.url, { authorization: `Bearer ${good.token}` }, '{not json');
  assert.equal(notJson.status, 400);
  await notJson.body?.cancel();
  // Nothing the refused requests asked for was done: only the good token's agent ever spoke.
  assert.deepEqual(bus.rows('SELECT COUNT(*) AS n FROM messages'), [{ n: 0 }]);
}));

test('a flood from one token is answered 429 with Retry-After; another token is not held up by it', withHub({ AGENT_BUS_HTTP_RATE: '5' }, async (bus, hub) => {
  const flooder = createToken(bus, 'shop/claude');
  const other = createToken(bus, 'lab/codex');
  const statuses: number[] = [];
  let retryAfter: string | null = null;
  for (let i = 0; i < 12; i++) {
    const response = await rawCall(hub.url, { authorization: `Bearer ${flooder.token}` });
    statuses.push(response.status);
    if (response.status === 429) retryAfter = response.headers.get('retry-after');
    await response.body?.cancel();
  }
  assert.ok(statuses.slice(0, 5).every((status) => status === 200), statuses.join(' '));
  assert.ok(statuses.includes(429), statuses.join(' '));
  assert.match(retryAfter ?? '', /^[1-9]\d*$/);
  const calm = await rawCall(hub.url, { authorization: `Bearer ${other.token}` });
  assert.equal(calm.status, 200);
  await calm.body?.cancel();
}));

test('/healthz answers 200 with no token; SIGTERM stops taking connections, lets the requests in flight finish, exits 0, and a restarted hub has every acknowledged send', async () => {
  const bus = tempBus();
  let hub = await startHub(bus);
  try {
    const health = await fetch(`${hub.url}/healthz`);
    assert.equal(health.status, 200);
    assert.deepEqual(await health.json(), { status: 'ok' });
    const { token } = createToken(bus, 'shop/claude');
    createToken(bus, 'lab/codex');
    const sendBody = (i: number): unknown => ({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'send_message', arguments: { to: 'lab/codex', body: `m${i}` } } });
    const quick = await rawCall(hub.url, { authorization: `Bearer ${token}` }, sendBody(0));
    assert.equal(quick.status, 200);
    assert.ok(!(await quick.text()).includes('"isError":true'));
    // Five sends whose bodies are half written: the hub holds each as a request in flight.
    const slow = [1, 2, 3, 4, 5].map((i) => slowCall(hub.url, { authorization: `Bearer ${token}` }, sendBody(i)));
    const started = Date.now();
    await waitUntil(async () => (await requestsInFlight(hub.url)) >= slow.length, 'the hub to hold the five sends', 10_000, 20);
    const stopped = hub.stop();
    // Draining: it takes no new connection, and is still running for the five.
    await waitUntil(
      () => fetch(`${hub.url}/healthz`).then(async (response) => (await response.body?.cancel(), false), () => true),
      'the hub to take no new connection after SIGTERM',
      10_000 - (Date.now() - started),
      20,
    );
    assert.equal(hub.process.exitCode, null, 'the hub waits for the requests in flight');
    for (const call of slow) call.finish();
    const answers = await Promise.all(slow.map((call) => call.answer));
    assert.equal(await stopped, 0);
    for (const answer of answers) {
      assert.equal(answer.status, 200, answer.body);
      assert.ok(!answer.body.includes('"isError":true'), answer.body);
    }
    hub = await startHub(bus);
    const stored = bus.rows<{ body: string }>('SELECT body FROM messages ORDER BY body').map((row) => row.body);
    assert.deepEqual(stored, ['m0', 'm1', 'm2', 'm3', 'm4', 'm5'], 'every acknowledged send is kept');
    assert.equal((await fetch(`${hub.url}/healthz`)).status, 200);
  } finally {
    await hub.stop();
    bus.cleanup();
  }
});

test('the hub listens on loopback unless told otherwise; a port in use is one line and exit 1', withHub({}, async (bus, hub) => {
  assert.match(hub.url, /^http:\/\/127\.0\.0\.1:\d+$/);
  const port = new URL(hub.url).port;
  const clash = runCli(['serve', '--http', '--port', port], { env: bus.env });
  assert.equal(clash.code, 1);
  assert.equal(messageLines(clash.stderr).length, 1, clash.stderr);
  assert.match(clash.stderr, new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port}: the port is in use`));
  const bad = runCli(['serve', '--http', '--port', 'eighty'], { env: bus.env });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--port must be a port number/);
  const stray = runCli(['serve', '--port', '9'], { env: bus.env });
  assert.equal(stray.code, 2);
  assert.match(stray.stderr, /--port is for the hub; add --http/);
}));

test('token create, list and revoke: the token shown once, bad input refused in one line with nothing written', () => {
  const bus = tempBus();
  try {
    const made = runCli(['token', 'create', 'shop/claude', '--expires', '90d', '--scope', 'metrics'], { env: bus.env });
    assert.equal(made.code, 0, made.stderr);
    assert.match(made.stdout, /^abt_[0-9a-f]{16}_[A-Za-z0-9_-]{43}\n$/);
    assert.match(made.stderr, /shown this once/);
    const json = createToken(bus, 'shop/claude');
    assert.deepEqual(Object.keys(json).sort(), ['expires_at', 'id', 'name', 'token']);
    assert.equal(json.expires_at, null);
    const listed = JSON.parse(runCli(['token', 'list', '--json'], { env: bus.env }).stdout) as Array<{ id: string; scopes: string[]; expires_at: string | null }>;
    assert.equal(listed.length, 2);
    assert.deepEqual(listed[0]?.scopes, ['metrics']);
    assert.ok(Date.parse(listed[0]?.expires_at ?? '') - Date.now() > 89 * 86_400_000);
    // The agent is on the roster at once, so mail to it waits for it.
    assert.equal(runCli(['send', 'hello', '--to', 'shop/claude'], { env: bus.env }).code, 0);
    for (const [args, pattern] of [
      [['token', 'create', 'bad name'], /invalid name/],
      [['token', 'create', 'shop/x', '--expires', 'soon'], /bad duration 'soon'/],
      [['token', 'create', 'shop/x', '--scope', 'admin'], /unknown scope 'admin'/],
      [['token', 'revoke', 'nobody/here'], /no token has the id or speaks for 'nobody\/here'/],
      [['token', 'frobnicate'], /expected create, list or revoke/],
      [['token', 'create'], /give the agent NAME/],
    ] as const) {
      const result = runCli([...args], { env: bus.env });
      assert.notEqual(result.code, 0, args.join(' '));
      assert.equal(messageLines(result.stderr).length, 1, result.stderr);
      assert.match(result.stderr, pattern);
    }
    assert.equal(bus.rows('SELECT token_id FROM tokens').length, 2, 'a refused create wrote nothing');
    const tokenRows = readAudit(bus.audit).filter((row) => row.op === 'token');
    assert.deepEqual(tokenRows.map((row) => [row.actor, row.to, row.token_id]), [
      ['operator', 'shop/claude', listed[0]?.id],
      ['operator', 'shop/claude', json.id],
    ]);
    assert.ok(tokenRows.every((row) => !JSON.stringify(row).includes(json.token.slice('abt_'.length + 17))), 'never the token');
    const revoked = runCli(['token', 'revoke', 'shop/claude', '--json'], { env: bus.env });
    assert.deepEqual((JSON.parse(revoked.stdout) as { revoked: string[] }).revoked.length, 2);
    const again = runCli(['token', 'revoke', 'shop/claude'], { env: bus.env });
    assert.equal(again.code, 1);
    assert.match(again.stderr, /revoked already/);
    assert.match(runCli(['token', 'list'], { env: bus.env }).stdout, /revoked/);
    assert.equal(readAudit(bus.audit).filter((row) => row.op === 'token' && String(row.body_preview).startsWith('token revoke')).length, 2, 'each revoke audited');
    assert.ok(!existsSync(join(bus.dir, 'home', '.claude-agent-bus')), 'the real default bus folder is untouched');
  } finally {
    bus.cleanup();
  }
});

/** An address of this machine other than loopback, to reach a hub as another machine would. */
function outsideAddress(): string | null {
  for (const addresses of Object.values(networkInterfaces())) {
    for (const address of addresses ?? []) if (address.family === 'IPv4' && !address.internal) return address.address;
  }
  return null;
}

test('/metrics: requests by route and status, latency, sends and deliveries, tokens used; from loopback to anyone, from elsewhere only with the metrics scope', async () => {
  const bus = tempBus();
  const outside = outsideAddress();
  const hub = await startHub(bus, {}, outside === null ? [] : ['--host', '0.0.0.0']);
  try {
    const alice = createToken(bus, 'shop/claude');
    const watcher = createToken(bus, 'ops/prometheus', ['--scope', 'metrics']);
    createToken(bus, 'lab/codex');
    const local = hub.url.replace('0.0.0.0', '127.0.0.1');
    const remoteAlice = await connectHttp(local, alice.token);
    try {
      assert.equal((await remoteAlice.call('send_message', { to: 'lab/codex', body: 'counted' })).isError, false);
    } finally {
      await remoteAlice.close();
    }
    assert.equal((await rawCall(local, {})).status, 401);
    const scraped = await fetch(`${local}/metrics`);
    assert.equal(scraped.status, 200);
    assert.match(scraped.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    const text = await scraped.text();
    assert.match(text, /^agent_bus_http_requests_total\{route="\/mcp",status="200"\} [1-9]\d*$/m);
    assert.match(text, /^agent_bus_http_requests_total\{route="\/mcp",status="401"\} 1$/m);
    assert.match(text, /^agent_bus_http_request_duration_seconds_bucket\{route="\/mcp",le="\+Inf"\} [1-9]\d*$/m);
    assert.match(text, /^agent_bus_sends_total 1$/m);
    assert.match(text, /^agent_bus_deliveries_total 0$/m);
    assert.match(text, new RegExp(`^agent_bus_token_requests_total\\{token_id="${alice.id}"\\} [1-9]\\d*$`, 'm'));
    assert.match(text, /^agent_bus_tokens_used 1$/m);
    assert.match(text, /^agent_bus_http_requests_in_flight 1$/m, 'the scrape alone is in flight');
    assert.ok(!text.includes(alice.token.slice('abt_'.length + 17)), 'no token in the metrics');
    if (outside === null) return;
    const far = `http://${outside}:${new URL(hub.url).port}`;
    const anonymous = await fetch(`${far}/metrics`);
    assert.equal(anonymous.status, 401);
    await anonymous.body?.cancel();
    const unscoped = await fetch(`${far}/metrics`, { headers: { authorization: `Bearer ${alice.token}` } });
    assert.equal(unscoped.status, 403);
    assert.match(unscoped.headers.get('www-authenticate') ?? '', /insufficient_scope/);
    await unscoped.body?.cancel();
    const scoped = await fetch(`${far}/metrics`, { headers: { authorization: `Bearer ${watcher.token}` } });
    assert.equal(scoped.status, 200);
    assert.match(await scoped.text(), /agent_bus_sends_total 1/);
  } finally {
    await hub.stop();
    bus.cleanup();
  }
});

test('two hubs on one database deliver to each other with no sticky sessions; a hub killed with SIGKILL mid-send loses nothing it acknowledged', { skip: !ON_POSTGRES && 'hubs share a bus across machines through PostgreSQL; this suite runs on SQLite (the PostgreSQL run covers it)' }, async () => {
  const bus = tempBus();
  const first = await startHub(bus);
  let second = await startHub(bus);
  try {
    const alice = createToken(bus, 'shop/claude');
    const bob = createToken(bus, 'lab/codex');
    // Alice's requests alternate between the hubs; Bob reads through the other one.
    for (let i = 0; i < 6; i++) {
      const hub = i % 2 === 0 ? first : second;
      const response = await rawCall(hub.url, { authorization: `Bearer ${alice.token}` }, { jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'send_message', arguments: { to: 'lab/codex', body: `hop ${i}` } } });
      assert.equal(response.status, 200);
      assert.ok(!(await response.text()).includes('"isError":true'));
    }
    const remoteBob = await connectHttp(second.url, bob.token);
    try {
      const inbox = await remoteBob.call('read_inbox');
      assert.deepEqual((inbox.value as Array<{ body: string }>).map((row) => row.body), [0, 1, 2, 3, 4, 5].map((i) => `hop ${i}`));
    } finally {
      await remoteBob.close();
    }
    // Sends in flight on the second hub when it is killed outright: every one it acknowledged is stored.
    const acknowledged: string[] = [];
    const calls = Array.from({ length: 60 }, (_, i) =>
      rawCall(second.url, { authorization: `Bearer ${alice.token}` }, { jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'send_message', arguments: { to: 'lab/codex', body: `kill ${i}` } } }).then(
        async (response) => {
          const text = await response.text();
          if (response.status === 200 && !text.includes('"isError":true')) acknowledged.push(`kill ${i}`);
        },
        () => undefined,
      ),
    );
    await sleep(30); // Some of the sixty in flight, some not yet sent.
    second.process.kill('SIGKILL');
    await Promise.all(calls);
    await second.stop();
    const stored = new Set(bus.rows<{ body: string }>("SELECT body FROM messages WHERE body LIKE 'kill %'").map((row) => row.body));
    for (const body of acknowledged) assert.ok(stored.has(body), `${body} was acknowledged and is kept`);
    // The first hub never noticed: it still serves, and a new hub takes the other's place.
    second = await startHub(bus);
    const after = await rawCall(first.url, { authorization: `Bearer ${bob.token}` });
    assert.equal(after.status, 200);
    await after.body?.cancel();
  } finally {
    await first.stop();
    await second.stop();
    bus.cleanup();
  }
});
