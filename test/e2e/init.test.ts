/** `agent-bus init` for Claude Code: what it writes, what it leaves alone, and that the wiring runs. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { json, readAudit, ROOT, runCli, type TempBus, withTempBus } from '../helpers/bus-env.js';
import { agentBusOnPath } from '../helpers/on-path.js';

interface Settings {
  permissions: { allow: string[] };
  hooks: Record<string, Array<{ matcher?: string; hooks: Array<{ type: string; command: string }> }>>;
  env?: Record<string, string>;
  statusLine?: { type: string; command: string };
}

const withBus = withTempBus;

function repo(bus: TempBus, ...parts: string[]): string {
  const path = join(bus.dir, ...parts);
  mkdirSync(join(path, '.git'), { recursive: true });
  return path;
}

const read = (path: string): unknown => JSON.parse(readFileSync(path, 'utf8'));
/** `claude --version` answers from FAKE_CLAUDE_VERSION (default 2.1.332: wake hooks are written). */
const FAKE_CLAUDE = join(ROOT, 'test', 'helpers', 'fake-claude.sh');
/** The bus's environment with agent-bus on PATH, as an installed one is: what the committed files run. */
const onPath = (bus: TempBus): NodeJS.ProcessEnv => ({ ...bus.env, PATH: agentBusOnPath(bus.dir).PATH });
const init = (bus: TempBus, args: string[], cwd?: string, extraEnv: NodeJS.ProcessEnv = {}) =>
  runCli(['init', ...args], { env: { ...onPath(bus), AGENT_BUS_CLAUDE_BIN: FAKE_CLAUDE, ...extraEnv }, cwd });

test('a single repo is wired at once, and a re-run changes nothing', withBus((bus) => {
  const path = repo(bus, 'acme.dev');
  const first = init(bus, [], path);
  assert.equal(first.code, 0, first.stderr);
  assert.match(
    first.stdout,
    /^ {2}write {2}acme-dev {2}.*acme\.dev {3}\[claude\]\n {6}create {5}\.mcp\.json {2}\(claude\)\n {6}create {5}\.claude\/settings\.json {2}\(claude\)\n\n1 repo\(s\) scanned · clients=claude \(no client found on PATH\) · write=1 refresh=0/,
  );
  assert.match(first.stdout, /\nApplied to 1 repo\(s\)\.\nOn the bus: acme-dev\/claude /);
  const mcp = read(join(path, '.mcp.json')) as { mcpServers: Record<string, { command: string; args: string[]; env?: Record<string, string> }> };
  assert.deepEqual(mcp.mcpServers['agent-bus']?.args, ['serve', '--client', 'claude']);
  assert.equal(mcp.mcpServers['agent-bus']?.command, 'agent-bus');
  assert.equal(mcp.mcpServers['agent-bus']?.env, undefined, 'no agent named, no repo path: the server finds them from its folder');
  const settings = read(join(path, '.claude', 'settings.json')) as Settings;
  const tools = ['whoami', 'list_agents', 'send_message', 'read_inbox', 'read_thread', 'message_status', 'search_messages', 'tail_audit', 'set_session', 'channel_publish', 'channel_list', 'channel_acknowledge', 'brain_refresh', 'brain_status', 'reserve_files', 'release_files', 'list_reservations', 'create_task', 'take_task', 'complete_task', 'fail_task', 'cancel_task', 'get_task', 'list_tasks', 'notify_when', 'spawn_agent', 'stop_agent', 'agent_logs'];
  assert.deepEqual(settings.permissions.allow, tools.map((tool) => `mcp__agent-bus__${tool}`));
  for (const [event, subcommand] of [['SessionStart', 'hook-session-start'], ['UserPromptSubmit', 'hook-user-prompt'], ['PreToolUse', 'hook-pre-tool'], ['Stop', 'hook-stop']]) {
    assert.equal(settings.hooks[event as string]?.[0]?.hooks[0]?.command, `agent-bus ${subcommand} --client claude || true`, event);
  }
  // Presence: a permission prompt or a question (never the 60-second idle_prompt), and the session's end.
  assert.deepEqual(settings.hooks.Notification, [{ matcher: 'permission_prompt|elicitation_dialog', hooks: [{ type: 'command', command: 'agent-bus hook-notification --client claude || true' }] }]);
  assert.deepEqual(settings.hooks.SessionEnd, [{ matcher: '', hooks: [{ type: 'command', command: 'agent-bus hook-session-end --client claude || true' }] }]);
  assert.deepEqual(settings.env, { AGENT_BUS_DEFAULT_CHANNELS: 'brain,amygdala' }, "the repo's default subscriptions, under a variable a launch value wins over");
  assert.deepEqual(settings.statusLine, { type: 'command', command: 'agent-bus statusline --client claude' });
  const before = [readFileSync(join(path, '.mcp.json'), 'utf8'), readFileSync(join(path, '.claude', 'settings.json'), 'utf8')];
  const again = init(bus, [], path);
  assert.match(again.stdout, /\nnothing to do\.\n/);
  assert.deepEqual([readFileSync(join(path, '.mcp.json'), 'utf8'), readFileSync(join(path, '.claude', 'settings.json'), 'utf8')], before, 'byte-identical');
  const rerun = read(join(path, '.claude', 'settings.json')) as Settings;
  assert.deepEqual(
    [rerun.hooks.Stop?.length, rerun.hooks.UserPromptSubmit?.length, rerun.hooks.SessionStart?.length, rerun.hooks.PreToolUse?.length, rerun.hooks.Notification?.length, rerun.hooks.SessionEnd?.length, rerun.permissions.allow.length],
    [2, 1, 2, 1, 1, 1, tools.length],
    'nothing added twice',
  );
  assert.ok(!readdirSync(path).some((file) => file.includes('agent-bus-tmp')) && !readdirSync(join(path, '.claude')).some((file) => file.includes('agent-bus-tmp')));
}));

