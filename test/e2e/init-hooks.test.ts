/**
 * Which hooks init writes for Claude Code and Codex: hooks their session's own server answers
 * (`mcp_tool`, no process) from the versions that run them, command hooks before that or when asked
 * (--hooks), switched by a re-run after an upgrade with what init does not own left as it was; the
 * hook tool hidden from Claude Code's model; and doctor saying which kind each client runs.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli, withTempBus, type TempBus } from '../helpers/bus-env.js';
import { agentBusOnPath } from '../helpers/on-path.js';

type Hook = { type: string; command?: string; server?: string; tool?: string; input?: Record<string, string>; onFailure?: string };
type Groups = Record<string, Array<{ matcher?: string; hooks: Hook[] }>>;

/** A client's stand-in that answers `--version` with `version`. */
function standIn(bus: TempBus, name: string, version: string): string {
  const path = join(bus.dir, `${name}-${version}`);
  writeFileSync(path, `#!/bin/sh\necho "${version} (${name})"\n`);
  chmodSync(path, 0o755);
  return path;
}

function setUp(bus: TempBus, claude: string, codex: string): { repo: string; env: NodeJS.ProcessEnv } {
  const repo = join(bus.dir, 'shop');
  mkdirSync(repo, { recursive: true });
  assert.equal(spawnSync('git', ['init', '-q', repo]).status, 0);
  return { repo, env: { ...bus.env, PATH: agentBusOnPath(bus.dir).PATH, AGENT_BUS_CLAUDE_BIN: standIn(bus, 'claude', claude), AGENT_BUS_CODEX_BIN: standIn(bus, 'codex', codex) } };
}

function init(repo: string, env: NodeJS.ProcessEnv, ...extra: string[]): string {
  const result = runCli(['init', '--clients', 'claude,codex', ...extra], { env, cwd: repo });
  assert.equal(result.code, 0, result.stderr);
  return result.stdout;
}

function claudeSettings(repo: string): { hooks: Groups; permissions: { allow: string[]; deny: string[] } } & Record<string, unknown> {
  return JSON.parse(readFileSync(join(repo, '.claude', 'settings.json'), 'utf8'));
}

function codexHooks(repo: string): Groups {
  return (JSON.parse(readFileSync(join(repo, '.codex', 'hooks.json'), 'utf8')) as { hooks: Groups }).hooks;
}

/** Each event's hook of ours (the wake watcher and the user's own left out), as `mcp <kind>` or `command <subcommand>`. */
function kinds(groups: Groups): Record<string, string> {
  const ours = (hook: Hook | undefined): boolean => hook !== undefined && (hook.type === 'mcp_tool' || (/agent-bus hook-/.test(hook.command ?? '') && !/hook-watch/.test(hook.command ?? '')));
  return Object.fromEntries(
    Object.entries(groups).map(([event, list]) => {
      const hook = list.map((group) => group.hooks[0]).find(ours) as Hook;
      return [event, hook.type === 'mcp_tool' ? `mcp ${hook.input?.kind}` : `command ${/hook-[a-z-]+/.exec(hook.command ?? '')?.[0]}`];
    }),
  );
}

test('Claude Code 2.1.332 and Codex 0.171: hooks the server answers, each with its payload fields; SessionStart and SessionEnd stay commands in Claude Code; the hook tool denied to its model', withTempBus((bus) => {
  const { repo, env } = setUp(bus, '2.1.332', '0.171.0');
  init(repo, env);
  const claude = claudeSettings(repo);
  assert.deepEqual(kinds(claude.hooks), {
    SessionStart: 'command hook-session-start',
    UserPromptSubmit: 'mcp prompt',
    PreToolUse: 'mcp pre-tool',
    Stop: 'mcp stop',
    Notification: 'mcp notification',
    SessionEnd: 'command hook-session-end',
  });
  const preTool = claude.hooks.PreToolUse?.[0]?.hooks[0] as Hook;
  assert.deepEqual(preTool, {
    type: 'mcp_tool',
    server: 'agent-bus',
    tool: 'client_hook',
    input: { kind: 'pre-tool', session_id: '${session_id}', cwd: '${cwd}', hook_event_name: '${hook_event_name}', tool_name: '${tool_name}', tool_input: '${tool_input}' },
    timeout: 10,
    onFailure: 'continue',
  });
  assert.deepEqual(claude.permissions.deny, ['mcp__agent-bus__client_hook']);
  assert.ok(!claude.permissions.allow.includes('mcp__agent-bus__client_hook'));
  // The wake watcher is a command on SessionStart and Stop as before.
  assert.match(JSON.stringify(claude.hooks.Stop), /hook-watch --client claude/);
  const codex = codexHooks(repo);
  assert.deepEqual(kinds(codex), { SessionStart: 'mcp session-start', UserPromptSubmit: 'mcp prompt', PreToolUse: 'mcp pre-tool', Stop: 'mcp stop' });
  // Codex gives its server none of the repo's settings: the hooks that show notices carry the subscriptions.
  assert.equal(codex.UserPromptSubmit?.[0]?.hooks[0]?.input?.default_channels, 'brain,amygdala');
  assert.equal(codex.Stop?.[0]?.hooks[0]?.input?.default_channels, undefined);
  assert.deepEqual(Object.keys(codex.Stop?.[0]?.hooks[0]?.input ?? {}), ['kind', 'session_id', 'cwd', 'hook_event_name', 'stop_hook_active', 'last_assistant_message']);
  const doctor = runCli(['doctor'], { env, cwd: repo });
  assert.match(doctor.stdout, /ok +wiring: shop\/claude \(claude in .*\): server and hooks in place \(hooks answered by the server, no process\)/);
  assert.match(doctor.stdout, /ok +wiring: shop\/codex \(codex in .*\): server and hooks in place \(hooks answered by the server, no process\)/);
}));

