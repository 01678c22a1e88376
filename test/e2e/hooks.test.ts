/** The turn-boundary hooks as clients run them: a fresh process, a JSON payload on stdin, a dialect on stdout. */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { agentEnv, register, send } from '../helpers/agents.js';
import { CLI, json, readAudit, runCli, type TempBus, withTempBus } from '../helpers/bus-env.js';
import { connect, type McpSession } from '../helpers/mcp.js';

interface HookResult {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

function hook(kind: 'hook-user-prompt' | 'hook-stop', env: NodeJS.ProcessEnv, payload: unknown, args: string[] = [], cwd?: string): HookResult {
  const started = Date.now();
  const result = spawnSync(process.execPath, [CLI, kind, ...args], {
    env,
    cwd: cwd ?? env.HOME,
    input: typeof payload === 'string' ? payload : JSON.stringify(payload),
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr, ms: Date.now() - started };
}

const withBus = withTempBus;

/** A copy's receipt as `agent-bus status --json` shows it. */
function receiptOf(bus: TempBus, id: string): { state: string; delivered_at: string | null; delivered_via: string | null; read_via: string | null } {
  const status = json<{ copies: Array<{ state: string; delivered_at: string | null; delivered_via: string | null; read_via: string | null }> }>(runCli(['status', id, '--json'], { env: bus.env }));
  const [copy] = status.copies;
  assert.ok(copy, `a copy of ${id}`);
  return copy;
}

const as = (bus: TempBus, name: string): NodeJS.ProcessEnv => agentEnv(bus, name, '/repos/a');

test('an empty inbox: each dialect says "nothing"', withBus((bus) => {
  register(as(bus, 'repo-a/claude'));
  const env = as(bus, 'repo-a/claude');
  for (const [client, prompt, stop] of [
    ['claude', '', ''],
    ['opencode', '', ''],
    ['codex', '', ''],
    ['someday', '', ''],
    ['agy', '{"injectSteps":[]}\n', '{"decision":"stop"}\n'],
    ['gemini', '', ''],
    ['copilot', '', ''],
  ] as const) {
    const promptRun = hook('hook-user-prompt', env, {}, ['--client', client]);
    assert.deepEqual([promptRun.code, promptRun.stdout, promptRun.stderr], [0, prompt, ''], client);
    const stopRun = hook('hook-stop', env, {}, ['--client', client]);
    assert.deepEqual([stopRun.code, stopRun.stdout, stopRun.stderr], [0, stop, ''], client);
  }
}));

test('the prompt hook shows new mail once, marks it delivered and audits read and deliver', withBus((bus) => {
  register(as(bus, 'repo-a/claude'));
  send(bus, 'first line\nsecond line', 'repo-a/claude');
  const shown = hook('hook-user-prompt', as(bus, 'repo-a/claude'), { cwd: '/repos/a', session_id: 's' }, ['--client', 'claude']);
  assert.equal(shown.code, 0);
  assert.match(shown.stdout, /^\[agent-bus\] 1 new message\(s\) since last turn:\n- from human at \d{4}-\d\d-\d\dT[\d:.]+Z \(thread [0-9a-f-]{36}\): first line\n {2}second line\n$/, 'a later line is indented under the first');
  assert.equal(hook('hook-user-prompt', as(bus, 'repo-a/claude'), {}, ['--client', 'claude']).stdout, '', 'shown once');
  const [row] = bus.rows<{ message_id: string; read_at: string; delivered_at: string }>("SELECT message_id, read_at, delivered_at FROM messages WHERE body LIKE 'first line%'");
  assert.ok(row, 'the message is in the bus');
  assert.ok(row.read_at && row.delivered_at, 'a sender can see it reached the model');
  const receipt = receiptOf(bus, row.message_id);
  assert.deepEqual([receipt.state, receipt.delivered_via, receipt.read_via], ['read', 'hook-user-prompt', 'hook-user-prompt'], 'the receipt says how');
  const ops = readAudit(bus.audit).filter((entry) => String(entry.body_preview).startsWith('first line')).map((entry) => `${String(entry.op)}${entry.via ? `:${String(entry.via)}` : ''}`);
  assert.deepEqual(ops, ['send', 'read:hook-user-prompt', 'deliver:hook-user-prompt']);
}));

test('codex and agy dialects carry the same text in their JSON forms', withBus((bus) => {
  register(as(bus, 'repo-a/codex'));
  register(as(bus, 'repo-a/agy'));
  send(bus, 'for codex', 'repo-a/codex');
  send(bus, 'for agy', 'repo-a/agy');
  const codex = hook('hook-user-prompt', as(bus, 'repo-a/codex'), {}, ['--client', 'codex']);
  const parsed = JSON.parse(codex.stdout) as { hookSpecificOutput: { hookEventName: string; additionalContext: string } };
  assert.equal(parsed.hookSpecificOutput.hookEventName, 'UserPromptSubmit');
  assert.match(parsed.hookSpecificOutput.additionalContext, /^\[agent-bus\] 1 new message\(s\)[^]*: for codex$/);
  const agy = hook('hook-user-prompt', as(bus, 'repo-a/agy'), { workspacePaths: ['/repos/a'] }, ['--client', 'agy']);
  const steps = (JSON.parse(agy.stdout) as { injectSteps: Array<{ ephemeralMessage: string }> }).injectSteps;
  assert.match(steps[0]?.ephemeralMessage ?? '', /: for agy$/);
  send(bus, 'stop agy', 'repo-a/agy');
  const agyStop = JSON.parse(hook('hook-stop', as(bus, 'repo-a/agy'), {}, ['--client', 'agy']).stdout) as { decision: string; reason: string };
  assert.equal(agyStop.decision, 'continue');
  assert.match(agyStop.reason, /^Pending messages from peers — handle them before stopping:\n- from human .*: stop agy$/);
}));

test('the stop hook blocks for pending mail, then lets the agent stop', withBus((bus) => {
  register(as(bus, 'repo-a/claude'));
  send(bus, 'please reply', 'repo-a/claude');
  const blocked = hook('hook-stop', as(bus, 'repo-a/claude'), { stop_hook_active: false }, ['--client', 'claude']);
  const decision = JSON.parse(blocked.stdout) as { decision: string; reason: string };
  assert.equal(decision.decision, 'block');
  assert.match(decision.reason, /please reply/);
  const [sent] = bus.rows<{ message_id: string }>("SELECT message_id FROM messages WHERE body = 'please reply'");
  assert.deepEqual([receiptOf(bus, sent?.message_id ?? '').state, receiptOf(bus, sent?.message_id ?? '').delivered_via], ['read', 'hook-stop']);
  const again = hook('hook-stop', as(bus, 'repo-a/claude'), { stop_hook_active: true }, ['--client', 'claude']);
  assert.deepEqual([again.code, again.stdout], [0, ''], 'called again with nothing new: it may stop');
  send(bus, 'one more', 'repo-a/claude');
  assert.match(hook('hook-stop', as(bus, 'repo-a/claude'), { stop_hook_active: true }, ['--client', 'claude']).stdout, /one more/, 'new mail still blocks');
}));

test('hook-stop --peek says it would block and takes nothing: the mail stays sent and unread until a stop hook shows it', withBus((bus) => {
  register(as(bus, 'repo-a/claude'));
  send(bus, 'peek at me', 'repo-a/claude');
  const [sent] = bus.rows<{ message_id: string }>("SELECT message_id FROM messages WHERE body = 'peek at me'");
  const id = sent?.message_id ?? '';
  for (let look = 0; look < 2; look++) {
    const peeked = hook('hook-stop', as(bus, 'repo-a/claude'), {}, ['--client', 'opencode', '--peek']);
    assert.equal(peeked.code, 0, peeked.stderr);
    assert.equal((JSON.parse(peeked.stdout) as { decision: string }).decision, 'block', 'it would keep the agent working, each time it is asked');
  }
  assert.deepEqual([receiptOf(bus, id).state, receiptOf(bus, id).delivered_at], ['sent', null], 'a peek shows nobody the mail: no receipt');
  assert.ok(!readAudit(bus.audit).some((row) => row.message_id === id && (row.op === 'read' || row.op === 'deliver')), 'and audits no read or deliver');
  const taken = hook('hook-stop', as(bus, 'repo-a/claude'), {}, ['--client', 'opencode']);
  assert.match(taken.stdout, /peek at me/);
  assert.deepEqual([receiptOf(bus, id).state, receiptOf(bus, id).delivered_via], ['read', 'hook-stop']);
  assert.equal(hook('hook-stop', as(bus, 'repo-a/claude'), {}, ['--client', 'opencode', '--peek']).stdout, '', 'nothing left: it would let the agent stop');
}));

test('repo-wide mail: the claimer is asked to act, its repo-mate is told for information', withBus((bus) => {
  register(as(bus, 'repo-a/claude'));
  register(as(bus, 'repo-a/codex'));
  send(bus, 'bump the dependency', 'repo-a');
  send(bus, 'direct to codex', 'repo-a/codex');
  const claimer = hook('hook-stop', as(bus, 'repo-a/claude'), {}, ['--client', 'claude']);
  const reason = (JSON.parse(claimer.stdout) as { reason: string }).reason;
  assert.match(reason, /from human to everyone in repo-a at .*: bump the dependency\n\(A message to everyone in a repo is handled by the first agent there to see it\. You saw these first, so they are yours\.\)$/);
  const mate = hook('hook-stop', as(bus, 'repo-a/codex'), {}, ['--client', 'codex']);
  const mateReason = (JSON.parse(mate.stdout) as { reason: string }).reason;
  assert.match(mateReason, /direct to codex/);
  assert.doesNotMatch(mateReason, /bump the dependency/, 'claimed by a repo-mate: not a reason to keep working');
  const pending = json<Array<{ name: string; pending_count: number }>>(runCli(['agents', '--json'], { env: bus.env }));
  assert.equal(pending.find((agent) => agent.name === 'repo-a/codex')?.pending_count, 1);
  const prompt = hook('hook-user-prompt', as(bus, 'repo-a/codex'), {}, ['--client', 'claude']);
  assert.match(prompt.stdout, /^\[agent-bus\] 1 new message\(s\) since last turn:\nFor your information only — a repo-mate already has these; act only if one concerns your own work:\n- from human to everyone in repo-a .*: bump the dependency \[already picked up by repo-a\/claude\]\n$/);
  const claims = readAudit(bus.audit).filter((entry) => entry.op === 'claim');
  assert.deepEqual(claims.map((entry) => entry.actor), ['repo-a/claude']);
}));

test('a hook derives its agent from --client and the payload directory, and is silent elsewhere', withBus((bus) => {
  const repo = join(bus.dir, 'shop');
  mkdirSync(join(repo, '.git'), { recursive: true });
  register(agentEnv(bus, 'shop/codex', repo));
  send(bus, 'found by cwd', 'shop/codex');
  const env = { ...bus.env };
  const found = hook('hook-user-prompt', env, { cwd: repo }, ['--client', 'codex'], bus.dir);
  assert.match(found.stdout, /found by cwd/);
  const elsewhere = join(bus.dir, 'unwired');
  mkdirSync(join(elsewhere, '.git'), { recursive: true });
  const before = json<unknown[]>(runCli(['agents', '--json'], { env: bus.env })).length;
  const silent = hook('hook-stop', env, { cwd: elsewhere }, ['--client', 'codex'], bus.dir);
  assert.deepEqual([silent.code, silent.stdout, silent.stderr], [0, '', '']);
  assert.equal(json<unknown[]>(runCli(['agents', '--json'], { env: bus.env })).length, before, 'no rows for a repo not on the bus');
  writeFileSync(join(repo, '.agent-bus-ignore'), '');
  send(bus, 'opted out', 'shop/codex');
  const opted = hook('hook-user-prompt', env, { cwd: repo }, ['--client', 'codex'], bus.dir);
  assert.deepEqual([opted.code, opted.stdout], [0, '']);
  const broken = hook('hook-stop', { ...bus.env, AGENT_BUS_NAME: 'shop/codex', AGENT_BUS_INSTANCE: 'two' }, {}, ['--client', 'agy']);
  assert.equal(broken.code, 0, 'a hook never fails its client\'s turn (and 2 would read as "keep working")');
  assert.equal(broken.stdout, '{"decision":"stop"}\n', "the dialect's nothing all the same");
  assert.match(broken.stderr, /^agent-bus hook: AGENT_BUS_INSTANCE must be a number 1\.\.99, got 'two'\n$/);
}));

test('a payload that never ends, or a terminal on stdin, cannot hang a hook', withBus(async (bus) => {
  register(as(bus, 'repo-a/claude'));
  const env = { ...as(bus, 'repo-a/claude'), AGENT_BUS_HOOK_PAYLOAD_TIMEOUT: '0.5' };
  const started = Date.now();
  const child = spawn(process.execPath, [CLI, 'hook-stop', '--client', 'claude'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdin.write('{"partial":');
  // 'exit', not 'close': our end of its stdin stays open on purpose.
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  child.stdin.destroy();
  assert.equal(code, 0);
  assert.ok(Date.now() - started < 3_000, `finished in ${Date.now() - started} ms: the 0.5 s timeout, not the 5 s default`);
  const terminal = spawnSync('script', ['-qec', `${process.execPath} ${CLI} hook-user-prompt --client claude`, '/dev/null'], {
    env: { ...as(bus, 'repo-a/claude') },
    encoding: 'utf8',
    timeout: 15_000,
  });
  assert.equal(terminal.status, 0);
}));

test('a hook that cannot print loses no mail', withBus(async (bus) => {
  register(as(bus, 'repo-a/claude'));
  send(bus, 'must not vanish', 'repo-a/claude');
  const child = spawn(process.execPath, [CLI, 'hook-user-prompt', '--client', 'claude'], { env: as(bus, 'repo-a/claude'), stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdout.destroy();
  child.stdin.end('{}');
  await new Promise((resolve) => child.on('close', resolve));
  const [row] = bus.rows<{ message_id: string }>("SELECT message_id FROM messages WHERE body = 'must not vanish'");
  const id = row?.message_id ?? '';
  assert.deepEqual([receiptOf(bus, id).state, receiptOf(bus, id).delivered_at], ['sent', null], 'a hook that could not print records no delivery');
  const after = hook('hook-user-prompt', as(bus, 'repo-a/claude'), {}, ['--client', 'claude']);
  assert.match(after.stdout, /must not vanish/, 'still there for the next turn');
  assert.deepEqual([receiptOf(bus, id).state, receiptOf(bus, id).delivered_via], ['read', 'hook-user-prompt'], 'delivered once it was printed');
}));

test('with two live sessions, each hook sees its own mail and the shared mail, never its sibling\'s', withBus(async (bus) => {
  const servers: McpSession[] = [];
  try {
    const base = { ...bus.env, AGENT_BUS_NAME: 'repo-a/claude', AGENT_BUS_REPO: '/repos/a' };
    servers.push(await connect({ ...base, CLAUDE_CODE_SESSION_ID: 'sess-1' }));
    servers.push(await connect({ ...base, CLAUDE_CODE_SESSION_ID: 'sess-2' }));
    send(bus, 'only for one', 'repo-a/claude-1');
    send(bus, 'only for two', 'repo-a/claude-2');
    send(bus, 'any claude', 'repo-a/claude');
    const unknown = hook('hook-user-prompt', base, { session_id: 'sess-9' }, ['--client', 'claude']);
    assert.match(unknown.stdout, /any claude/);
    assert.doesNotMatch(unknown.stdout, /only for/, 'cannot tell which session: the shared address only');
    const two = hook('hook-user-prompt', base, { session_id: 'sess-2' }, ['--client', 'claude']);
    assert.match(two.stdout, /only for two/);
    assert.doesNotMatch(two.stdout, /only for one/);
    const one = hook('hook-stop', { ...base, CLAUDE_CODE_SESSION_ID: 'sess-1' }, {}, ['--client', 'claude']);
    assert.match(one.stdout, /only for one/);
    assert.doesNotMatch(one.stdout, /only for two/);
  } finally {
    for (const server of servers) await server.close();
  }
}));

test('a hook that cannot print gives back the claim it made: a repo-mate is asked to act instead', withBus(async (bus) => {
  register(as(bus, 'repo-a/claude'));
  register(as(bus, 'repo-a/codex'));
  send(bus, 'whoever is free', 'repo-a');
  const child = spawn(process.execPath, [CLI, 'hook-stop', '--client', 'claude'], { env: as(bus, 'repo-a/claude'), stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdout.destroy();
  child.stdin.end('{}');
  await new Promise((resolve) => child.on('close', resolve));
  const mate = hook('hook-stop', as(bus, 'repo-a/codex'), {}, ['--client', 'codex']);
  assert.match((JSON.parse(mate.stdout) as { reason: string }).reason, /whoever is free/, 'unclaimed again, so the repo-mate must act');
}));

test('Codex runs every thread from one process: a hook is matched by its thread id only', withBus(async (bus) => {
  const repoPath = join(bus.dir, 'web');
  mkdirSync(join(repoPath, '.git'), { recursive: true });
  const env = { ...bus.env, AGENT_BUS_CLIENT: 'codex' };
  const servers: McpSession[] = [];
  try {
    servers.push(await connect(env, { cwd: repoPath }));
    servers.push(await connect(env, { cwd: repoPath }));
    await servers[0]?.client.callTool({ name: 'whoami', arguments: {}, _meta: { threadId: 'thread-a' } });
    send(bus, 'private to thread a', 'web/codex-1');
    send(bus, 'for any codex', 'web/codex');
    const other = hook('hook-user-prompt', { ...bus.env }, { cwd: repoPath, session_id: 'thread-b' }, ['--client', 'codex'], repoPath);
    const context = (JSON.parse(other.stdout) as { hookSpecificOutput: { additionalContext: string } }).hookSpecificOutput.additionalContext;
    assert.match(context, /for any codex/);
    assert.doesNotMatch(context, /private to thread a/);
    const own = hook('hook-user-prompt', { ...bus.env }, { cwd: repoPath, session_id: 'thread-a' }, ['--client', 'codex'], repoPath);
    assert.match(own.stdout, /private to thread a/);
  } finally {
    for (const server of servers) await server.close();
  }
}));

test("Codex hooks record their thread id and the executable running them, for waking the session later", withBus(async (bus) => {
  const repoPath = join(bus.dir, 'svc');
  mkdirSync(join(repoPath, '.git'), { recursive: true });
  register(agentEnv(bus, 'svc/codex', repoPath));
  // A stand-in Codex: a process that runs the hook through `sh -c`, as Codex does.
  const command = `${process.execPath} ${CLI} hook-user-prompt --client codex`;
  const ran = spawnSync(process.execPath, ['-e', `require('child_process').execSync(process.argv[1], { input: process.argv[2], stdio: ['pipe', 'inherit', 'inherit'] })`, command, JSON.stringify({ cwd: repoPath, session_id: 'thread-42' })], {
    env: bus.env,
    cwd: repoPath,
    encoding: 'utf8',
  });
  assert.equal(ran.status, 0, ran.stderr);
  const rows = bus.rows('SELECT thread_id, agent, client, executable, client_pid, repo_path FROM client_routes');
  assert.equal(rows.length, 1);
  assert.equal(rows[0]?.thread_id, 'thread-42');
  assert.equal(rows[0]?.agent, 'svc/codex');
  assert.equal(rows[0]?.client, 'codex');
  assert.equal(rows[0]?.executable, process.execPath, 'the binary behind the client process, past the shell');
  assert.equal(rows[0]?.repo_path, repoPath);
  hook('hook-stop', { ...bus.env }, { cwd: repoPath, session_id: 'thread-42' }, ['--client', 'claude'], repoPath);
  assert.equal(bus.rows('SELECT thread_id FROM client_routes').length, 1, 'only Codex hooks record routes');
}));
