/**
 * Integrations over a real hub: a service posts signed deliveries to /v1/integrations/NAME and they
 * become mail (or notices) from the integration's name; a replay is taken once; a bad signature is
 * refused with nothing stored; a rotated-out secret works for its grace and not after; the CLI sets
 * them up and never shows a secret but once.
 */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { test } from 'node:test';
import { agentEnv, register } from '../helpers/agents.js';
import { json, readAudit, runCli, type TempBus, messageLines } from '../helpers/bus-env.js';
import { withHub } from '../helpers/hub.js';
import { sleep } from '../helpers/wait.js';

interface Made {
  name: string;
  kind: string;
  to: string;
  path: string;
  secret: string;
  previous_secret_until: string | null;
}

function add(bus: TempBus, args: string[]): Made {
  const made = runCli(['integration', 'add', ...args, '--json'], { env: bus.env });
  assert.equal(made.code, 0, made.stderr);
  return json<Made>(made);
}

/** Post raw bytes to the hub with these headers: the status and the JSON answer. */
async function post(url: string, path: string, body: string, headers: Record<string, string>): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const githubSignature = (secret: string, body: string): string => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

/** A workflow_run failure, as GitHub delivers it (the fields agent-bus reads, and some it does not). */
function workflowFailure(repo: string): string {
  return JSON.stringify({
    action: 'completed',
    workflow_run: { id: 9, name: 'CI', run_number: 42, status: 'completed', conclusion: 'failure', head_branch: 'main', head_sha: '3f2c1e0a9b', event: 'push', html_url: `https://github.com/acme/${repo}/actions/runs/9` },
    repository: { id: 1, name: repo, full_name: `acme/${repo}` },
    sender: { login: 'alice', type: 'User' },
  });
}

function inbox(bus: TempBus, name: string): Array<{ from: string; body: string; urgent: boolean }> {
  return json<Array<{ from: string; body: string; urgent: boolean }>>(runCli(['inbox', '--name', name, '--json', '--peek'], { env: bus.env }));
}

