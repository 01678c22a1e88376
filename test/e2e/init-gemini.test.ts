/**
 * `agent-bus init --clients gemini`: our server and hooks in the repo's `.gemini/settings.json`, the
 * user's settings untouched; and the hook commands as written, run with Gemini CLI's payloads.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { json, readAudit, runCli, type TempBus, withTempBus } from '../helpers/bus-env.js';
import { agentEnv, register } from '../helpers/agents.js';
import { agentBusOnPath } from '../helpers/on-path.js';

/** The bus's environment with agent-bus on PATH, as an installed one is: what the committed files run. */
const onPath = (bus: TempBus): NodeJS.ProcessEnv => ({ ...bus.env, PATH: agentBusOnPath(bus.dir).PATH });

function repo(bus: TempBus, name: string): string {
  const path = join(bus.dir, name);
  mkdirSync(join(path, '.git'), { recursive: true });
  return path;
}

const init = (bus: TempBus, args: string[], cwd: string) => runCli(['init', '--clients', 'gemini', ...args], { env: onPath(bus), cwd });

type Group = { matcher?: string; hooks: Array<{ type: string; name?: string; command: string }> };
type Settings = { mcpServers: Record<string, unknown>; hooks: Record<string, Group[]>; [key: string]: unknown };

const settingsOf = (path: string): Settings => JSON.parse(readFileSync(join(path, '.gemini', 'settings.json'), 'utf8')) as Settings;

/** Our command for `event` in the repo's settings. */
function ours(path: string, event: string): string {
  const group = settingsOf(path).hooks[event]?.find((entry) => entry.hooks.some((hook) => hook.command.includes('--client gemini')));
  assert.ok(group, `a hook of ours for ${event}`);
  return group.hooks[0]?.command ?? '';
}

test("the server and a hook for each Gemini CLI event are added to .gemini/settings.json; the user's settings, servers and hooks stay; a re-run changes nothing", withTempBus((bus) => {
  const path = repo(bus, 'web');
  mkdirSync(join(path, '.gemini'));
  const mine = { ui: { theme: 'Dracula' }, mcpServers: { mine: { command: 'my-server' } }, hooks: { BeforeTool: [{ matcher: 'write_file', hooks: [{ type: 'command', command: './lint.sh' }] }] } };
  writeFileSync(join(path, '.gemini', 'settings.json'), JSON.stringify(mine));
  assert.equal(init(bus, [], path).code, 0);
  const settings = settingsOf(path);
  assert.deepEqual(settings.ui, mine.ui);
  assert.deepEqual(settings.mcpServers.mine, mine.mcpServers.mine);
  assert.deepEqual(settings.mcpServers['agent-bus'], {
    command: 'agent-bus',
    args: ['serve', '--client', 'gemini'],
    env: { AGENT_BUS_DEFAULT_CHANNELS: 'brain,amygdala' },
    trust: true,
  });
  assert.deepEqual(Object.keys(settings.hooks), ['BeforeTool', 'SessionStart', 'BeforeAgent', 'AfterTool', 'AfterAgent', 'Notification', 'SessionEnd']);
  assert.deepEqual(settings.hooks.BeforeTool?.[0], mine.hooks.BeforeTool[0], "the user's hook is first, as it was");
  assert.deepEqual(settings.hooks.BeforeTool?.[1], {
    matcher: '',
    hooks: [{ type: 'command', name: 'agent-bus hook-pre-tool', command: 'AGENT_BUS_DEFAULT_CHANNELS=brain,amygdala agent-bus hook-pre-tool --client gemini || true' }],
  });
  assert.equal(ours(path, 'AfterAgent'), 'agent-bus hook-stop --client gemini || true', 'the stop hook shows no notices: no subscriptions');
  assert.equal(ours(path, 'AfterTool'), ours(path, 'BeforeTool'), 'one pre-tool command for both tool events');
  const before = readFileSync(join(path, '.gemini', 'settings.json'), 'utf8');
  assert.match(init(bus, [], path).stdout, /nothing to do/);
  assert.equal(readFileSync(join(path, '.gemini', 'settings.json'), 'utf8'), before);
}));

