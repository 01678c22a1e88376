/**
 * `agent-bus init --clients qwen`: our server and hooks in the repo's `.qwen/settings.json`, the
 * user's settings untouched; and the hook commands as written, run with Qwen Code's payloads
 * (Claude Code's shape, Qwen Code's tool names), answered in JSON.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { json, readAudit, runCli, type TempBus, withTempBus } from '../helpers/bus-env.js';
import { agentEnv, register } from '../helpers/agents.js';
import { agentBusOnPath } from '../helpers/on-path.js';
import { approveQwenServer } from '../clients/fleet-setup.js';

/** The bus's environment with agent-bus on PATH, as an installed one is: what the committed files run. */
const onPath = (bus: TempBus): NodeJS.ProcessEnv => ({ ...bus.env, PATH: agentBusOnPath(bus.dir).PATH });

function repo(bus: TempBus, name: string): string {
  const path = join(bus.dir, name);
  mkdirSync(join(path, '.git'), { recursive: true });
  return path;
}

const init = (bus: TempBus, args: string[], cwd: string) => runCli(['init', '--clients', 'qwen', ...args], { env: onPath(bus), cwd });

type Group = { matcher?: string; hooks: Array<{ type: string; name?: string; command: string }> };
type Settings = { mcpServers: Record<string, unknown>; hooks: Record<string, Group[]>; [key: string]: unknown };

const settingsOf = (path: string): Settings => JSON.parse(readFileSync(join(path, '.qwen', 'settings.json'), 'utf8')) as Settings;

/** Our command for `event` in the repo's settings. */
function ours(path: string, event: string): string {
  const group = settingsOf(path).hooks[event]?.find((entry) => entry.hooks.some((hook) => hook.command.includes('--client qwen')));
  assert.ok(group, `a hook of ours for ${event}`);
  return group.hooks[0]?.command ?? '';
}

