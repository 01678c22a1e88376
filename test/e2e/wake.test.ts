/**
 * wake.json: senders run the command for each recipient that has one, with the
 * message in its environment and on stdin only; `agent-bus wake-config`
 * manages the file. Commands here write marker files, so each test sees what
 * really ran.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { agentEnv, auditRows, register, send } from '../helpers/agents.js';
import { runCli, withTempBus, type TempBus } from '../helpers/bus-env.js';
import { sleep, waitFor } from '../helpers/wait.js';

/** A command that records its environment and stdin under `dir/<tag>.*`. */
function recorder(dir: string, tag: string): string {
  const base = join(dir, tag);
  return `printf '%s\\n' "$AGENT_BUS_FROM" "$AGENT_BUS_TO" "$AGENT_BUS_THREAD_ID" "$AGENT_BUS_MESSAGE_ID" "$AGENT_BUS_BODY_PREVIEW" > ${base}.env.tmp && cat > ${base}.stdin && mv ${base}.env.tmp ${base}.env`;
}

/** What a recorder wrote once its command has run to its end. */
const recorded = (path: string): Promise<string> => waitFor(() => (existsSync(path) ? readFileSync(path, 'utf8') : undefined), `${path} to appear`);

/** Put `name` on the roster, working in a folder of its repo's name in the test's folder. */
const onRoster = (bus: TempBus, name: string): void => register(agentEnv(bus, name, join(bus.dir, name.split('/')[0] ?? name)));

function wakeJson(bus: TempBus, entries: Record<string, unknown> | string): void {
  writeFileSync(join(bus.folder, 'wake.json'), typeof entries === 'string' ? entries : JSON.stringify(entries));
}

const wakeRows = (bus: TempBus): Array<Record<string, unknown>> => auditRows(bus, 'wake');

test('a direct send runs the command with the message in its environment and, whole, on stdin', withTempBus(async (bus) => {
  onRoster(bus, 'shop/claude');
  wakeJson(bus, { 'shop/claude': recorder(bus.dir, 'claude') });
  const body = 'please review\nthe login form';
  const sent = send(bus, body, 'shop/claude');
  const env = (await recorded(join(bus.dir, 'claude.env'))).split('\n');
  assert.deepEqual(env.slice(0, 2), ['human', 'shop/claude']);
  assert.equal(env[3], sent.message_ids[0]);
  const stdin = JSON.parse(readFileSync(join(bus.dir, 'claude.stdin'), 'utf8')) as Record<string, unknown>;
  assert.deepEqual(stdin, { from: 'human', to: 'shop/claude', thread_id: env[2], message_id: sent.message_ids[0], body });
  const rows = wakeRows(bus);
  assert.equal(rows.length, 1);
  assert.deepEqual([rows[0]?.to, rows[0]?.wake_driver, rows[0]?.wake_status, rows[0]?.message_id], ['shop/claude', 'command', 'fired:OK', sent.message_ids[0]]);
}));

test('a body full of shell metacharacters reaches the command only through its environment and stdin', withTempBus(async (bus) => {
  onRoster(bus, 'shop/claude');
  const pwned = join(bus.dir, 'pwned');
  wakeJson(bus, { 'shop/claude': recorder(bus.dir, 'evil') });
  const body = `$(touch ${pwned}) \`touch ${pwned}\` "; touch ${pwned}; echo " ' && touch ${pwned} #`;
  send(bus, body, 'shop/claude');
  const env = await recorded(join(bus.dir, 'evil.env'));
  assert.equal(env.split('\n')[4], body, 'the preview arrived as text');
  assert.equal((JSON.parse(readFileSync(join(bus.dir, 'evil.stdin'), 'utf8')) as { body: string }).body, body);
  // Nothing says when the command's shell has exited (the wake row is written when it starts): a grace period.
  await sleep(200);
  assert.ok(!existsSync(pwned), 'nothing in the body ran');
}));