test('subscriptions edited in the hook commands are kept by the next run; a hand-written server needs --force; a file that is not JSON is never touched', withTempBus((bus) => {
  const path = repo(bus, 'kept');
  assert.equal(init(bus, [], path).code, 0);
  const file = join(path, '.gemini', 'settings.json');
  writeFileSync(file, readFileSync(file, 'utf8').replaceAll('AGENT_BUS_DEFAULT_CHANNELS=brain,amygdala', 'AGENT_BUS_DEFAULT_CHANNELS=deploy,brain'));
  assert.equal(init(bus, ['--name', 'renamed'], path).code, 0);
  assert.match(ours(path, 'BeforeAgent'), /^AGENT_BUS_DEFAULT_CHANNELS=deploy,brain agent-bus hook-user-prompt /);
  assert.equal(readFileSync(join(path, '.agent-bus-name'), 'utf8'), 'renamed\n', 'the name is pinned for every session to find');
  assert.equal((settingsOf(path).mcpServers['agent-bus'] as { env: Record<string, string> }).env.AGENT_BUS_DEFAULT_CHANNELS, 'deploy,brain');
  assert.equal(settingsOf(path).hooks.BeforeAgent?.length, 1, 'our hook replaced, not added again');

  const own = repo(bus, 'own');
  mkdirSync(join(own, '.gemini'));
  const theirs = '{"mcpServers":{"agent-bus":{"command":"their-bus","args":["--stdio"]}}}';
  writeFileSync(join(own, '.gemini', 'settings.json'), theirs);
  assert.match(init(bus, [], own).stdout, /skip-handwritten/);
  assert.equal(readFileSync(join(own, '.gemini', 'settings.json'), 'utf8'), theirs);
  assert.equal(init(bus, ['--force'], own).code, 0);
  assert.equal((settingsOf(own).mcpServers['agent-bus'] as { args: string[] }).args[0], 'serve', '--force replaces it');

  const broken = repo(bus, 'broken');
  mkdirSync(join(broken, '.gemini'));
  writeFileSync(join(broken, '.gemini', 'settings.json'), '{"ui": ');
  assert.match(init(bus, ['--force'], broken).stdout, /skip-unreadable .*it is not valid JSON, left alone/);
  assert.equal(readFileSync(join(broken, '.gemini', 'settings.json'), 'utf8'), '{"ui": ');
}));