test("init --clients qwen merges the server and a hook for each Qwen Code event into .qwen/settings.json; the user's settings, servers and hooks stay; a re-run changes nothing", withTempBus((bus) => {
  const path = repo(bus, 'web');
  mkdirSync(join(path, '.qwen'));
  const mine = { model: { name: 'qwen3-coder' }, mcpServers: { mine: { command: 'my-server' } }, hooks: { PreToolUse: [{ matcher: 'write_file', hooks: [{ type: 'command', command: './lint.sh' }] }] } };
  writeFileSync(join(path, '.qwen', 'settings.json'), JSON.stringify(mine));
  const first = init(bus, [], path);
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stdout, /refresh\s+\.qwen\/settings\.json {2}\(qwen\)/);
  assert.match(first.stdout, /^On the bus: web\/qwen /m);
  assert.match(first.stdout, /cd .*web && qwen {3}start Qwen Code there/);
  const settings = settingsOf(path);
  assert.deepEqual(settings.model, mine.model);
  assert.deepEqual(settings.mcpServers.mine, mine.mcpServers.mine);
  assert.deepEqual(settings.mcpServers['agent-bus'], { command: 'agent-bus', args: ['serve', '--client', 'qwen'], env: { AGENT_BUS_DEFAULT_CHANNELS: 'brain,amygdala' }, trust: true });
  assert.deepEqual(Object.keys(settings.hooks), ['PreToolUse', 'SessionStart', 'UserPromptSubmit', 'PostToolUse', 'Stop', 'Notification', 'SessionEnd']);
  assert.deepEqual(settings.hooks.PreToolUse?.[0], mine.hooks.PreToolUse[0], "the user's hook is first, as it was");
  assert.deepEqual(settings.hooks.PreToolUse?.[1], {
    matcher: '',
    hooks: [{ type: 'command', name: 'agent-bus hook-pre-tool', command: 'AGENT_BUS_DEFAULT_CHANNELS=brain,amygdala agent-bus hook-pre-tool --client qwen || true' }],
  });
  assert.equal(settings.hooks.Notification?.[0]?.matcher, 'permission_prompt|elicitation_dialog', 'presence: only a wait on the person');
  assert.equal(ours(path, 'Stop'), 'agent-bus hook-stop --client qwen || true');
  assert.equal(ours(path, 'PostToolUse'), ours(path, 'PreToolUse'), 'one pre-tool command for both tool events');
  const before = readFileSync(join(path, '.qwen', 'settings.json'), 'utf8');
  assert.match(init(bus, [], path).stdout, /nothing to do/);
  assert.equal(readFileSync(join(path, '.qwen', 'settings.json'), 'utf8'), before);

  // A hand-written server is kept unless --force; a file that is not JSON is never touched.
  const own = repo(bus, 'own');
  mkdirSync(join(own, '.qwen'));
  const theirs = '{"mcpServers":{"agent-bus":{"command":"their-bus","args":["--stdio"]}}}';
  writeFileSync(join(own, '.qwen', 'settings.json'), theirs);
  assert.match(init(bus, [], own).stdout, /skip-handwritten/);
  assert.equal(readFileSync(join(own, '.qwen', 'settings.json'), 'utf8'), theirs);
  const broken = repo(bus, 'broken');
  mkdirSync(join(broken, '.qwen'));
  writeFileSync(join(broken, '.qwen', 'settings.json'), '{"model": ');
  assert.match(init(bus, ['--force'], broken).stdout, /skip-unreadable .*it is not valid JSON, left alone/);
  assert.equal(readFileSync(join(broken, '.qwen', 'settings.json'), 'utf8'), '{"model": ');

  // Wired to a hub: the hub's endpoint, the token from Qwen Code's environment, never in the file.
  const hubbed = repo(bus, 'hubbed');
  assert.equal(runCli(['init', '--clients', 'qwen', '--remote', 'http://127.0.0.1:9'], { env: { PATH: onPath(bus).PATH, HOME: bus.env.HOME }, cwd: hubbed }).code, 0);
  assert.deepEqual(settingsOf(hubbed).mcpServers['agent-bus'], { httpUrl: 'http://127.0.0.1:9/mcp', headers: { Authorization: 'Bearer $AGENT_BUS_TOKEN' }, trust: true });
  assert.match(ours(hubbed, 'UserPromptSubmit'), /^AGENT_BUS_URL=http:\/\/127\.0\.0\.1:9 /);
}));