test("a signed GitHub workflow_run failure becomes an alert in the repo's agents' inboxes from github, with the link; the same delivery again sends nothing; a wrong signature gets 401 and stores nothing", withHub({}, async (bus, hub) => {
  register(agentEnv(bus, 'shop/claude', '/repos/shop'));
  register(agentEnv(bus, 'shop/codex', '/repos/shop'));
  const made = add(bus, ['github', '--kind', 'github', '--to', '{repo}']);
  assert.deepEqual([made.name, made.kind, made.to, made.path, made.previous_secret_until], ['github', 'github', '{repo}', '/v1/integrations/github', null]);
  assert.match(made.secret, /^abwh_[A-Za-z0-9_-]{43}$/);
  // A first-class sender on the roster, marked as an integration; it takes no token (no MCP, no token API).
  assert.equal(json<Array<{ name: string; kind: string }>>(runCli(['agents', '--json'], { env: bus.env })).find((agent) => agent.name === 'github')?.kind, 'integration');
  const token = runCli(['token', 'create', 'github'], { env: bus.env });
  assert.deepEqual([token.code, messageLines(token.stderr)], [2, ["agent-bus: 'github' is an integration: it sends only through its signed deliveries, and takes no token"]]);
  const body = workflowFailure('shop');
  const headers = { 'x-github-event': 'workflow_run', 'x-github-delivery': '72d3162e-cc78-11e3-81ab-4c9367dc0958', 'x-hub-signature-256': githubSignature(made.secret, body) };
  const first = await post(hub.url, made.path, body, headers);
  assert.equal(first.status, 200, JSON.stringify(first.body));
  assert.equal(first.body.result, 'sent');
  const expected = '[github] workflow_run in acme/shop: workflow CI #42 failed (failure) on main (push by alice)\nhttps://github.com/acme/shop/actions/runs/9';
  for (const name of ['shop/claude', 'shop/codex']) {
    assert.deepEqual(inbox(bus, name).filter((message) => message.from === 'github').map((message) => [message.body, message.urgent]), [[expected, false]], `${name} got it once, as an alert (not critical: not urgent)`);
  }
  const again = await post(hub.url, made.path, body, headers);
  assert.deepEqual([again.status, again.body.result], [200, 'duplicate'], 'a replay is answered 2xx');
  assert.equal(inbox(bus, 'shop/claude').filter((message) => message.from === 'github').length, 1, 'and sends nothing again');

  const count = (): number => bus.rows('SELECT message_id FROM messages').length;
  const before = count();
  const forged = await post(hub.url, made.path, body, { ...headers, 'x-github-delivery': 'other', 'x-hub-signature-256': githubSignature('not the secret', body) });
  assert.deepEqual([forged.status, forged.body.result], [401, 'refused']);
  const unsigned = await post(hub.url, made.path, body, { 'x-github-event': 'workflow_run', 'x-github-delivery': 'third' });
  assert.deepEqual([unsigned.status, unsigned.body.detail], [401, 'no X-Hub-Signature-256 header']);
  assert.equal(count(), before, 'nothing stored');
  const refusals = readAudit(bus.audit).filter((row) => row.op === 'integration' && row.event === 'refused');
  assert.equal(refusals.length, 2, 'each refusal audited');
  assert.ok(!JSON.stringify(readAudit(bus.audit)).includes(made.secret), 'the secret is never audited');
  assert.equal((await post(hub.url, '/v1/integrations/nobody', body, headers)).status, 404);
  // A repo nobody holds: taken (2xx), nothing sent, audited.
  const elsewhere = workflowFailure('lab');
  const dropped = await post(hub.url, made.path, elsewhere, { ...headers, 'x-github-delivery': 'fourth', 'x-hub-signature-256': githubSignature(made.secret, elsewhere) });
  assert.deepEqual([dropped.status, dropped.body.result], [202, 'dropped']);
  assert.ok(readAudit(bus.audit).some((row) => row.op === 'integration' && row.event === 'dropped'));
  // An event agent-bus does not know is one line naming it.
  const star = JSON.stringify({ action: 'created', repository: { name: 'shop', full_name: 'acme/shop' }, sender: { login: 'bob' } });
  const starred = await post(hub.url, made.path, star, { 'x-github-event': 'star', 'x-github-delivery': 'fifth', 'x-hub-signature-256': githubSignature(made.secret, star) });
  assert.equal(starred.status, 200);
  assert.ok(inbox(bus, 'shop/claude').some((message) => message.body === '[github] star (created) event in acme/shop'));
}));

test('a generic delivery is signed over its timestamp and body: within five minutes it is mail from the integration, a stale one is refused; plain text is the body; it sends only where it was set up to', withHub({}, async (bus, hub) => {
  register(agentEnv(bus, 'shop/claude', '/repos/shop'));
  const made = add(bus, ['ci', '--kind', 'generic', '--to', 'shop', '--severity', 'critical']);
  const signed = (body: string, at = Math.floor(Date.now() / 1000), secret = made.secret): Record<string, string> => ({
    'x-agent-bus-timestamp': String(at),
    'x-agent-bus-signature': `sha256=${createHmac('sha256', secret).update(`${at}.${body}`).digest('hex')}`,
  });
  const json1 = JSON.stringify({ body: 'deploy failed on prod', thread_id: 'deploy-77' });
  const sent = await post(hub.url, made.path, json1, { ...signed(json1), 'x-agent-bus-delivery': 'd-1' });
  assert.deepEqual([sent.status, sent.body.result], [200, 'sent']);
  const got = inbox(bus, 'shop/claude').filter((message) => message.from === 'ci');
  assert.deepEqual(got.map((message) => [message.body, message.urgent]), [['deploy failed on prod', true]], 'critical: urgent');
  const stale = await post(hub.url, made.path, json1, signed(json1, Math.floor(Date.now() / 1000) - 301));
  assert.deepEqual([stale.status, stale.body.detail], [401, "X-Agent-Bus-Timestamp is more than 5 minutes from the receiver's clock"]);
  const plain = 'nightly build green';
  assert.equal((await post(hub.url, made.path, plain, { ...signed(plain), 'content-type': 'text/plain' })).status, 200);
  assert.ok(inbox(bus, 'shop/claude').some((message) => message.from === 'ci' && message.body === plain));
  const elsewhere = JSON.stringify({ to: 'lab', body: 'not yours' });
  const refused = await post(hub.url, made.path, elsewhere, signed(elsewhere));
  assert.deepEqual([refused.status, refused.body.result], [400, 'bad-request']);
  assert.match(String(refused.body.detail), /sends only to 'shop', not 'lab'/);
}));