test("precedence: the agent's own entry, then its client address, then its repo; false is a real off switch", withTempBus(async (bus) => {
  for (const name of ['shop/claude-1', 'shop/codex', 'shop/agy', 'lab/claude']) onRoster(bus, name);
  wakeJson(bus, { shop: recorder(bus.dir, 'repo'), 'shop/claude': recorder(bus.dir, 'client'), 'shop/agy': false, 'lab/claude': null });
  send(bus, 'to the session', 'shop/claude-1');
  assert.equal((await recorded(join(bus.dir, 'client.env'))).split('\n')[1], 'shop/claude-1', 'the client address covers its sessions');
  send(bus, 'to codex', 'shop/codex');
  assert.equal((await recorded(join(bus.dir, 'repo.env'))).split('\n')[1], 'shop/codex', 'the repo covers the rest');
  send(bus, 'to agy', 'shop/agy');
  send(bus, 'to lab', 'lab/claude');
  // A sender appends the wake rows of its send before it exits: they are all there.
  const statuses = wakeRows(bus).map((row) => `${String(row.to)}:${String(row.wake_status)}`);
  assert.deepEqual(statuses, ['shop/claude-1:fired:OK', 'shop/codex:fired:OK', 'shop/agy:disabled', 'lab/claude:disabled']);
  // No command named false was run: only the two recorders wrote anything.
  assert.deepEqual(['client.env', 'repo.env'].map((file) => existsSync(join(bus.dir, file))), [true, true]);
}));

test('a repo-wide message wakes only the most recently seen agent there that has a command', withTempBus(async (bus) => {
  onRoster(bus, 'shop/codex');
  await sleep(20); // Seen at a later time than shop/codex.
  onRoster(bus, 'shop/claude');
  wakeJson(bus, { 'shop/codex': recorder(bus.dir, 'codex'), 'shop/claude': recorder(bus.dir, 'claude') });
  send(bus, 'for the repo', 'shop');
  await recorded(join(bus.dir, 'claude.env'));
  // The sender appended a wake row for every command it ran before it exited: none for the older one.
  assert.deepEqual(wakeRows(bus).map((row) => row.to), ['shop/claude']);
  assert.ok(!existsSync(join(bus.dir, 'codex.env')), 'the older one is not woken too');
  // Only the older one has a command: it is the one.
  wakeJson(bus, { 'shop/codex': recorder(bus.dir, 'codex') });
  send(bus, 'again', 'shop');
  assert.equal((await recorded(join(bus.dir, 'codex.env'))).split('\n')[1], 'shop/codex');
}));

test('AGENT_BUS_WAKES_PER_HOUR: past the limit a wake is rate-limited (counted in the store); 0 means no limit', withTempBus(async (bus) => {
  onRoster(bus, 'shop/claude');
  wakeJson(bus, { 'shop/claude': 'true' });
  for (let index = 0; index < 3; index++) send(bus, `ping ${index}`, 'shop/claude', { env: { AGENT_BUS_WAKES_PER_HOUR: '2' } });
  assert.deepEqual(wakeRows(bus).map((row) => row.wake_status), ['fired:OK', 'fired:OK', 'rate-limited'], 'counted across processes');
  for (let index = 0; index < 3; index++) send(bus, `pong ${index}`, 'shop/claude', { env: { AGENT_BUS_WAKES_PER_HOUR: '0' } });
  assert.deepEqual(wakeRows(bus).slice(3).map((row) => row.wake_status), ['fired:OK', 'fired:OK', 'fired:OK']);
}));

test('a command that never reads its stdin never stalls the sender', withTempBus((bus) => {
  onRoster(bus, 'shop/claude');
  wakeJson(bus, { 'shop/claude': 'sleep 30' });
  const started = Date.now();
  send(bus, 'x'.repeat(60_000), 'shop/claude');
  assert.ok(Date.now() - started < 5000, `the send returned in ${Date.now() - started} ms`);
  assert.equal(wakeRows(bus)[0]?.wake_status, 'fired:OK');
}));