test("the hook commands as written answer Qwen Code's events in its JSON: mail at a prompt (none at its own sends of tool results), writes refused at PreToolUse (a shell command's too), urgent mail with a call's result (PostToolUse), the turn kept once for mail", withTempBus((bus) => {
  const path = repo(bus, 'live');
  assert.equal(init(bus, [], path).code, 0);
  register(agentEnv(bus, 'live/codex', path));
  const base = { session_id: 'q-1', transcript_path: join(path, 'chat.jsonl'), cwd: path, timestamp: '2026-12-07T00:00:00.000Z', permission_mode: 'yolo' };
  const run = (event: string, payload: Record<string, unknown> = {}): string => {
    const result = spawnSync('sh', ['-c', ours(path, event)], { env: { ...onPath(bus), QWEN_CODE_SESSION_ID: 'q-1' }, cwd: path, input: JSON.stringify({ ...base, hook_event_name: event, ...payload }), encoding: 'utf8' });
    assert.equal(result.status, 0, result.stderr);
    return result.stdout;
  };
  const context = (out: string, event: string): string => {
    const parsed = JSON.parse(out) as { hookSpecificOutput: { hookEventName: string; additionalContext: string } };
    assert.equal(parsed.hookSpecificOutput.hookEventName, event);
    return parsed.hookSpecificOutput.additionalContext;
  };
  const receipt = (body: string) => bus.rows(`SELECT read_at, delivered_via FROM messages WHERE body = '${body}'`)[0] as { read_at: string | null; delivered_via: string | null } | undefined;

  assert.equal(runCli(['send', 'mail for the turn', '--to', 'live/qwen'], { env: bus.env }).code, 0);
  assert.match(context(run('UserPromptSubmit', { prompt: 'go on', submitted_prompt: 'go on', prompt_id: 'q-1########0' }), 'UserPromptSubmit'), /mail for the turn/);
  assert.equal(receipt('mail for the turn')?.delivered_via, 'hook-user-prompt');
  // Qwen Code runs UserPromptSubmit again when it sends a tool's result (the prompt empty): that is no prompt, and
  // it answers nothing, the mail come since left for the stop hook.
  assert.equal(runCli(['send', 'mail during the turn', '--to', 'live/qwen'], { env: bus.env }).code, 0);
  assert.equal(run('UserPromptSubmit', { prompt: '', prompt_id: 'q-1########0' }), '');
  assert.equal(receipt('mail during the turn')?.read_at, null, 'not taken by a send of tool results');

  // Another agent's reservation: the write is refused at PreToolUse, naming the holder; through the shell tool too.
  assert.equal(runCli(['reserve', 'src/app.ts', '--reason', 'refactor'], { env: agentEnv(bus, 'live/codex', path), cwd: path }).code, 0);
  for (const [tool, input] of [
    ['write_file', { file_path: join(path, 'src/app.ts'), content: 'x' }],
    ['edit', { file_path: 'src/app.ts', old_string: 'a', new_string: 'b' }],
    ['run_shell_command', { command: 'echo x > app.ts', directory: 'src' }],
  ] as const) {
    const denied = JSON.parse(run('PreToolUse', { tool_name: tool, tool_input: input })) as { hookSpecificOutput: { hookEventName: string; permissionDecision: string; permissionDecisionReason: string } };
    assert.equal(denied.hookSpecificOutput.permissionDecision, 'deny', tool);
    assert.match(denied.hookSpecificOutput.permissionDecisionReason, /src\/app\.ts is reserved by live\/codex/, tool);
  }
  assert.equal(run('PreToolUse', { tool_name: 'read_file', tool_input: { file_path: 'src/app.ts' } }), '', 'a read is let through');
  assert.deepEqual(readAudit(bus.audit).filter((row) => row.op === 'deny').map((row) => [row.actor, row.to]), Array(3).fill(['live/qwen', 'live/codex']), 'each refusal is audited');

  // Urgent mail waits through PreToolUse, whose context Qwen Code drops, and is shown with the call's result (PostToolUse).
  assert.equal(runCli(['send', 'stop the deploy', '--to', 'live/qwen', '--urgent'], { env: bus.env }).code, 0);
  assert.equal(run('PreToolUse', { tool_name: 'read_file', tool_input: { file_path: 'README.md' } }), '');
  assert.equal(receipt('stop the deploy')?.read_at, null, 'nothing taken where the model would not see it');
  assert.match(context(run('PostToolUse', { tool_name: 'read_file', tool_input: { file_path: 'README.md' }, tool_response: { llmContent: 'text' } }), 'PostToolUse'), /stop the deploy/);
  assert.equal(receipt('stop the deploy')?.delivered_via, 'hook-pre-tool');

  // Stop: mail to act on keeps the turn once; with stop_hook_active and nothing new, it may end.
  assert.equal(runCli(['send', 'please review', '--to', 'live/qwen'], { env: agentEnv(bus, 'live/codex', path) }).code, 0);
  const kept = JSON.parse(run('Stop', { stop_hook_active: false, last_assistant_message: 'done' })) as { decision: string; reason: string };
  assert.equal(kept.decision, 'block');
  assert.match(kept.reason, /please review/);
  assert.match(kept.reason, /mail during the turn/);
  assert.equal(run('Stop', { stop_hook_active: true, last_assistant_message: 'done' }), '', 'no mail left: the turn ends');

  // A permission prompt is the session waiting on its person.
  assert.equal(run('Notification', { notification_type: 'permission_prompt', message: 'Allow write_file?' }), '');
  const state = (json<Array<{ name: string; state?: string }>>(runCli(['agents', '--json'], { env: bus.env })).find((row) => row.name.startsWith('live/qwen')) ?? {}).state;
  assert.equal(state, 'waiting');
}));