test('Claude Code 2.1.290 or later gets the background wake hook on SessionStart and Stop; older, unknown or AGENT_BUS_NATIVE_WAKE=0 leaves it out and says so', withBus((bus) => {
  const path = repo(bus, 'shop');
  assert.equal(init(bus, [], path).code, 0);
  const settingsPath = join(path, '.claude', 'settings.json');
  type WakeHook = { type: string; command: string; asyncRewake?: boolean; timeout?: number; rewakeSummary?: string };
  const wakeHook = (): WakeHook | undefined =>
    ((read(settingsPath) as Settings).hooks.Stop ?? []).flatMap((group) => group.hooks as WakeHook[]).find((hook) => hook.command.includes('hook-watch'));
  assert.deepEqual(wakeHook(), {
    type: 'command',
    command: 'agent-bus hook-watch --client claude --max-seconds 86400 ; [ $? -ne 10 ] || exit 2',
    asyncRewake: true,
    timeout: 86430,
    rewakeSummary: 'agent-bus: new mail',
  });
  assert.equal(wakeHook()?.command.endsWith('|| true'), false, 'never swallowed');
  const atStart = ((read(settingsPath) as Settings).hooks.SessionStart ?? []).flatMap((group) => group.hooks as WakeHook[]).find((hook) => hook.command.includes('hook-watch'));
  assert.deepEqual(atStart, wakeHook(), 'the same hook when a session starts');
  const shorter = init(bus, [], path, { AGENT_BUS_WATCH_HOURS: '2' });
  assert.equal(shorter.code, 0);
  assert.match(wakeHook()?.command ?? '', /--max-seconds 7200 ;/);
  assert.equal(wakeHook()?.timeout, 7230, 'the timeout stays above --max-seconds');
  const old = init(bus, [], path, { FAKE_CLAUDE_VERSION: '2.1.289' });
  assert.match(old.stdout, /claude: no wake hook: Claude Code 2\.1\.289 is older than 2\.1\.290/);
  assert.equal(wakeHook(), undefined, 'an older Claude Code gets none');
  const missing = init(bus, [], path, { AGENT_BUS_CLAUDE_BIN: join(bus.dir, 'no-such-claude') });
  assert.match(missing.stdout, /claude: no wake hook: cannot tell the Claude Code version/);
  assert.equal(init(bus, [], path).code, 0);
  assert.ok(wakeHook());
  const off = init(bus, [], path, { AGENT_BUS_NATIVE_WAKE: '0' });
  assert.match(off.stdout, /native wake is off/);
  assert.equal(wakeHook(), undefined, 'removed again');
  assert.equal((read(settingsPath) as Settings).hooks.Stop?.length, 1, 'hook-stop stays');
  assert.equal((read(settingsPath) as Settings).hooks.SessionStart?.length, 1, 'hook-session-start stays');
}));