test('a missing or malformed wake.json is a silent no-op for senders; show says why', withTempBus((bus) => {
  onRoster(bus, 'shop/claude');
  assert.equal(runCli(['wake-config', 'show'], { env: bus.env }).stdout, '(no wake commands configured)\n');
  send(bus, 'no config', 'shop/claude');
  wakeJson(bus, '{ not json');
  send(bus, 'bad config', 'shop/claude');
  assert.deepEqual(wakeRows(bus), []);
  const show = runCli(['wake-config', 'show'], { env: bus.env });
  assert.equal(show.code, 0);
  assert.match(show.stdout, /wake\.json cannot be used: it is not valid JSON/);
  // Never overwritten: the user fixes it.
  const set = runCli(['wake-config', 'set', 'shop', 'true'], { env: bus.env });
  assert.equal(set.code, 1);
  assert.match(set.stderr, /cannot be used .*fix or remove it first/);
  assert.equal(readFileSync(join(bus.folder, 'wake.json'), 'utf8'), '{ not json');
  // A file that exists: a recipient without an entry gets a no-config row.
  wakeJson(bus, { other: 'true' });
  send(bus, 'no entry', 'shop/claude');
  assert.deepEqual(wakeRows(bus).map((row) => row.wake_status), ['no-config']);
}));

test('wake-config set, show, test and clear', withTempBus(async (bus) => {
  const set = runCli(['wake-config', 'set', 'shop', recorder(bus.dir, 'test')], { env: bus.env });
  assert.equal(set.code, 0, set.stderr);
  assert.equal(runCli(['wake-config', 'set', 'alex', 'false'], { env: bus.env }).stdout, "waking turned off for 'alex'\n");
  const stored = JSON.parse(readFileSync(join(bus.folder, 'wake.json'), 'utf8')) as Record<string, unknown>;
  assert.deepEqual(Object.keys(stored).sort(), ['alex', 'shop']);
  assert.equal(stored.alex, false, 'a real false, not the string');
  const shown = runCli(['wake-config', 'show'], { env: bus.env }).stdout;
  assert.match(shown, /^alex +\(disabled\) {2}# every agent of this repo/m);
  assert.match(shown, /^shop +printf/m);
  const tested = runCli(['wake-config', 'test', 'shop/claude', '--json'], { env: bus.env });
  assert.equal(tested.code, 0);
  assert.deepEqual(JSON.parse(tested.stdout), { name: 'shop/claude', fired: true, status: 'fired:OK', entry: 'shop' });
  const env = (await recorded(join(bus.dir, 'test.env'))).split('\n');
  assert.deepEqual([env[0], env[1], env[2], env[3]], ['wake-config-test', 'shop/claude', 'test-thread', 'test-message']);
  const off = runCli(['wake-config', 'test', 'alex'], { env: bus.env });
  assert.deepEqual([off.code, off.stdout], [1, "alex: fired=false, status=disabled (entry 'alex')\n"]);
  assert.equal(runCli(['wake-config', 'test', 'nobody'], { env: bus.env }).stdout, 'nobody: fired=false, status=no-config\n');
  assert.equal(runCli(['wake-config', 'clear', 'alex'], { env: bus.env }).stdout, "cleared the wake command for 'alex'\n");
  assert.equal(runCli(['wake-config', 'clear', 'alex'], { env: bus.env }).stdout, "(no wake command for 'alex')\n");
  assert.equal(runCli(['wake-config', 'set', 'shop'], { env: bus.env }).code, 2, 'COMMAND is required');
  assert.equal(runCli(['wake-config', 'bogus'], { env: bus.env }).code, 2);
  assert.equal(auditRows(bus, 'wake').length, 0, 'a test fires no audit row');
}));
