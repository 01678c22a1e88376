/** The CLI as a user meets it: a real subprocess on a private bus. */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { COMMANDS } from '../../src/cli/commands.js';
import { CLI, json, ON_POSTGRES, readAudit, ROOT as ROOT_DIR, runCli, type TempBus, withTempBus } from '../helpers/bus-env.js';
import { sleep, waitUntil } from '../helpers/wait.js';
import { agentEnv, register } from '../helpers/agents.js';

interface AgentRow {
  name: string;
  kind: string;
  group: string;
  client: string | null;
  repo_path: string;
  pending_count: number;
  live: boolean | null;
}

const withBus = withTempBus;

/** Register names the way their own sessions would: speaking as themselves from their repo. */
const join_ = (bus: TempBus, name: string, repo: string): void => register(agentEnv(bus, name, repo));

const ANSI = new RegExp(`${String.fromCharCode(27)}\\[`);

/** A failure at run time: one line that says what went wrong. */
function failureLine(stderr: string): void {
  assert.equal(stderr.trimEnd().split('\n').length, 1, `one line on stderr, got: ${stderr}`);
  assert.match(stderr, /^agent-bus: /);
  assert.doesNotMatch(stderr, /\n\s+at /, 'no stack trace');
}

/** A usage error: one line that says what is wrong, then the usage line. */
function usageError(stderr: string): void {
  const lines = stderr.trimEnd().split('\n');
  assert.equal(lines.length, 2, `one line and the usage on stderr, got: ${stderr}`);
  assert.match(lines[0] as string, /^agent-bus: /);
  assert.match(lines[1] as string, /^Usage: agent-bus /);
  assert.doesNotMatch(stderr, /\n\s+at /, 'no stack trace');
}

test('--version prints the package version', withBus((bus) => {
  const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  const result = runCli(['--version'], { env: bus.env });
  assert.equal(result.code, 0);
  assert.equal(result.stdout, `agent-bus ${manifest.version}\n`);
}));