test('integration rotate: the old secret is accepted for its grace and refused after; list shows no secret; remove refuses its deliveries; bad set-ups are refused in one line', withHub({}, async (bus, hub) => {
  register(agentEnv(bus, 'shop/claude', '/repos/shop'));
  const made = add(bus, ['ci', '--kind', 'generic', '--to', 'shop/claude']);
  const rotated = runCli(['integration', 'rotate', 'ci', '--grace', '2s'], { env: bus.env });
  assert.equal(rotated.code, 0, rotated.stderr);
  const secret = rotated.stdout.trim();
  assert.notEqual(secret, made.secret);
  assert.match(rotated.stderr, /It is shown this once\. The old secret is still accepted for another \d+ (?:s|min|h)\./);
  const deliver = (key: string, id: string) => {
    const body = JSON.stringify({ body: `delivery ${id}` });
    const at = Math.floor(Date.now() / 1000);
    return post(hub.url, made.path, body, { 'x-agent-bus-timestamp': String(at), 'x-agent-bus-signature': `sha256=${createHmac('sha256', key).update(`${at}.${body}`).digest('hex')}` });
  };
  assert.equal((await deliver(made.secret, 'old-in-grace')).status, 200, 'the old secret in its grace');
  assert.equal((await deliver(secret, 'new')).status, 200);
  const listed = runCli(['integration', 'list', '--json'], { env: bus.env });
  assert.ok(!listed.stdout.includes(secret) && !listed.stdout.includes(made.secret), 'list shows no secret');
  assert.equal(json<Array<{ previous_secret_until: string | null }>>(listed)[0]?.previous_secret_until !== null, true);
  await sleep(2_500);
  assert.equal((await deliver(made.secret, 'old-after')).status, 401, 'the old secret after its grace');
  assert.equal((await deliver(secret, 'new-again')).status, 200);
  assert.match(runCli(['integration', 'list'], { env: bus.env }).stdout, /^ci {2}generic {2}to shop\/claude {2}alert {2}\/v1\/integrations\/ci\n$/);
  assert.equal(runCli(['integration', 'remove', 'ci'], { env: bus.env }).code, 0);
  assert.equal((await deliver(secret, 'removed')).status, 404);
  for (const [args, pattern] of [
    [['add', 'ci2', '--kind', 'gitlab', '--to', 'shop'], /unknown kind 'gitlab': use github, generic, webhook, slack, discord, ntfy/],
    [['add', 'shop/ci', '--kind', 'generic', '--to', 'shop'], /has no client part/],
    [['add', 'human', '--kind', 'generic', '--to', 'shop'], /'human' is reserved/],
    [['add', 'ci3', '--kind', 'generic', '--to', 'nowhere'], /nowhere/],
    [['add', 'ci4', '--kind', 'generic', '--to', '{repo}'], /only a github integration/],
    [['rotate', 'ghost'], /no integration named 'ghost'/],
    [['add', 'ci5', '--kind', 'generic'], /a generic integration needs --to ADDRESS/],
  ] as const) {
    const run = runCli(['integration', ...args], { env: bus.env });
    assert.notEqual(run.code, 0, args.join(' '));
    assert.match(run.stderr, pattern, args.join(' '));
    assert.equal(messageLines(run.stderr).length, 1, `one line: ${run.stderr}`);
  }
  assert.equal(json<unknown[]>(runCli(['integration', 'list', '--json'], { env: bus.env })).length, 0, 'nothing set up by the refused ones');
}));