test("the wake hook's command turns hook-watch's 10, and only that, into Claude Code's 2", withBus((bus) => {
  const path = repo(bus, 'shop');
  assert.equal(init(bus, [], path).code, 0);
  const hooks = (read(join(path, '.claude', 'settings.json')) as Settings).hooks.Stop ?? [];
  const command = hooks.flatMap((group) => group.hooks).find((hook) => hook.command.includes('hook-watch'))?.command ?? '';
  // As Claude Code runs it: in the repo, nothing of agent-bus's naming in its environment (init put shop/claude on the roster).
  const env = { ...onPath(bus), CLAUDE_CODE_ENTRYPOINT: 'cli' };
  const run = (commandLine: string, extra: NodeJS.ProcessEnv = {}) =>
    spawnSync('sh', ['-c', commandLine], { env: { ...env, ...extra }, cwd: path, input: '{"session_id":"s-1"}', encoding: 'utf8', timeout: 30_000 });
  // Mail waiting: the watcher takes it and exits 10; the command exits 2 and Claude Code wakes the model.
  assert.equal(runCli(['send', 'wake me', '--to', 'shop/claude'], { env: bus.env }).code, 0);
  const woke = run(command);
  assert.equal(woke.status, 2, woke.stderr);
  assert.match(woke.stderr, /wake me/);
  // Nothing waiting: the watcher gives up (exit 0), and so does the command.
  const idle = run(command.replace('--max-seconds 86400', '--max-seconds 1'));
  assert.equal(idle.status, 0, idle.stderr);
  // An agent-bus too old to know hook-watch exits 2 from its parser: that must not wake anyone.
  const olderCommand = command.replace(/^agent-bus /, `${join(ROOT, 'test', 'helpers', 'old-agent-bus.sh')} `);
  const older = run(olderCommand);
  assert.equal(older.status, 0, `${older.stderr} | ${olderCommand}`);
}));

test('subscriptions an older init wrote as AGENT_BUS_CHANNELS are renamed in place, the value kept; files init does not own are only warned about', withBus((bus) => {
  const path = repo(bus, 'shop');
  assert.equal(init(bus, [], path).code, 0);
  const settingsPath = join(path, '.claude', 'settings.json');
  const older = read(settingsPath) as Settings;
  older.env = { FIRST: '1', AGENT_BUS_CHANNELS: 'brain,deploy', LAST: '2' };
  writeFileSync(settingsPath, JSON.stringify(older));
  const local = JSON.stringify({ env: { AGENT_BUS_CHANNELS: 'ops' } });
  writeFileSync(join(path, '.claude', 'settings.local.json'), local);
  const migrated = init(bus, ['--force'], path);
  assert.equal(migrated.code, 0, migrated.stderr);
  const env = (read(settingsPath) as Settings).env ?? {};
  assert.deepEqual(Object.entries(env), [['FIRST', '1'], ['AGENT_BUS_DEFAULT_CHANNELS', 'brain,deploy'], ['LAST', '2']], 'renamed where it was, value kept');
  assert.match(migrated.stdout, /subscriptions moved from AGENT_BUS_CHANNELS to AGENT_BUS_DEFAULT_CHANNELS in \.claude\/settings\.json, so a launch value wins over them/);
  assert.match(migrated.stdout, /\.claude\/settings\.local\.json sets AGENT_BUS_CHANNELS in env, which Claude Code applies over the launch environment: name it AGENT_BUS_DEFAULT_CHANNELS there/);
  assert.equal(readFileSync(join(path, '.claude', 'settings.local.json'), 'utf8'), local, 'a file init does not own is never edited');
  // Both present: the user put AGENT_BUS_CHANNELS back on purpose. Kept, and said to mask the launch.
  writeFileSync(settingsPath, JSON.stringify({ ...(read(settingsPath) as Settings), env: { AGENT_BUS_DEFAULT_CHANNELS: 'brain', AGENT_BUS_CHANNELS: 'x' } }));
  const kept = init(bus, ['--force'], path);
  assert.deepEqual((read(settingsPath) as Settings).env, { AGENT_BUS_DEFAULT_CHANNELS: 'brain', AGENT_BUS_CHANNELS: 'x' });
  assert.match(kept.stdout, /\.claude\/settings\.json sets AGENT_BUS_CHANNELS in env: a launch value cannot win over it/);
}));