test('doctor warns when a repo is wired for Qwen Code and the qwen on PATH starts on a Node.js older than 22, and says nothing of it on 22', withTempBus((bus) => {
  const path = repo(bus, 'node-check');
  assert.equal(init(bus, [], path).code, 0);
  // A qwen as npm installs it (`#!/usr/bin/env node`), and a node first on PATH of a version of our choosing.
  const bin = join(bus.dir, 'node-bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'qwen'), '#!/usr/bin/env node\nconsole.log("0.24.4");\n', { mode: 0o755 });
  const withNode = (version: string): NodeJS.ProcessEnv => {
    writeFileSync(join(bin, 'node'), `#!/bin/sh\necho v${version}\n`, { mode: 0o755 });
    return { ...onPath(bus), PATH: `${bin}:${onPath(bus).PATH ?? ''}` };
  };
  type Report = { checks: Array<{ check: string; level: string; detail: string; fix?: string }> };
  const findings = (env: NodeJS.ProcessEnv) => (json<Report>(runCli(['doctor', '--json'], { env })).checks).filter((check) => /Qwen Code needs Node\.js/.test(check.detail));
  const old = findings(withNode('20.19.1'));
  assert.equal(old.length, 1, JSON.stringify(old));
  assert.equal(old[0]?.level, 'warn');
  assert.match(old[0]?.detail ?? '', /^node-check\/qwen \(qwen in .*\): Qwen Code needs Node\.js 22 or later, and .*\/node-bin\/qwen runs on Node\.js 20\.19\.1 here/);
  assert.match(old[0]?.fix ?? '', /install Node\.js 22 or later/);
  assert.deepEqual(findings(withNode('22.23.5')), [], 'on Node.js 22 there is nothing to say');
}));

test("doctor warns while this machine's Qwen Code has not approved the repo's agent-bus server, or approved an earlier entry; approved as Qwen Code records it, nothing", withTempBus((bus) => {
  const path = repo(bus, 'approval');
  assert.equal(init(bus, [], path).code, 0);
  mkdirSync(join(bus.env.HOME as string, '.qwen'), { recursive: true });
  type Report = { checks: Array<{ check: string; level: string; detail: string; fix?: string }> };
  const findings = () => json<Report>(runCli(['doctor', '--json'], { env: onPath(bus) })).checks.filter((check) => check.detail.startsWith('approval/qwen ') && /approve|changed since/.test(check.detail));
  const [pending] = findings();
  assert.match(pending?.detail ?? '', /Qwen Code has not been asked to approve its agent-bus server here yet: its sessions run without the bus's tools, but under --yolo$/);
  assert.equal(pending?.level, 'warn');
  assert.match(pending?.fix ?? '', /^start qwen in .*approval and approve the agent-bus server when it asks/);
  // What approving it in Qwen Code records (the real Qwen Code takes this record: the fleet's Qwen Code test).
  approveQwenServer({ repo: path, home: bus.env.HOME as string });
  assert.deepEqual(findings(), []);
  // Other subscriptions change the server's entry: Qwen Code asks again, and so does doctor.
  const file = join(path, '.qwen', 'settings.json');
  writeFileSync(file, readFileSync(file, 'utf8').replaceAll('brain,amygdala', 'deploy'));
  assert.equal(init(bus, [], path).code, 0);
  assert.match(findings()[0]?.detail ?? '', /its agent-bus server changed since Qwen Code approved it/);
}));