test('older clients get command hooks; --hooks picks either kind; a bad kind is a usage error that writes nothing', withTempBus((bus) => {
  const { repo, env } = setUp(bus, '2.1.331', '0.170.9');
  init(repo, env);
  assert.equal(kinds(claudeSettings(repo).hooks).UserPromptSubmit, 'command hook-user-prompt');
  assert.equal(kinds(codexHooks(repo)).UserPromptSubmit, 'command hook-user-prompt');
  assert.match(runCli(['doctor'], { env, cwd: repo }).stdout, /shop\/claude .*: server and hooks in place \(command hooks\)/);
  // Asked for, the server's hooks are written, and init says they will not run on this version.
  const forced = init(repo, env, '--hooks', 'mcp');
  assert.match(forced, /Claude Code 2\.1\.331 is older than 2\.1\.332: they will not run before 2\.1\.332/);
  assert.equal(kinds(codexHooks(repo)).Stop, 'mcp stop');
  const doctor = runCli(['doctor'], { env, cwd: repo });
  assert.match(doctor.stdout, /warn +wiring: shop\/claude .*its hooks are answered by its server, which Claude Code 2\.1\.331 does not do \(2\.1\.332 and later\): its hooks do not run\n +fix: upgrade Claude Code to 2\.1\.332 or later, or agent-bus init --clients claude .* --hooks command/);
  const before = readFileSync(join(repo, '.claude', 'settings.json'), 'utf8');
  const bad = runCli(['init', '--hooks', 'process'], { env, cwd: repo });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--hooks must be command or mcp, got 'process'/);
  assert.equal(readFileSync(join(repo, '.claude', 'settings.json'), 'utf8'), before, 'nothing written');
  const { env: newer } = setUp(bus, '2.1.400', '0.200.0');
  init(repo, newer, '--hooks', 'command');
  assert.equal(kinds(claudeSettings(repo).hooks).PreToolUse, 'command hook-pre-tool');
  assert.equal(kinds(codexHooks(repo)).PreToolUse, 'command hook-pre-tool');
  assert.match(runCli(['doctor'], { env: newer, cwd: repo }).stdout, /\(command hooks; Claude Code 2\.1\.400 can answer them in its server, with no process: agent-bus init --clients claude/);
}));

test('a re-run after an upgrade switches the kind, and keeps the user\'s own hooks, settings and edited subscriptions', withTempBus((bus) => {
  const { repo, env } = setUp(bus, '2.1.331', '0.170.0');
  init(repo, env);
  // The user's own: a hook of theirs on an event init writes, a setting, a deny rule; subscriptions edited in Codex's hook.
  const settingsPath = join(repo, '.claude', 'settings.json');
  const settings = claudeSettings(repo);
  settings.hooks.PreToolUse?.push({ matcher: 'Bash', hooks: [{ type: 'command', command: './my-check.sh' }] });
  settings.permissions.deny = ['Bash(rm -rf *)'];
  settings.model = 'opus';
  writeFileSync(settingsPath, JSON.stringify(settings, null, 2));
  const hooksPath = join(repo, '.codex', 'hooks.json');
  writeFileSync(hooksPath, readFileSync(hooksPath, 'utf8').replaceAll('AGENT_BUS_DEFAULT_CHANNELS=brain,amygdala', 'AGENT_BUS_DEFAULT_CHANNELS=ops'));
  const { env: upgraded } = setUp(bus, '2.1.332', '0.171.0');
  const output = init(repo, upgraded);
  const after = claudeSettings(repo);
  assert.equal(kinds(after.hooks).PreToolUse, 'mcp pre-tool');
  assert.deepEqual(after.hooks.PreToolUse?.map((group) => group.hooks[0]?.command ?? group.hooks[0]?.tool), ['./my-check.sh', 'client_hook'], "the user's hook kept, ours replaced, not added twice");
  assert.deepEqual(after.permissions.deny, ['Bash(rm -rf *)', 'mcp__agent-bus__client_hook']);
  assert.equal(after.model, 'opus');
  const codex = codexHooks(repo);
  assert.equal(kinds(codex).PreToolUse, 'mcp pre-tool');
  assert.equal(codex.PreToolUse?.[0]?.hooks[0]?.input?.default_channels, 'ops', 'the edited subscriptions carried over');
  assert.match(output, /approve them again under \/hooks in Codex/);
  // And back: a re-run asking for commands restores them, the edited subscriptions still kept.
  init(repo, upgraded, '--hooks', 'command');
  assert.match(JSON.stringify(codexHooks(repo).PreToolUse), /AGENT_BUS_DEFAULT_CHANNELS=ops agent-bus hook-pre-tool --client codex/);
  assert.equal(claudeSettings(repo).hooks.PreToolUse?.length, 2);
  init(repo, upgraded, '--hooks', 'command');
  assert.equal(readFileSync(settingsPath, 'utf8'), JSON.stringify(claudeSettings(repo), null, 2) + '\n', 'a second run changes nothing');
}));