test('subscriptions a user edited and a status line of their own survive a re-run', withBus((bus) => {
  const path = repo(bus, 'shop');
  assert.equal(init(bus, [], path).code, 0);
  const settingsPath = join(path, '.claude', 'settings.json');
  const edited = read(settingsPath) as Settings;
  edited.env = { OTHER: '1', AGENT_BUS_DEFAULT_CHANNELS: 'brain,deploy' };
  writeFileSync(settingsPath, JSON.stringify(edited));
  assert.equal(init(bus, ['--force'], path).code, 0);
  assert.deepEqual((read(settingsPath) as Settings).env, { OTHER: '1', AGENT_BUS_DEFAULT_CHANNELS: 'brain,deploy' });
  const mine = { ...(read(settingsPath) as Settings), statusLine: { type: 'command', command: 'my-status' } };
  writeFileSync(settingsPath, JSON.stringify(mine));
  assert.equal(init(bus, ['--bin-path', '/opt/agent-bus'], path).code, 0);
  const after = read(settingsPath) as Settings;
  assert.deepEqual(after.statusLine, { type: 'command', command: 'my-status' }, 'a status line of the user\'s own is left alone');
  assert.equal(after.hooks.PreToolUse?.[0]?.hooks[0]?.command, '"${AGENT_BUS_BIN:-agent-bus}" hook-pre-tool --client claude || true', 'our hooks run the agent-bus the personal file names');
  assert.deepEqual(read(join(path, '.claude', 'settings.local.json')), { env: { AGENT_BUS_BIN: '/opt/agent-bus' } });
  assert.equal(after.hooks.PreToolUse?.length, 1);
}));

test('what is not ours is kept; hand-written entries need --force; unparseable files are never touched', withBus((bus) => {
  const path = repo(bus, 'shop');
  mkdirSync(join(path, '.claude'));
  writeFileSync(join(path, '.mcp.json'), JSON.stringify({ mcpServers: { other: { command: 'other-server' }, 'agent-bus': { command: 'my-own-bus', args: ['--x'] } } }));
  writeFileSync(
    join(path, '.claude', 'settings.json'),
    JSON.stringify({
      model: 'opus',
      permissions: { allow: ['Bash(ls)', 'mcp__agent-bus__whoami'] },
      hooks: {
        Stop: [
          { matcher: '', hooks: [{ type: 'command', command: 'say done' }] },
          { matcher: '', hooks: [{ type: 'command', command: 'agent-bus hook-stop --client codex || true' }] },
          { matcher: '', hooks: [{ type: 'command', command: 'agent-bus hook-stop' }] },
        ],
      },
    }),
  );
  const kept = init(bus, [], path);
  assert.match(kept.stdout, /skip-handwritten .*claude: hand-written agent-bus entry left alone/);
  assert.equal((read(join(path, '.mcp.json')) as { mcpServers: Record<string, { command: string }> }).mcpServers['agent-bus']?.command, 'my-own-bus');
  assert.equal(init(bus, ['--force'], path).code, 0);
  const mcp = read(join(path, '.mcp.json')) as { mcpServers: Record<string, { command: string }> };
  assert.equal(mcp.mcpServers.other?.command, 'other-server');
  assert.equal(mcp.mcpServers['agent-bus']?.command, 'agent-bus');
  const settings = read(join(path, '.claude', 'settings.json')) as Settings & { model: string };
  assert.equal(settings.model, 'opus');
  assert.deepEqual(settings.permissions.allow.slice(0, 2), ['Bash(ls)', 'mcp__agent-bus__whoami']);
  assert.equal(settings.permissions.allow.filter((entry) => entry === 'mcp__agent-bus__whoami').length, 1);
  const stops = (settings.hooks.Stop ?? []).map((block) => block.hooks[0]?.command);
  assert.deepEqual(
    stops,
    [
      'say done',
      'agent-bus hook-stop --client codex || true',
      'agent-bus hook-stop --client claude || true',
      'agent-bus hook-watch --client claude --max-seconds 86400 ; [ $? -ne 10 ] || exit 2',
    ],
    'an untagged old agent-bus hook is replaced; others stay',
  );

  const broken = repo(bus, 'broken');
  writeFileSync(join(broken, '.mcp.json'), '{ "mcpServers": { // a comment\n } }');
  const refused = init(bus, ['--force'], broken);
  assert.equal(refused.code, 0);
  assert.match(refused.stdout, /skip-unreadable .*\.mcp\.json: it is not valid JSON, left alone/);
  assert.equal(readFileSync(join(broken, '.mcp.json'), 'utf8'), '{ "mcpServers": { // a comment\n } }');
  assert.ok(!existsSync(join(broken, '.claude')), 'never half-wired');
}));

