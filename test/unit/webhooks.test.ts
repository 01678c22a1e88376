/** Webhook deliveries: their signatures (GitHub's and agent-bus's own) and what a GitHub event says. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { newIntegrationSecret, signDelivery, SIGNATURE_WINDOW_SECONDS, verifyGeneric, verifyGithub } from '../../src/core/webhook-signature.js';
import { describeGithubEvent } from '../../src/core/github-events.js';

test("GitHub's signature over the raw body: the documented example verifies, any other body or secret does not; a rotated-out secret still in its grace does", () => {
  // GitHub's documented example: this secret, this body, this signature.
  const body = Buffer.from('Hello, World!');
  const signature = 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17';
  assert.deepEqual(verifyGithub(signature, body, ["It's a Secret to Everybody"]), { ok: true });
  assert.deepEqual(verifyGithub(signature.toUpperCase().replace('SHA256=', 'sha256='), body, ["It's a Secret to Everybody"]), { ok: true }, 'hex in either case');
  assert.deepEqual(verifyGithub(signature, body, ['new secret', "It's a Secret to Everybody"]), { ok: true }, 'either of two valid secrets');
  assert.equal(verifyGithub(signature, Buffer.from('Hello, World?'), ["It's a Secret to Everybody"]).ok, false);
  assert.equal(verifyGithub(signature, body, ['another secret']).ok, false);
  assert.equal(verifyGithub(signature, body, []).ok, false, 'no secret: nothing verifies');
  assert.deepEqual(verifyGithub(undefined, body, ['x']), { ok: false, reason: 'no X-Hub-Signature-256 header' });
  for (const bad of ['757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17', 'sha1=757107ea', 'sha256=zz', `${signature}00`]) {
    assert.deepEqual(verifyGithub(bad, body, ["It's a Secret to Everybody"]), { ok: false, reason: 'the X-Hub-Signature-256 signature does not match' }, bad);
  }
});

test("agent-bus's signature covers the timestamp and the raw body: it verifies within five minutes either way, and not outside, nor with the timestamp or body changed", () => {
  const secret = newIntegrationSecret();
  assert.match(secret, /^abwh_[A-Za-z0-9_-]{43}$/);
  assert.notEqual(newIntegrationSecret(), secret);
  const body = Buffer.from('{"body":"deploy failed on prod"}');
  const now = 1_780_000_000;
  const signature = signDelivery(secret, now, body);
  assert.match(signature, /^sha256=[0-9a-f]{64}$/);
  assert.equal(signDelivery(secret, now, body.toString('utf8')), signature, 'text and bytes sign alike');
  const verify = (headers: { signature?: string; timestamp?: string }, at = now, bytes = body) => verifyGeneric({ signature: headers.signature, timestamp: headers.timestamp }, bytes, [secret], at);
  assert.deepEqual(verify({ signature, timestamp: String(now) }), { ok: true });
  assert.deepEqual(verify({ signature, timestamp: String(now) }, now + SIGNATURE_WINDOW_SECONDS), { ok: true }, 'five minutes late');
  assert.deepEqual(verify({ signature, timestamp: String(now) }, now - SIGNATURE_WINDOW_SECONDS), { ok: true }, 'five minutes early');
  assert.match((verify({ signature, timestamp: String(now) }, now + SIGNATURE_WINDOW_SECONDS + 1) as { reason: string }).reason, /more than 5 minutes from the receiver's clock/);
  assert.match((verify({ signature, timestamp: String(now) }, now - SIGNATURE_WINDOW_SECONDS - 1) as { reason: string }).reason, /more than 5 minutes/);
  assert.deepEqual(verify({ signature, timestamp: String(now + 1) }, now), { ok: false, reason: 'the X-Agent-Bus-Signature signature does not match' }, 'the timestamp is signed');
  assert.equal(verify({ signature, timestamp: String(now) }, now, Buffer.from('{"body":"deploy fixed"}')).ok, false, 'the body is signed');
  assert.deepEqual(verify({ timestamp: String(now) }), { ok: false, reason: 'no X-Agent-Bus-Signature header' });
  for (const timestamp of [undefined, '', 'yesterday', '1.5', '-1', '17800000000000']) {
    assert.deepEqual(verify({ signature, timestamp }), { ok: false, reason: 'X-Agent-Bus-Timestamp must be the Unix time in seconds' }, String(timestamp));
  }
  assert.deepEqual(verifyGeneric({ signature, timestamp: String(now) }, body, ['old', secret], now), { ok: true }, 'any valid secret');
});

const repository = { name: 'shop', full_name: 'acme/shop' };
const sender = { login: 'alice', type: 'User' };

test('a GitHub workflow_run or check that completes unsuccessfully is a failure, leading with the event, what happened, who and the link; success and other actions are not', () => {
  const run = (conclusion: string | null, action = 'completed') =>
    describeGithubEvent('workflow_run', { action, repository, sender, workflow_run: { name: 'CI', run_number: 42, conclusion, head_branch: 'main', head_sha: 'abcdef1234567', event: 'push', html_url: 'https://github.com/acme/shop/actions/runs/9' } });
  assert.deepEqual(run('failure'), {
    event: 'workflow_run',
    text: '[github] workflow_run in acme/shop: workflow CI #42 failed (failure) on main (push by alice)\nhttps://github.com/acme/shop/actions/runs/9',
    failure: true,
    repo: 'shop',
    link: 'https://github.com/acme/shop/actions/runs/9',
  });
  assert.equal(run('timed_out').failure, true);
  assert.deepEqual([run('success').failure, run('success').text.split('\n')[0]], [false, '[github] workflow_run in acme/shop: workflow CI #42 succeeded on main (push by alice)']);
  assert.deepEqual([run(null, 'in_progress').failure, run(null, 'in_progress').text.split('\n')[0]], [false, '[github] workflow_run in acme/shop: workflow CI #42 in progress on main (push by alice)']);
  assert.equal(run('cancelled').failure, false, 'a cancelled run is no failure');
  const check = describeGithubEvent('check_run', { action: 'completed', repository, sender, check_run: { name: 'lint', conclusion: 'failure', head_sha: 'abcdef1234567', html_url: 'https://github.com/acme/shop/runs/1' } });
  assert.deepEqual([check.failure, check.text], [true, '[github] check_run in acme/shop: check lint failed (failure) on abcdef1\nhttps://github.com/acme/shop/runs/1']);
  const suite = describeGithubEvent('check_suite', { action: 'completed', repository, sender, check_suite: { conclusion: 'success', head_branch: 'main' } });
  assert.deepEqual([suite.failure, suite.text], [false, '[github] check_suite in acme/shop: check suite on main succeeded']);
});

test('GitHub pushes, pull requests, reviews, comments, issues and ping each read as one message; an unknown event is one line naming it', () => {
  const say = (event: string, payload: object): string => describeGithubEvent(event, { repository, sender, ...payload }).text;
  assert.equal(say('ping', { zen: 'Design for failure.', hook_id: 7 }), '[github] ping in acme/shop: the webhook is set up (hook 7): Design for failure.');
  assert.equal(
    say('push', { ref: 'refs/heads/main', commits: [{}, {}], head_commit: { message: 'Fix the login\n\nlong story' }, compare: 'https://github.com/acme/shop/compare/a...b' }),
    '[github] push in acme/shop: alice pushed 2 commit(s) to main: Fix the login\nhttps://github.com/acme/shop/compare/a...b',
  );
  assert.equal(say('push', { ref: 'refs/heads/old', deleted: true, commits: [] }), '[github] push in acme/shop: alice deleted old');
  const pr = { number: 12, title: 'Rewrite   the\nlogin', html_url: 'https://github.com/acme/shop/pull/12', merged: false };
  assert.equal(say('pull_request', { action: 'opened', number: 12, pull_request: pr }), '[github] pull_request in acme/shop: pull request #12 opened by alice: Rewrite the login\nhttps://github.com/acme/shop/pull/12');
  assert.match(say('pull_request', { action: 'closed', number: 12, pull_request: { ...pr, merged: true } }), /pull request #12 merged by alice/);
  assert.match(say('pull_request', { action: 'closed', number: 12, pull_request: pr }), /pull request #12 closed by alice/);
  assert.match(say('pull_request', { action: 'review_requested', number: 12, pull_request: pr, requested_reviewer: { login: 'bob' } }), /pull request #12 review requested from bob by alice/);
  assert.equal(
    say('pull_request_review', { action: 'submitted', pull_request: { number: 12 }, review: { state: 'changes_requested', body: 'Please add a test.', html_url: 'https://github.com/acme/shop/pull/12#r1' } }),
    '[github] pull_request_review in acme/shop: pull request #12 review submitted by alice: changes requested\nPlease add a test.\nhttps://github.com/acme/shop/pull/12#r1',
  );
  assert.match(say('pull_request_review_comment', { action: 'created', pull_request: { number: 12 }, comment: { path: 'src/a.ts', body: 'nit', html_url: 'u' } }), /^\[github\] pull_request_review_comment in acme\/shop: pull request #12 review comment created by alice on src\/a\.ts:\nnit\nu$/);
  assert.match(say('issue_comment', { action: 'created', issue: { number: 7, pull_request: {} }, comment: { body: 'LGTM', html_url: 'c' } }), /^\[github\] issue_comment in acme\/shop: pull request #7 comment created by alice:\nLGTM\nc$/);
  assert.match(say('issue_comment', { action: 'created', issue: { number: 8 }, comment: { body: 'me too' } }), /issue #8 comment created by alice:\nme too/);
  assert.match(say('issues', { action: 'opened', issue: { number: 9, title: 'Crash on start', html_url: 'i' } }), /^\[github\] issues in acme\/shop: issue #9 opened by alice: Crash on start\ni$/);
  assert.equal(say('star', { action: 'created' }), '[github] star (created) event in acme/shop');
  assert.equal(describeGithubEvent('constructor', 'not json').text, '[github] constructor event', 'never an error, whatever arrives');
  assert.equal(describeGithubEvent('issue_comment', { comment: { body: 'x'.repeat(5_000) } }).text.length < 1_200, true, 'payload text is cut');
});