test("the hook commands as written answer Gemini CLI's events: mail before the turn, writes refused before a call, notices after it, the turn kept for mail", withTempBus((bus) => {
  const path = repo(bus, 'live');
  assert.equal(init(bus, [], path).code, 0);
  register(agentEnv(bus, 'live/codex', path));
  const base = { session_id: 'g-1', transcript_path: join(path, 'chat.jsonl'), cwd: path, timestamp: '2026-12-06T00:00:00.000Z' };
  const run = (event: string, payload: Record<string, unknown> = {}, env: NodeJS.ProcessEnv = {}): string => {
    const result = spawnSync('sh', ['-c', ours(path, event)], { env: { ...onPath(bus), GEMINI_SESSION_ID: 'g-1', ...env }, cwd: path, input: JSON.stringify({ ...base, hook_event_name: event, ...payload }), encoding: 'utf8' });
    assert.equal(result.status, 0, result.stderr);
    return result.stdout;
  };
  const receipt = (body: string) => bus.rows(`SELECT read_at, delivered_via FROM messages WHERE body = '${body}'`)[0] as { read_at: string | null; delivered_via: string | null } | undefined;

  assert.equal(runCli(['send', 'mail for the turn', '--to', 'live/gemini'], { env: bus.env }).code, 0);
  const prompt = JSON.parse(run('BeforeAgent', { prompt: 'go on' })) as { hookSpecificOutput: { hookEventName: string; additionalContext: string } };
  assert.equal(prompt.hookSpecificOutput.hookEventName, 'BeforeAgent');
  assert.match(prompt.hookSpecificOutput.additionalContext, /mail for the turn/);
  assert.equal(receipt('mail for the turn')?.delivered_via, 'hook-user-prompt');

  // Another agent's reservation: the write is refused before the call, in Gemini CLI's words.
  assert.equal(runCli(['reserve', 'src/app.ts', '--reason', 'refactor'], { env: agentEnv(bus, 'live/codex', path), cwd: path }).code, 0);
  const denied = JSON.parse(run('BeforeTool', { tool_name: 'write_file', tool_input: { file_path: 'src/app.ts', content: 'x' } })) as { decision: string; reason: string };
  assert.equal(denied.decision, 'deny');
  assert.match(denied.reason, /src\/app\.ts is reserved by live\/codex/);
  assert.deepEqual(readAudit(bus.audit).filter((row) => row.op === 'deny').map((row) => [row.actor, row.to, row.body_preview]), [['live/gemini', 'live/codex', 'src/app.ts']], 'the refusal is audited');

  // Urgent mail and a critical notice wait through BeforeTool, which shows the model nothing, and are shown after the call.
  assert.equal(runCli(['send', 'stop the deploy', '--to', 'live/gemini', '--urgent'], { env: bus.env }).code, 0);
  assert.equal(runCli(['channel', 'publish', 'brain', 'BRAIN-CRITICAL', '-s', 'critical'], { env: bus.env }).code, 0);
  assert.equal(run('BeforeTool', { tool_name: 'read_file', tool_input: { file_path: 'README.md' } }), '');
  assert.equal(receipt('stop the deploy')?.read_at, null, 'nothing taken where the model would not see it');
  const after = JSON.parse(run('AfterTool', { tool_name: 'read_file', tool_input: { file_path: 'README.md' }, tool_response: { llmContent: 'text' } })) as { hookSpecificOutput: { hookEventName: string; additionalContext: string } };
  assert.equal(after.hookSpecificOutput.hookEventName, 'AfterTool');
  assert.match(after.hookSpecificOutput.additionalContext, /stop the deploy/);
  assert.match(after.hookSpecificOutput.additionalContext, /BRAIN-CRITICAL/);
  assert.equal(receipt('stop the deploy')?.delivered_via, 'hook-pre-tool');

  // AfterAgent: mail to act on keeps the turn (deny: its reason is the next prompt); then it may end.
  assert.equal(runCli(['send', 'please review', '--to', 'live/gemini'], { env: agentEnv(bus, 'live/codex', path) }).code, 0);
  const kept = JSON.parse(run('AfterAgent', { prompt: 'go on', prompt_response: 'done', stop_hook_active: false })) as { decision: string; reason: string };
  assert.equal(kept.decision, 'deny');
  assert.match(kept.reason, /please review/);
  assert.match(kept.reason, /\n\[agent-bus\] kept working for mail: 1 of 8 turns in a row\.$/, 'the first turn it starts, counted in its reason');
  assert.equal(run('AfterAgent', { prompt: 'go on', prompt_response: 'done', stop_hook_active: true }), '', 'no mail left: the turn ends');

  // The loop guard: Gemini CLI sets no limit on the turns AfterAgent starts. The stop hook counts them, from the
  // agent's last start of work (a person's prompt), and past AGENT_BUS_STOP_KEEPS lets the turn end, its mail unread.
  const mailFromCodex = (body: string): void => assert.equal(runCli(['send', body, '--to', 'live/gemini'], { env: agentEnv(bus, 'live/codex', path) }).code, 0);
  const limited = { AGENT_BUS_STOP_KEEPS: '2' };
  run('BeforeAgent', { prompt: 'a new task' }, limited);
  mailFromCodex('first of a stream');
  assert.match((JSON.parse(run('AfterAgent', { prompt: 'a new task' }, limited)) as { reason: string }).reason, /first of a stream[\s\S]*1 of 2 turns in a row\.$/);
  mailFromCodex('second of a stream');
  assert.match((JSON.parse(run('AfterAgent', { prompt: 'a new task', stop_hook_active: true }, limited)) as { reason: string }).reason, /second of a stream[\s\S]*2 of 2 turns in a row\.$/);
  mailFromCodex('one too many');
  assert.equal(run('AfterAgent', { prompt: 'a new task', stop_hook_active: true }, limited), '', 'past the limit the turn ends');
  assert.equal(receipt('one too many')?.read_at, null, 'its mail is left for the next prompt');
  assert.match(run('BeforeAgent', { prompt: 'the person again' }, limited), /one too many/);
  mailFromCodex('a fresh run');
  assert.match((JSON.parse(run('AfterAgent', { prompt: 'the person again' }, limited)) as { reason: string }).reason, /1 of 2 turns in a row\.$/, "a person's prompt starts the count again");
  mailFromCodex('no count kept');
  assert.doesNotMatch((JSON.parse(run('AfterAgent', { prompt: 'x', stop_hook_active: true }, { AGENT_BUS_STOP_KEEPS: '0' })) as { reason: string }).reason, /turns in a row/, '0: no limit, and no count');

  // A tool call waiting for approval is the session waiting on its person.
  assert.equal(run('Notification', { notification_type: 'ToolPermission', message: 'Allow write_file?', details: {} }), '');
  const state = (json<Array<{ name: string; state?: string }>>(runCli(['agents', '--json'], { env: bus.env })).find((row) => row.name.startsWith('live/gemini')) ?? {}).state;
  assert.equal(state, 'waiting');
}));