test('--scan plans first, --apply writes; names are derived, deconflicted and pinned', withBus((bus) => {
  const a = repo(bus, 'work', 'api');
  const b = repo(bus, 'play', 'api');
  const pinned = repo(bus, 'work', 'legacy');
  writeFileSync(join(pinned, '.agent-bus-name'), 'Old Name\n');
  const ignored = repo(bus, 'work', 'private');
  writeFileSync(join(ignored, '.agent-bus-ignore'), '');
  mkdirSync(join(bus.dir, 'work', 'node_modules', 'dep', '.git'), { recursive: true });
  const plan = init(bus, ['--scan', join(bus.dir, 'work'), join(bus.dir, 'play')]);
  assert.match(plan.stdout, /DRY RUN\. Re-run with --apply to write changes \(3 repo\(s\) will be modified\)\.\n$/);
  assert.ok(!existsSync(join(a, '.mcp.json')), 'a dry run writes nothing');
  const rows = json<Array<{ repo: string; name: string; action: string; notes: string[]; clients: Array<{ client: string; name: string; action: string }> }>>(
    init(bus, ['--scan', join(bus.dir, 'work'), join(bus.dir, 'play'), '--json', '--prefix', 'co']),
  );
  const byRepo = new Map(rows.map((row) => [row.repo, row]));
  assert.equal(byRepo.get(a)?.name, 'co-api');
  assert.equal(byRepo.get(b)?.name, 'play-co-api');
  assert.match(byRepo.get(b)?.notes.join(' ') ?? '', /renamed to deconflict with .*work\/api/);
  assert.equal(byRepo.get(pinned)?.name, 'old-name', '.agent-bus-name wins over the prefix');
  assert.equal(byRepo.get(ignored)?.action, 'skip-ignored');
  assert.deepEqual(byRepo.get(a)?.clients, [{ client: 'claude', name: 'co-api/claude', action: 'write', previous_name: null }]);
  assert.equal(rows.some((row) => row.repo.includes('node_modules')), false);
  assert.equal(init(bus, ['--scan', join(bus.dir, 'work'), join(bus.dir, 'play'), '--apply']).code, 0);
  assert.ok(existsSync(join(a, '.mcp.json')) && existsSync(join(b, '.mcp.json')) && !existsSync(join(ignored, '.mcp.json')));
  const named = json<Array<{ name: string }>>(init(bus, ['--json', '--name', 'Billing API', a]));
  assert.equal(named[0]?.name, 'billing-api');
}));

test('bad init usage exits 2 with one line', withBus((bus) => {
  const path = repo(bus, 'x');
  const unknown = init(bus, ['--clients', 'nonesuch'], path);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /^agent-bus: unknown client\(s\): nonesuch\. init can wire: agy, claude, cline, codex, copilot, gemini, opencode, pi, qwen\nUsage: agent-bus init /);
  const named = init(bus, ['--scan', '--name', 'y', bus.dir]);
  assert.equal(named.code, 2);
  assert.match(named.stderr, /--name only applies to single-repo init/);
  const notRepo = init(bus, [bus.dir], bus.dir);
  assert.equal(notRepo.code, 1, 'a path that is not a repo wires nothing: never a silent 0');
  assert.match(notRepo.stdout, /skip-not-repo/);
  assert.equal(notRepo.stderr, `agent-bus: ${bus.dir} is not a git repository: run git init there first, or give a repo's path\n`);
  // The help: one or two real examples at its end, and no line wider than 100 columns.
  const help = runCli(['init', '--help'], { env: bus.env });
  assert.equal(help.code, 0);
  const lines = help.stdout.trimEnd().split('\n');
  assert.ok(lines.every((line) => line.length <= 100), lines.filter((line) => line.length > 100).join('\n'));
  const examples = lines.slice(lines.findIndex((line) => /^Examples:/.test(line)) + 1);
  assert.ok(examples.length >= 1 && examples.length <= 2, examples.join('\n'));
  assert.ok(examples.every((line) => /^ {2}agent-bus init( |$)/.test(line)), examples.join('\n'));
}));