test('no command, an unknown command, a wrong flag or a missing argument exit 2 with one line', withBus((bus) => {
  const none = runCli([], { env: bus.env });
  assert.equal(none.code, 2);
  assert.match(none.stderr, /Usage: agent-bus <command>/);
  for (const args of [['frobnicate'], ['send', 'x', '--bogus'], ['send'], ['inbox', '--limit', 'many'], ['send', 'a', 'b'], ['tail', '--limit', '0']]) {
    const result = runCli(args, { env: bus.env });
    assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
    usageError(result.stderr);
  }
  assert.match(runCli(['send', 'a', 'b'], { env: bus.env }).stderr, /unexpected argument 'b' \(quote BODY/);
}));

test('--help on every subcommand explains its options', withBus((bus) => {
  const top = runCli(['--help'], { env: bus.env });
  assert.equal(top.code, 0);
  const hooks = runCli(['help', 'hooks'], { env: bus.env });
  for (const command of COMMANDS) {
    assert.match(command.group === 'hooks' ? hooks.stdout : top.stdout, new RegExp(`\\n  ${command.name}\\s`));
    for (const flag of ['--help', '-h']) {
      const result = runCli([command.name, flag], { env: bus.env });
      assert.equal(result.code, 0, `${command.name} ${flag}`);
      assert.match(result.stdout, new RegExp(`^Usage: agent-bus ${command.name}`));
      for (const option of command.options) assert.ok(result.stdout.includes(`--${option.name}`), `${command.name} documents --${option.name}`);
    }
  }
  assert.match(runCli(['help', 'tail'], { env: bus.env }).stdout, /^Usage: agent-bus tail/);
}));

test('send then inbox --json round trip', withBus((bus) => {
  join_(bus, 'beta', '/repos/beta');
  const sent = json<{ recipients: string[]; message_id: string; kind: string; thread_id: string }>(
    runCli(['send', 'hello beta', '--to', 'beta', '--json'], { env: bus.env }),
  );
  assert.deepEqual(sent.recipients, ['beta']);
  assert.equal(sent.kind, 'direct');
  const inbox = json<Array<Record<string, unknown>>>(runCli(['inbox', '--name', 'beta', '--json'], { env: bus.env }));
  assert.equal(inbox.length, 1);
  assert.deepEqual(Object.keys(inbox[0] ?? {}), ['message_id', 'from', 'to', 'addressed_to', 'kind', 'claimed_by', 'body', 'sent_at', 'thread_id', 'read_at', 'delivered_at', 'delivered_via', 'read_via', 'urgent', 'task_result']);
  assert.equal(inbox[0]?.task_result, null, 'plain mail is no task result');
  assert.equal(inbox[0]?.message_id, sent.message_id);
  assert.equal(inbox[0]?.urgent, false);
  assert.equal(inbox[0]?.from, 'human');
  assert.equal(inbox[0]?.body, 'hello beta');
  assert.equal(typeof inbox[0]?.read_at, 'string');
  assert.deepEqual(json(runCli(['inbox', '--name', 'beta', '--json'], { env: bus.env })), []);
  assert.equal(runCli(['inbox', '--name', 'beta'], { env: bus.env }).stdout, '(no messages for beta)\n');
}));

test('plain send lines, peeking, limits and the text inbox', withBus((bus) => {
  join_(bus, 'repo-a/claude', '/repos/a');
  join_(bus, 'repo-a/codex', '/repos/a');
  const group = runCli(['send', 'line one\nline two', '--to', 'repo-a'], { env: bus.env });
  assert.equal(group.code, 0);
  assert.match(group.stdout, /^sent [0-9a-f]{12} {2}human {14}→ repo-a \(2\) {10}line one line two {2}\(thread [0-9a-f]{12}\)\n$/);
  assert.match(runCli(['send', 'to all'], { env: bus.env }).stdout, /→ all \(2\)/);
  assert.match(runCli(['send', 'direct', '--to', 'repo-a/codex'], { env: bus.env }).stdout, /→ repo-a\/codex /);
  const peek = runCli(['inbox', '--name', 'repo-a/codex', '--peek', '--json'], { env: bus.env });
  assert.equal(json<unknown[]>(peek).length, 3);
  const limited = json<Array<{ body: string }>>(runCli(['inbox', '--name', 'repo-a/codex', '--limit', '1', '--json'], { env: bus.env }));
  assert.deepEqual(limited.map((message) => message.body), ['line one\nline two']);
  const text = runCli(['inbox', '--name', 'repo-a/codex'], { env: bus.env });
  assert.match(text.stdout, /^just now {2}human → repo-a\/codex \(everyone\) {2}[0-9a-f]{12} {2}\(thread [0-9a-f]{12}\)\n {4}to all\n/m);
  assert.match(text.stdout, /human → repo-a\/codex {2}[0-9a-f]{12} {2}\(thread [0-9a-f]{12}\)\n {4}direct/);
  const short = runCli(['inbox', '--name', 'repo-a/claude', '--short'], { env: bus.env });
  assert.match(short.stdout, /\[already picked up by repo-a\/codex\] {2}line one line two/);
  assert.equal(runCli(['send', 'nobody', '--to', 'repo-a', '--name', 'repo-a/claude'], { env: bus.env }).stdout.includes('(1)'), true);
}));

test('wide names keep the columns: CJK and emoji count two columns each, a combining mark none', withBus((bus) => {
  join_(bus, '東京', '/repos/tokyo');
  join_(bus, 'cafe\u0301', '/repos/cafe');
  join_(bus, 'ship🚢', '/repos/ship');
  // Each name padded to 18 columns: 東京 takes 4, café 4 (the accent on the e takes none), ship🚢 6.
  assert.match(runCli(['send', 'hi', '--to', '東京', '--name', '東京'], { env: bus.env }).stdout, /^sent [0-9a-f]{12} {2}東京 {14} → 東京 {14} {2}hi {2}\(thread [0-9a-f]{12}\)\n$/);
  assert.match(runCli(['send', 'hi', '--to', 'ship🚢', '--name', 'cafe\u0301'], { env: bus.env }).stdout, /^sent [0-9a-f]{12} {2}cafe\u0301 {14} → ship🚢 {12} {2}hi {2}\(thread [0-9a-f]{12}\)\n$/);
}));

test('an unknown recipient exits 1 with the repo agents, nothing written', withBus((bus) => {
  join_(bus, 'repo-a/claude', '/repos/a');
  const before = readAudit(bus.audit).length;
  const result = runCli(['send', 'x', '--to', 'repo-a/cluade'], { env: bus.env });
  assert.equal(result.code, 1);
  failureLine(result.stderr);
  assert.match(result.stderr, /Agents in that repo: repo-a\/claude\./);
  assert.equal(readAudit(bus.audit).length, before);
  const invalid = runCli(['send', 'x', '--name', 'Bad Name'], { env: bus.env });
  assert.equal(invalid.code, 2, 'a name that breaks the naming rules is a bad value');
  assert.match(invalid.stderr, /invalid name: a name cannot contain whitespace/);
}));

test('a body from stdin, and one over the size cap', withBus((bus) => {
  join_(bus, 'beta', '/repos/beta');
  const body = 'line 1\n$(rm -rf /) `whoami` "quoted"\n';
  assert.equal(runCli(['send', '-', '--to', 'beta'], { env: bus.env, input: body }).code, 0);
  const [message] = json<Array<{ body: string }>>(runCli(['inbox', '--name', 'beta', '--json'], { env: bus.env }));
  assert.equal(message?.body, body);
  const big = runCli(['send', '-', '--to', 'beta'], { env: { ...bus.env, AGENT_BUS_MAX_BODY_BYTES: '1000' }, input: 'x'.repeat(1001) });
  assert.equal(big.code, 1);
  failureLine(big.stderr);
  assert.match(big.stderr, /1001 bytes; the limit is 1000 bytes/);
  assert.deepEqual(json(runCli(['inbox', '--name', 'beta', '--json'], { env: bus.env })), []);
}));

test('speaking as somebody else never moves where they are registered', withBus((bus) => {
  join_(bus, 'alpha', '/repos/alpha');
  const elsewhere = join(bus.dir, 'elsewhere');
  mkdirSync(elsewhere);
  runCli(['send', 'hi', '--name', 'alpha'], { env: { ...bus.env, AGENT_BUS_NAME: 'beta', AGENT_BUS_REPO: '/repos/beta' }, cwd: elsewhere });
  runCli(['send', 'hi', '--name', 'newcomer'], { env: bus.env, cwd: elsewhere });
  runCli(['send', 'hi', '--name', 'proj/claude'], { env: bus.env, cwd: elsewhere });
  runCli(['send', 'moved'], { env: { ...bus.env, AGENT_BUS_NAME: 'alpha', AGENT_BUS_REPO: '/repos/alpha-2' } });
  const agents = json<AgentRow[]>(runCli(['agents', '--json'], { env: bus.env }));
  const repoOf = (name: string): string | undefined => agents.find((agent) => agent.name === name)?.repo_path;
  assert.equal(repoOf('alpha'), '/repos/alpha-2', 'its own identity moves with AGENT_BUS_REPO');
  assert.equal(repoOf('newcomer'), bus.env.HOME, 'a person (no client part) is filed at home, not where they typed');
  assert.equal(repoOf('proj/claude'), elsewhere, 'a client is filed at the folder it speaks from');
  assert.equal(repoOf('beta'), undefined, 'beta never spoke');
}));

test('a person is filed at home wherever they type, and a row an older version filed at a folder moves home', withBus(async (bus) => {
  const somewhere = join(bus.dir, 'somewhere');
  mkdirSync(somewhere);
  assert.equal(runCli(['send', 'hello', '--to', 'alpha'], { env: bus.env, cwd: somewhere }).code, 1, 'alpha is not on the bus yet');
  join_(bus, 'alpha', '/repos/alpha');
  assert.equal(runCli(['send', 'hello', '--to', 'alpha'], { env: bus.env, cwd: somewhere }).code, 0);
  const repoOf = (name: string): string | undefined => json<AgentRow[]>(runCli(['agents', '--json'], { env: bus.env })).find((agent) => agent.name === name)?.repo_path;
  assert.equal(repoOf('human'), bus.env.HOME);
  assert.match(runCli(['agents'], { env: bus.env, cwd: somewhere }).stdout, /^human {2,}repo=~ {2}seen /m);
  // As an older agent-bus left it: the human filed at the folder it first typed in.
  bus.sql(`UPDATE agents SET repo_path = '${somewhere}' WHERE name = 'human'`);
  assert.equal(repoOf('human'), somewhere);
  assert.equal(runCli(['send', 'again', '--to', 'alpha'], { env: bus.env, cwd: somewhere }).code, 0);
  assert.equal(repoOf('human'), bus.env.HOME, 'its own next send files it at home');
  // $AGENT_BUS_NAME is the shell's own identity too; $AGENT_BUS_REPO still files it where it says.
  assert.equal(runCli(['send', 'hi', '--to', 'alpha'], { env: { ...bus.env, AGENT_BUS_NAME: 'alex' }, cwd: somewhere }).code, 0);
  assert.equal(repoOf('alex'), bus.env.HOME);
  assert.equal(runCli(['send', 'hi', '--to', 'alpha'], { env: { ...bus.env, AGENT_BUS_NAME: 'alex', AGENT_BUS_REPO: somewhere } }).code, 0);
  assert.equal(repoOf('alex'), somewhere);
}));

test('a send that reaches nobody says so plainly, and never that it was dropped', withBus((bus) => {
  const alone = runCli(['send', 'is anyone there?'], { env: bus.env });
  assert.equal(alone.code, 0, alone.stderr);
  assert.equal(alone.stdout, 'sent to nobody: no other agent is on the bus yet; agents join when their client starts `agent-bus serve`\n');
  join_(bus, 'repo-a/claude', '/repos/a');
  const ownRepo = runCli(['send', 'anyone else here?', '--to', 'repo-a'], { env: { ...bus.env, AGENT_BUS_NAME: 'repo-a/claude', AGENT_BUS_REPO: '/repos/a' } });
  assert.equal(ownRepo.code, 0, ownRepo.stderr);
  assert.equal(ownRepo.stdout, "sent to nobody: no other agent is in 'repo-a' yet; agents join when their client starts `agent-bus serve`\n");
  for (const output of [alone.stdout, ownRepo.stdout]) assert.doesNotMatch(output, /dropped/);
  const sent = json<{ recipients: string[] }>(runCli(['send', 'and now?', '--json'], { env: bus.env }));
  assert.deepEqual(sent.recipients, ['repo-a/claude'], 'once somebody is there, the same send reaches them');
}));

test('agents groups each repo and prints JSON arrays', withBus((bus) => {
  assert.equal(runCli(['agents'], { env: bus.env }).stdout, '(no agents registered yet)\n');
  assert.deepEqual(json(runCli(['agents', '--json'], { env: bus.env })), []);
  join_(bus, 'repo-a/claude', '/repos/a');
  join_(bus, 'repo-a/codex', '/repos/a');
  join_(bus, 'repo-b', '/repos/b');
  runCli(['send', 'for codex', '--to', 'repo-a/codex'], { env: bus.env });
  const text = runCli(['agents'], { env: bus.env }).stdout;
  const lines = text.trimEnd().split('\n');
  const header = lines.findIndex((line) => line.startsWith('repo-a '));
  assert.match(lines[header] ?? '', /^repo-a\s+repo=\/repos\/a {2}2 agents$/);
  assert.match(lines[header + 1] ?? '', /^ {2}repo-a\/claude\s+seen (?:just now|\d+s ago) {2}pending=0$/);
  assert.match(lines[header + 2] ?? '', /^ {2}repo-a\/codex\s+seen (?:just now|\d+s ago) {2}pending=1$/);
  assert.ok(lines.some((line) => /^repo-b\s+repo=\/repos\/b {2}seen (?:just now|\d+s ago) {2}pending=\d+$/.test(line)), text);
  assert.ok(lines.some((line) => /^human\s+repo=~ {2}seen (?:just now|\d+s ago)/.test(line)), text);
  const rows = json<AgentRow[]>(runCli(['agents', '--json'], { env: bus.env }));
  assert.deepEqual(
    rows.map((row) => [row.name, row.kind, row.group, row.client, row.live]),
    [
      ['human', 'agent', 'human', null, null],
      ['repo-a/claude', 'client', 'repo-a', 'claude', null],
      ['repo-a/codex', 'client', 'repo-a', 'codex', null],
      ['repo-b', 'agent', 'repo-b', null, null],
    ],
  );
}));

test('forget: one agent, an unknown one, a bare repo and --group', withBus((bus) => {
  join_(bus, 'repo-a/claude', '/repos/a');
  join_(bus, 'repo-a/codex', '/repos/a');
  runCli(['send', 'pending', '--to', 'repo-a/codex'], { env: bus.env });
  const one = runCli(['forget', 'repo-a/codex'], { env: bus.env });
  assert.equal(one.stdout, "forgot agent 'repo-a/codex'. 1 undelivered message(s) remain in the DB; they will be delivered if 'repo-a/codex' reconnects.\n");
  const nobody = runCli(['forget', 'nobody'], { env: bus.env });
  assert.equal(nobody.code, 1, 'forgetting nobody did nothing: not a silent success');
  assert.equal(nobody.stderr, "agent-bus: no agent named 'nobody' on the roster: nothing was forgotten ('agent-bus agents' lists them)\n");
  join_(bus, 'repo-a/codex', '/repos/a');
  const bare = runCli(['forget', 'repo-a'], { env: bus.env });
  assert.equal(bare.code, 1);
  failureLine(bare.stderr);
  assert.match(bare.stderr, /is a repo with 2 agent\(s\): repo-a\/claude, repo-a\/codex.*forget --group repo-a/);
  assert.equal(runCli(['forget', '--group', 'repo-a'], { env: bus.env }).stdout, 'forgot 2 agent(s): repo-a/claude, repo-a/codex\n');
  const again = runCli(['forget', '--group', 'repo-a'], { env: bus.env });
  assert.equal(again.code, 1);
  assert.match(again.stderr, /^agent-bus: no agents in a repo named 'repo-a' on the roster: nothing was forgotten/);
  assert.equal(runCli(['forget'], { env: bus.env }).code, 2);
  const names = json<AgentRow[]>(runCli(['agents', '--json'], { env: bus.env })).map((agent) => agent.name);
  assert.deepEqual(names, ['human']);
}));

test('tail: summaries, whole previews and JSON lines', withBus((bus) => {
  join_(bus, 'beta', '/repos/beta');
  runCli(['send', 'tail me please', '--to', 'beta'], { env: bus.env });
  const plain = runCli(['tail'], { env: bus.env }).stdout.trimEnd().split('\n');
  assert.ok(plain.some((line) => /^just now {6}send {8}human {14}→ beta {16}tail me please {2}\[[0-9a-f]{12}\]$/.test(line)), plain.join('\n'));
  for (const line of plain) assert.throws(() => JSON.parse(line));
  const lines = runCli(['tail', '--json', '--limit', '2'], { env: bus.env }).stdout.trimEnd().split('\n');
  assert.equal(lines.length, 2);
  const rows = lines.map((line) => JSON.parse(line) as { op: string; body_preview: string });
  assert.equal(rows.filter((row) => row.op === 'send').at(-1)?.body_preview, 'tail me please');
  const long = 'word '.repeat(60).trim();
  runCli(['send', long, '--to', 'beta'], { env: bus.env });
  const full = runCli(['tail', '--full', '--limit', '1'], { env: { ...bus.env, COLUMNS: '80' } }).stdout;
  assert.ok(full.split('\n').length > 2, 'the preview is wrapped over several lines');
  assert.ok(full.replace(/\s+/g, ' ').includes('word '.repeat(39).trim()));
}));

test('tail -f shows a send made by another process', withBus(async (bus) => {
  join_(bus, 'beta', '/repos/beta');
  const follower = spawn(process.execPath, [CLI, 'tail', '-f', '--json', '--limit', '1'], { env: bus.env, stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    let out = '';
    const seen = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no line within 10 s; got: ${out}`)), 10_000);
      follower.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('"body_preview":"followed"')) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    // Ready: it has printed the last row, and follows from there.
    await waitUntil(() => out.includes('\n'), () => `tail -f to print the last row; got: ${out}`);
    assert.equal(runCli(['send', 'followed', '--to', 'beta'], { env: bus.env }).code, 0);
    await seen;
    const lines = out.trimEnd().split('\n').map((line) => JSON.parse(line) as { op: string });
    assert.ok(lines.length >= 2, 'the last row first, then the new ones');
  } finally {
    follower.kill('SIGINT');
  }
}));

test('tail -f shows every send the bus stores, from a machine with an audit log of its own too, each once', withBus(async (bus) => {
  join_(bus, 'beta', '/repos/beta');
  const follower = spawn(process.execPath, [CLI, 'tail', '-f', '--json', '--limit', '1'], { env: bus.env, stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    let out = '';
    const saw = (body: string): Promise<void> =>
      new Promise<void>((resolve, reject) => {
        const check = (): boolean => out.includes(`"body_preview":"${body}"`);
        if (check()) return resolve();
        const timer = setTimeout(() => reject(new Error(`no '${body}' within 10 s; got: ${out}`)), 10_000);
        follower.stdout.on('data', () => {
          if (check()) {
            clearTimeout(timer);
            resolve();
          }
        });
      });
    follower.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    // Ready: it has printed the last row, and follows from there.
    await waitUntil(() => out.includes('\n'), () => `tail -f to print the last row; got: ${out}`);
    // Another machine: the same store, its own bus folder and audit log, which this tail never reads.
    const elsewhere = mkdtempSync(join(bus.dir, 'elsewhere-'));
    const remote = { ...bus.env, AGENT_BUS_AUDIT_LOG: join(elsewhere, 'audit.log'), AGENT_BUS_HOME: elsewhere };
    assert.equal(runCli(['send', 'from elsewhere', '--to', 'beta', '--name', 'far/codex'], { env: remote }).code, 0);
    await saw('from elsewhere');
    assert.ok(existsSync(join(elsewhere, 'audit.log')) && !readFileSync(bus.audit, 'utf8').includes('from elsewhere'), 'the send was audited elsewhere only');
    assert.equal(runCli(['send', 'from here', '--to', 'beta'], { env: bus.env }).code, 0);
    await saw('from here');
    // Both ways (the audit log and the store) have had their chance to bring it in again. Nothing says
    // when a follower has looked at both since: a pause.
    await sleep(2_500);
    const sends = out.trimEnd().split('\n').map((line) => JSON.parse(line) as { op: string; body_preview: string; from: string; to: string }).filter((row) => row.op === 'send');
    assert.deepEqual(sends.filter((row) => row.body_preview !== 'joining').map((row) => [row.from, row.to, row.body_preview]), [
      ['far/codex', 'beta', 'from elsewhere'],
      ['human', 'beta', 'from here'],
    ]);
  } finally {
    follower.kill('SIGINT');
  }
}));

test('state lives privately under ~/.claude-agent-bus by default', { skip: ON_POSTGRES && 'the default store is a SQLite file; this suite runs on PostgreSQL' }, withBus((bus) => {
  const env = { ...bus.env };
  delete env.AGENT_BUS_DB;
  delete env.AGENT_BUS_AUDIT_LOG;
  assert.equal(runCli(['send', 'hi'], { env }).code, 0);
  const folder = join(env.HOME as string, '.claude-agent-bus');
  assert.equal(statSync(folder).mode & 0o777, 0o700);
  assert.equal(statSync(join(folder, 'bus.db')).mode & 0o777, 0o600);
  runCli(['send', 'again', '--to', 'human', '--name', 'other'], { env });
  assert.equal(statSync(join(folder, 'audit.log')).mode & 0o777, 0o600);
}));

test('colour only on a terminal, and never under NO_COLOR', withBus((bus) => {
  join_(bus, 'beta', '/repos/beta');
  const env = { ...bus.env };
  delete env.NO_COLOR;
  assert.doesNotMatch(runCli(['agents'], { env }).stdout, ANSI, 'a pipe gets no colour');
  const inTerminal = (extra: NodeJS.ProcessEnv): string =>
    spawnSync('script', ['-qec', `${process.execPath} ${CLI} agents`, '/dev/null'], { env: { ...env, ...extra, TERM: 'xterm' }, encoding: 'utf8' }).stdout;
  assert.match(inTerminal({}), ANSI);
  assert.doesNotMatch(inTerminal({ NO_COLOR: '1' }), ANSI);
}));

test('recent times read relative to now; older ones as the local date and time', withBus((bus) => {
  join_(bus, 'beta', '/repos/beta');
  assert.equal(runCli(['send', 'clock', '--to', 'beta'], { env: bus.env }).code, 0);
  assert.match(runCli(['inbox', '--name', 'beta', '--peek'], { env: bus.env }).stdout, /^just now {2}human → beta /);
  bus.sql("UPDATE messages SET sent_at = '2025-01-02T03:04:05.000000Z' WHERE body = 'clock'");
  assert.match(runCli(['inbox', '--name', 'beta', '--peek'], { env: { ...bus.env, TZ: 'Asia/Kolkata' } }).stdout, /^2 Jan 2025 08:34 {2}human → beta /);
  assert.match(runCli(['inbox', '--name', 'beta', '--peek'], { env: { ...bus.env, TZ: 'UTC' } }).stdout, /^2 Jan 2025 03:04 {2}human → beta /);
}));

test('each agent keeps one colour across commands', withBus((bus) => {
  join_(bus, 'beta', '/repos/beta');
  join_(bus, 'gamma', '/repos/gamma');
  runCli(['send', 'hello', '--to', 'beta', '--name', 'gamma'], { env: bus.env });
  const env: NodeJS.ProcessEnv = { ...bus.env, TERM: 'xterm' };
  delete env.NO_COLOR;
  const inTerminal = (args: string): string =>
    spawnSync('script', ['-qec', `${process.execPath} ${CLI} ${args}`, '/dev/null'], { env, encoding: 'utf8' }).stdout;
  const colourOf = (text: string, name: string): string | undefined =>
    new RegExp(`(${String.fromCharCode(27)}\\[[0-9;]+m)${name}`).exec(text)?.[1];
  const roster = inTerminal('agents');
  const log = inTerminal('tail');
  for (const name of ['beta', 'gamma']) {
    const colour = colourOf(roster, name);
    assert.ok(colour, `${name} is coloured in agents`);
    assert.equal(colourOf(log, name), colour, `${name} has the same colour in tail`);
  }
}));

test('npm install -g and npx give a working agent-bus command', withBus((bus) => {
  const npm = (args: string[], cwd: string): void => {
    const result = spawnSync('npm', [...args, '--offline', '--no-audit', '--no-fund'], { cwd, encoding: 'utf8', env: { ...process.env, HOME: bus.env.HOME } });
    assert.equal(result.status, 0, result.stderr);
  };
  const prefix = join(bus.dir, 'global');
  npm(['install', '-g', ROOT_DIR, '--prefix', prefix], bus.dir);
  const global = spawnSync(join(prefix, 'bin', 'agent-bus'), ['--version'], { encoding: 'utf8', env: bus.env });
  assert.equal(global.status, 0, global.stderr);
  assert.match(global.stdout, /^agent-bus \d+\.\d+\.\d+\n$/);
  const consumer = join(bus.dir, 'consumer');
  mkdirSync(consumer);
  writeFileSync(join(consumer, 'package.json'), '{"name":"consumer","version":"1.0.0","private":true}\n');
  npm(['install', ROOT_DIR], consumer);
  const viaNpx = spawnSync('npx', ['--no-install', 'agent-bus', 'send', 'from npx', '--json'], { cwd: consumer, encoding: 'utf8', env: bus.env });
  assert.equal(viaNpx.status, 0, viaNpx.stderr);
  assert.deepEqual(JSON.parse(viaNpx.stdout).recipients, []);
}));

test('an audit log that cannot be written is reported in one line; the mail still goes through', withBus((bus) => {
  join_(bus, 'beta', '/repos/beta');
  const env = { ...bus.env, AGENT_BUS_AUDIT_LOG: bus.dir };
  const sent = runCli(['send', 'despite the log', '--to', 'beta'], { env });
  assert.equal(sent.code, 0);
  assert.match(sent.stderr, /^agent-bus: could not write 1 row\(s\) to the audit log at .*: EISDIR.*\n$/);
  const read = runCli(['inbox', '--name', 'beta', '--json'], { env });
  assert.equal(read.code, 0);
  assert.equal(json<Array<{ body: string }>>(read)[0]?.body, 'despite the log');
  assert.doesNotMatch(read.stderr, /\n\s+at /, 'no stack trace');
}));

test('control characters in a body never reach the terminal raw', withBus((bus) => {
  join_(bus, 'beta', '/repos/beta');
  const escape = String.fromCharCode(27);
  const body = `\u2066\u202egnp.exe\u202c\u2069 hello ${escape}]52;c;ZXZpbA==${String.fromCharCode(7)} ${escape}[2K world\r\nnext\u009b`;
  runCli(['send', body, '--to', 'beta'], { env: bus.env });
  for (const args of [['tail'], ['tail', '--full'], ['inbox', '--name', 'beta', '--peek'], ['inbox', '--name', 'beta', '--short', '--peek']]) {
    const out = runCli(args, { env: bus.env }).stdout;
    const raw = [escape, '\u0007', '\u009b', '\r', '\u202c', '\u202e', '\u2066', '\u2069'].filter((char) => out.includes(char));
    assert.deepEqual(raw, [], `${args.join(' ')}: ${JSON.stringify(out)}`);
    assert.match(out, /hello \^\[\]52;c;ZXZpbA==\^G \^\[\[2K world/);
    assert.match(out, /\\u2066\\u202egnp\.exe\\u202c\\u2069 hello/, 'bidirectional controls shown, not obeyed');
  }
  const raw = json<Array<{ body: string }>>(runCli(['inbox', '--name', 'beta', '--json'], { env: bus.env }));
  assert.equal(raw[0]?.body, body, '--json keeps the body exactly');
}));

test('a huge --limit is taken as 10000, a negative one is refused in words, and a body may start with a dash', withBus((bus) => {
  join_(bus, 'beta', '/repos/beta');
  assert.equal(runCli(['send', '-5 degrees outside', '--to', 'beta'], { env: bus.env }).code, 0);
  const huge = runCli(['inbox', '--name', 'beta', '--limit', '99999999999999999999', '--json'], { env: bus.env });
  assert.equal(huge.code, 0, huge.stderr);
  assert.deepEqual(json<Array<{ body: string }>>(huge).map((message) => message.body), ['-5 degrees outside']);
  const negative = runCli(['tail', '--limit', '-1'], { env: bus.env });
  assert.equal(negative.code, 2);
  assert.equal(negative.stderr, "agent-bus: --limit must be a whole number of at least 1, got '-1'\nUsage: agent-bus tail [options]    (agent-bus tail --help for more)\n");
}));

test('an option before its command is pointed after it', withBus((bus) => {
  const misplaced = runCli(['--json', 'agents'], { env: bus.env });
  assert.equal(misplaced.code, 2);
  assert.equal(misplaced.stderr, "agent-bus: options go after the command: 'agent-bus agents --json'\nUsage: agent-bus <command> [options]    (agent-bus --help lists the commands)\n");
}));
