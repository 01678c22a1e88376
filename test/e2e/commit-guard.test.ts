/**
 * The commit guard, driven through real git: `guard install` chains the hook already there and follows
 * core.hooksPath, `uninstall` removes exactly what it added, and `git commit` of a file another agent
 * holds is refused by the hook (the committer told as the hooks would tell it), locally and over a hub.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { CLI, json, readAudit, runCli, tempBus, withTempBus, type TempBus } from '../helpers/bus-env.js';
import { createToken, withHub } from '../helpers/hub.js';

const PRIOR_HOOK = '#!/bin/sh\necho "prior hook ran" >&2\n';

/** A git repo named `shop` with src/auth.ts and src/free.ts, nothing committed. */
function gitRepo(bus: TempBus, name = 'shop'): string {
  const root = join(bus.env.HOME as string, name);
  mkdirSync(join(root, 'src'), { recursive: true });
  const init = spawnSync('git', ['init', '-q', root]);
  assert.equal(init.status, 0, String(init.stderr));
  writeFileSync(join(root, 'src', 'auth.ts'), 'export const auth = 1;\n');
  writeFileSync(join(root, 'src', 'free.ts'), 'export const free = 1;\n');
  return realpathSync(root);
}

/** Run git in the repo as a test user, with the bus's environment and `extra` (hook identities). */
function git(bus: TempBus, root: string, args: string[], extra: NodeJS.ProcessEnv = {}): { code: number | null; stdout: string; stderr: string } {
  const env = { ...bus.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com', ...extra };
  const result = spawnSync('git', args, { cwd: root, env, encoding: 'utf8' });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

const committed = (bus: TempBus, root: string): string[] => {
  const log = git(bus, root, ['log', '--name-only', '--format=']);
  return log.code === 0 ? log.stdout.split('\n').filter(Boolean).sort() : [];
};

test('install chains the hook already there, is idempotent, and uninstall puts back exactly what was there', withTempBus((bus) => {
  const root = gitRepo(bus);
  const hooks = join(root, '.git', 'hooks');
  writeFileSync(join(hooks, 'pre-commit'), PRIOR_HOOK);
  chmodSync(join(hooks, 'pre-commit'), 0o755);
  const before = readdirSync(hooks).sort();
  const installed = runCli(['guard', 'install', '--bin-path', CLI], { env: bus.env, cwd: join(root, 'src') });
  assert.equal(installed.code, 0, installed.stderr);
  assert.match(installed.stdout, /pre-commit: installed, chaining the pre-commit hook that was there/);
  assert.equal(readFileSync(join(hooks, 'pre-commit.agent-bus-chained'), 'utf8'), PRIOR_HOOK);
  assert.match(readFileSync(join(hooks, 'pre-commit'), 'utf8'), /# agent-bus guard:/);
  assert.match(runCli(['guard', 'install', root, '--bin-path', CLI], { env: bus.env }).stdout, /already installed/);
  // The chained hook runs first, and a commit of free files goes through.
  git(bus, root, ['add', 'src/free.ts']);
  const commit = git(bus, root, ['commit', '-qm', 'free']);
  assert.equal(commit.code, 0, commit.stderr);
  assert.match(commit.stderr, /prior hook ran/);
  const removed = runCli(['guard', 'uninstall', root, '--json'], { env: bus.env });
  assert.equal(json<{ outcome: string }>(removed).outcome, 'removed, the chained pre-commit hook put back');
  assert.deepEqual(readdirSync(hooks).sort(), before);
  assert.equal(readFileSync(join(hooks, 'pre-commit'), 'utf8'), PRIOR_HOOK);
  assert.match(runCli(['guard', 'uninstall', root], { env: bus.env }).stdout, /not installed/);
  const outside = runCli(['guard', 'install', bus.dir], { env: bus.env });
  assert.equal(outside.code, 1, 'no repo there: a failure, as git says');
  assert.match(outside.stderr, /is not in a git work tree/);
}));

test('core.hooksPath is followed', withTempBus((bus) => {
  const root = gitRepo(bus);
  assert.equal(git(bus, root, ['config', 'core.hooksPath', '.githooks']).code, 0);
  assert.equal(runCli(['guard', 'install', '--bin-path', CLI], { env: bus.env, cwd: root }).code, 0);
  assert.ok(existsSync(join(root, '.githooks', 'pre-commit')), 'the hook is where core.hooksPath says');
  assert.equal(existsSync(join(root, '.git', 'hooks', 'pre-commit')), false);
  assert.equal(runCli(['reserve', 'src/auth.ts', '--name', 'shop/codex'], { env: bus.env, cwd: root }).code, 0);
  git(bus, root, ['add', 'src/auth.ts']);
  assert.equal(git(bus, root, ['commit', '-qm', 'auth']).code, 1, 'git runs it from there');
}));

test("a commit of another agent's reserved file is refused, one line per file, until it is released; the bypasses work; the person and the agent are told apart", withTempBus((bus) => {
  const root = gitRepo(bus);
  assert.equal(runCli(['guard', 'install', '--bin-path', CLI], { env: bus.env, cwd: root }).code, 0);
  assert.equal(runCli(['reserve', 'src/auth.ts', '--reason', 'rewriting login', '--name', 'shop/codex'], { env: bus.env, cwd: root }).code, 0);
  git(bus, root, ['add', 'src']);
  const refused = git(bus, root, ['commit', '-qm', 'both']);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /^agent-bus guard: src\/auth\.ts is reserved by shop\/codex for another \d+ (?:s|min|h) \(rewriting login\): not committed$/m);
  assert.doesNotMatch(refused.stderr, /free\.ts/);
  assert.match(refused.stderr, /AGENT_BUS_GUARD=off or git commit --no-verify skips this check/);
  assert.deepEqual(committed(bus, root), [], 'nothing committed');
  assert.deepEqual(readAudit(bus.audit).filter((row) => row.op === 'deny').map((row) => [row.actor, row.to, row.body_preview]), [['human', 'shop/codex', 'src/auth.ts']]);
  // An agent in a Claude Code shell that is not on the bus commits as the person; the holder commits its own.
  assert.equal(git(bus, root, ['commit', '-qm', 'both'], { CLAUDECODE: '1', CLAUDE_CODE_SESSION_ID: 'sess-1' }).code, 1);
  assert.equal(runCli(['send', 'joining', '--to', 'shop/claude', '--name', 'shop/claude'], { env: { ...bus.env, AGENT_BUS_REPO: root }, cwd: root }).code, 0);
  assert.equal(runCli(['reserve', 'src/free.ts', '--name', 'shop/claude'], { env: bus.env, cwd: root }).code, 0);
  git(bus, root, ['reset', '-q']);
  git(bus, root, ['add', 'src/free.ts']);
  assert.equal(git(bus, root, ['commit', '-qm', 'free']).code, 1, "the person may not commit shop/claude's file");
  const own = git(bus, root, ['commit', '-qm', 'free'], { CLAUDECODE: '1', CLAUDE_CODE_SESSION_ID: 'sess-1' });
  assert.equal(own.code, 0, `Claude Code's shell commits as shop/claude, its holder: ${own.stderr}`);
  assert.deepEqual(committed(bus, root), ['src/free.ts']);
  // Bypasses, and warn mode.
  git(bus, root, ['add', 'src/auth.ts']);
  assert.equal(git(bus, root, ['commit', '-qm', 'off'], { AGENT_BUS_GUARD: 'off' }).code, 0, 'AGENT_BUS_GUARD=off');
  git(bus, root, ['reset', '-q', '--soft', 'HEAD~1']);
  assert.equal(git(bus, root, ['commit', '-qm', 'no-verify', '--no-verify']).code, 0, '--no-verify');
  git(bus, root, ['reset', '-q', '--soft', 'HEAD~1']);
  const told = git(bus, root, ['commit', '-qm', 'warn'], { AGENT_BUS_RESERVATIONS: 'warn' });
  assert.equal(told.code, 0, told.stderr);
  assert.match(told.stderr, /src\/auth\.ts is reserved by shop\/codex for another \d+ (?:s|min|h) \(rewriting login\): committed all the same/);
  git(bus, root, ['reset', '-q', '--soft', 'HEAD~1']);
  // Released: the same commit goes through.
  assert.equal(runCli(['release', '--all', '--holder', 'shop/codex'], { env: bus.env, cwd: root }).code, 0);
  const after = git(bus, root, ['commit', '-qm', 'auth']);
  assert.equal(after.code, 0, after.stderr);
  assert.deepEqual(committed(bus, root), ['src/auth.ts', 'src/free.ts']);
}));

test('a bus that cannot be reached lets the commit through, saying so', withTempBus((bus) => {
  const root = gitRepo(bus);
  assert.equal(runCli(['guard', 'install', '--bin-path', CLI], { env: bus.env, cwd: root }).code, 0);
  git(bus, root, ['add', 'src']);
  const commit = git(bus, root, ['commit', '-qm', 'down'], { AGENT_BUS_DB: 'postgres://nobody@127.0.0.1:1/nothing' });
  assert.equal(commit.code, 0, commit.stderr);
  assert.match(commit.stderr, /agent-bus guard: could not check the reservations \(.*\): committing without the check/);
}));

test('init --guard installs the guard with the wiring; init alone never does', withTempBus((bus) => {
  const root = gitRepo(bus);
  const plain = runCli(['init', '--bin-path', CLI], { env: bus.env, cwd: root });
  assert.equal(plain.code, 0, plain.stderr);
  assert.equal(existsSync(join(root, '.git', 'hooks', 'pre-commit')), false, 'never installed silently');
  const guarded = runCli(['init', '--guard', '--bin-path', CLI], { env: bus.env, cwd: root });
  assert.equal(guarded.code, 0, guarded.stderr);
  assert.match(guarded.stdout, /commit guard: .*pre-commit: installed/);
  assert.match(readFileSync(join(root, '.git', 'hooks', 'pre-commit'), 'utf8'), /guard check/);
}));

test("over the hub: the guard asks the hub, as the token's agent, and the hub audits the refusal", withHub({}, async (bus, hub) => {
  const mine = createToken(bus, 'shop/claude');
  const theirs = createToken(bus, 'shop/codex');
  const remote = tempBus({ AGENT_BUS_URL: hub.url, AGENT_BUS_TOKEN: mine.token });
  try {
    const root = gitRepo(remote);
    assert.equal(runCli(['guard', 'install', '--bin-path', CLI], { env: remote.env, cwd: root }).code, 0);
    const held = runCli(['reserve', 'src/auth.ts', '--reason', 'theirs'], { env: { ...remote.env, AGENT_BUS_TOKEN: theirs.token }, cwd: root });
    assert.equal(held.code, 0, held.stderr);
    git(remote, root, ['add', 'src']);
    const refused = git(remote, root, ['commit', '-qm', 'both']);
    assert.equal(refused.code, 1, refused.stderr);
    assert.match(refused.stderr, /src\/auth\.ts is reserved by shop\/codex for another \d+ (?:s|min|h) \(theirs\): not committed/);
    assert.deepEqual(readAudit(bus.audit).filter((row) => row.op === 'deny').map((row) => [row.actor, row.to]), [['shop/claude', 'shop/codex']]);
    // The token's agent's own reservation is its own.
    assert.equal(runCli(['release', '--all'], { env: { ...remote.env, AGENT_BUS_TOKEN: theirs.token }, cwd: root }).code, 0);
    assert.equal(runCli(['reserve', 'src/auth.ts'], { env: remote.env, cwd: root }).code, 0);
    const own = git(remote, root, ['commit', '-qm', 'both']);
    assert.equal(own.code, 0, own.stderr);
  } finally {
    remote.cleanup();
  }
}));