test('old bare-name wiring is renamed, the old name retired, and its unread mail still reaches the repo', withBus((bus) => {
  const path = repo(bus, 'acme.dev');
  mkdirSync(join(path, '.claude'));
  writeFileSync(join(path, '.mcp.json'), JSON.stringify({ mcpServers: { 'agent-bus': { command: 'agent-bus', args: ['serve'], env: { AGENT_BUS_NAME: 'acme-dev', AGENT_BUS_REPO: path } } } }));
  assert.equal(runCli(['send', 'joining', '--to', 'acme-dev'], { env: { ...bus.env, AGENT_BUS_NAME: 'acme-dev', AGENT_BUS_REPO: path } }).code, 0);
  runCli(['inbox', '--name', 'acme-dev'], { env: bus.env });
  runCli(['send', 'for the old name', '--to', 'acme-dev'], { env: bus.env });
  const upgraded = init(bus, [], path);
  assert.match(upgraded.stdout, /refresh .*acme-dev .*\[claude\] {3}\(renaming from 'acme-dev' to 'acme-dev\/claude'\)/);
  const retire = readAudit(bus.audit).find((row) => row.op === 'retire');
  assert.equal(retire?.body_preview, "'acme-dev' is now wired as 'acme-dev/claude'; 1 unread message(s) left for 'acme-dev' to be picked up by the first agent in that repo to read");
  const names = json<Array<{ name: string }>>(runCli(['agents', '--json'], { env: bus.env })).map((agent) => agent.name);
  assert.ok(!names.includes('acme-dev'), 'the old name left the roster');
  runCli(['send', 'joining', '--to', 'acme-dev/claude'], { env: { ...bus.env, AGENT_BUS_NAME: 'acme-dev/claude', AGENT_BUS_REPO: path } });
  const inbox = json<Array<{ body: string }>>(runCli(['inbox', '--name', 'acme-dev/claude', '--json'], { env: bus.env }));
  assert.ok(inbox.some((message) => message.body === 'for the old name'));
}));

test('the hook commands init writes run as written and deliver mail', withBus((bus) => {
  const path = repo(bus, 'live');
  assert.equal(init(bus, [], path).code, 0);
  assert.equal(runCli(['send', 'through the wiring', '--to', 'live/claude'], { env: bus.env }).code, 0);
  const settings = read(join(path, '.claude', 'settings.json')) as Settings;
  const command = settings.hooks.Stop?.[0]?.hooks[0]?.command ?? '';
  const ran = spawnSync('sh', ['-c', command], { env: onPath(bus), cwd: path, input: JSON.stringify({ cwd: path, session_id: 'x', stop_hook_active: false }), encoding: 'utf8' });
  assert.equal(ran.status, 0, ran.stderr);
  assert.match((JSON.parse(ran.stdout) as { decision: string; reason: string }).reason, /through the wiring/);
}));

test('all four clients in one repo, each under its own name; a second plan renames nothing', withBus((bus) => {
  const path = repo(bus, 'repo-a');
  const plan = json<Array<{ clients: Array<{ client: string; name: string; action: string }> }>>(init(bus, ['--clients', 'claude,codex,agy,opencode', '--json'], path));
  assert.deepEqual(plan[0]?.clients.map((client) => [client.client, client.name, client.action]), [
    ['claude', 'repo-a/claude', 'write'],
    ['codex', 'repo-a/codex', 'write'],
    ['agy', 'repo-a/agy', 'write'],
    ['opencode', 'repo-a/opencode', 'write'],
  ]);
  assert.equal(init(bus, ['--clients', 'claude,codex,agy,opencode'], path).code, 0);
  const again = init(bus, ['--clients', 'claude,codex,agy,opencode'], path);
  assert.match(again.stdout, /renamed=0/);
  assert.match(again.stdout, /nothing to do/);
  assert.doesNotMatch(again.stdout, / {6}(create|refresh) /);
}));

test('the plan warns when a name is already registered for another repo path', withBus((bus) => {
  const elsewhere = repo(bus, 'one', 'api');
  const here = repo(bus, 'two', 'api');
  runCli(['send', 'hi', '--to', 'api/claude'], { env: { ...bus.env, AGENT_BUS_NAME: 'api/claude', AGENT_BUS_REPO: elsewhere } });
  const plan = init(bus, [], here);
  assert.match(plan.stdout, /'api\/claude' is also registered for .*one\/api — if that repo is live too they share an inbox; pin a name with \.agent-bus-name/);
}));
