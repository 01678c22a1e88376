/**
 * `agent-bus init --clients copilot`: our server merged into `.github/mcp.json`, our hooks in a file of
 * their own under `.github/hooks/`; the hook commands as written, run with Copilot CLI's payloads; and a
 * server started from Claude Code's `.mcp.json` by Copilot CLI speaking for Copilot.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { readAudit, runCli, type TempBus, withTempBus } from '../helpers/bus-env.js';
import { agentEnv, register } from '../helpers/agents.js';
import { agentBusOnPath } from '../helpers/on-path.js';

/** The bus's environment with agent-bus on PATH, as an installed one is: what the committed files run. */
const onPath = (bus: TempBus): NodeJS.ProcessEnv => ({ ...bus.env, PATH: agentBusOnPath(bus.dir).PATH });
import { connect } from '../helpers/mcp.js';

function repo(bus: TempBus, name: string): string {
  const path = join(bus.dir, name);
  mkdirSync(join(path, '.git'), { recursive: true });
  return path;
}

const init = (bus: TempBus, args: string[], cwd: string, clients = 'copilot') => runCli(['init', '--clients', clients, ...args], { env: onPath(bus), cwd });

type Hooks = { version: number; hooks: Record<string, Array<{ matcher: string; hooks: Array<{ type: string; command: string }> }>> };

const hooksOf = (path: string): Hooks => JSON.parse(readFileSync(join(path, '.github', 'hooks', 'agent-bus.json'), 'utf8')) as Hooks;
const command = (path: string, event: string): string => hooksOf(path).hooks[event]?.[0]?.hooks[0]?.command ?? '';

test("the server is merged into .github/mcp.json and the hooks get a file of their own; the user's servers and hook files stay; a re-run changes nothing", withTempBus((bus) => {
  const path = repo(bus, 'web');
  mkdirSync(join(path, '.github', 'hooks'), { recursive: true });
  writeFileSync(join(path, '.github', 'mcp.json'), JSON.stringify({ mcpServers: { mine: { command: 'my-server' } } }));
  writeFileSync(join(path, '.github', 'hooks', 'lint.json'), '{"version":1,"hooks":{"postToolUse":[{"type":"command","bash":"./lint.sh"}]}}');
  assert.equal(init(bus, [], path).code, 0);
  const mcp = JSON.parse(readFileSync(join(path, '.github', 'mcp.json'), 'utf8')) as { mcpServers: Record<string, unknown> };
  assert.deepEqual(mcp.mcpServers, {
    mine: { command: 'my-server' },
    'agent-bus': { command: 'agent-bus', args: ['serve', '--client', 'copilot'], env: { AGENT_BUS_DEFAULT_CHANNELS: 'brain,amygdala' }, tools: ['*'] },
  });
  const hooks = hooksOf(path);
  assert.equal(hooks.version, 1);
  assert.deepEqual(Object.keys(hooks.hooks), ['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'Stop', 'Notification', 'SessionEnd']);
  assert.deepEqual(hooks.hooks.PreToolUse, [{ matcher: '*', hooks: [{ type: 'command', command: 'AGENT_BUS_DEFAULT_CHANNELS=brain,amygdala agent-bus hook-pre-tool --client copilot || true' }] }]);
  assert.equal(hooks.hooks.Notification?.[0]?.matcher, 'permission_prompt|elicitation_dialog');
  assert.equal(command(path, 'Stop'), 'agent-bus hook-stop --client copilot || true');
  assert.equal(readFileSync(join(path, '.github', 'hooks', 'lint.json'), 'utf8'), '{"version":1,"hooks":{"postToolUse":[{"type":"command","bash":"./lint.sh"}]}}');
  assert.match(init(bus, [], path).stdout, /nothing to do/);

  // Edited subscriptions are kept; a hooks file of the user's own by our name is left alone without --force.
  const file = join(path, '.github', 'hooks', 'agent-bus.json');
  writeFileSync(file, readFileSync(file, 'utf8').replaceAll('AGENT_BUS_DEFAULT_CHANNELS=brain,amygdala', 'AGENT_BUS_DEFAULT_CHANNELS=deploy'));
  assert.equal(init(bus, [], path).code, 0);
  assert.match(command(path, 'UserPromptSubmit'), /^AGENT_BUS_DEFAULT_CHANNELS=deploy agent-bus /);
  const own = repo(bus, 'own');
  mkdirSync(join(own, '.github', 'hooks'), { recursive: true });
  const theirs = '{"version":1,"hooks":{"agentStop":[{"type":"command","bash":"./notify.sh"}]}}';
  writeFileSync(join(own, '.github', 'hooks', 'agent-bus.json'), theirs);
  assert.match(init(bus, [], own).stdout, /skip-handwritten/);
  assert.equal(readFileSync(join(own, '.github', 'hooks', 'agent-bus.json'), 'utf8'), theirs);
  assert.ok(!existsSync(join(own, '.github', 'mcp.json')), 'nothing else written');
}));

test("the hook commands as written answer Copilot CLI's events in its JSON: mail at the prompt, a reserved file's write refused, notices at a tool call, the turn kept for mail", withTempBus((bus) => {
  const path = repo(bus, 'live');
  assert.equal(init(bus, [], path).code, 0);
  register(agentEnv(bus, 'live/codex', path));
  const run = (event: string, payload: Record<string, unknown> = {}): string => {
    const result = spawnSync('sh', ['-c', command(path, event)], { env: onPath(bus), cwd: path, input: JSON.stringify({ hook_event_name: event, session_id: 'c-1', timestamp: '2026-12-06T00:00:00.000Z', cwd: path, ...payload }), encoding: 'utf8' });
    assert.equal(result.status, 0, result.stderr);
    return result.stdout;
  };
  assert.equal(runCli(['send', 'mail for the prompt', '--to', 'live/copilot'], { env: bus.env }).code, 0);
  assert.match((JSON.parse(run('UserPromptSubmit', { prompt: 'go' })) as { additionalContext: string }).additionalContext, /mail for the prompt/);

  assert.equal(runCli(['reserve', 'src/app.ts', '--reason', 'refactor'], { env: agentEnv(bus, 'live/codex', path), cwd: path }).code, 0);
  const denied = JSON.parse(run('PreToolUse', { tool_name: 'Edit', tool_input: { path: join(path, 'src', 'app.ts'), old_str: 'a', new_str: 'b' } })) as { permissionDecision: string; permissionDecisionReason: string };
  assert.equal(denied.permissionDecision, 'deny');
  assert.match(denied.permissionDecisionReason, /src\/app\.ts is reserved by live\/codex/);
  assert.equal(readAudit(bus.audit).filter((row) => row.op === 'deny').length, 1);

  assert.equal(runCli(['channel', 'publish', 'brain', 'BRAIN-CRITICAL', '-s', 'critical'], { env: bus.env }).code, 0);
  assert.match((JSON.parse(run('PreToolUse', { tool_name: 'Bash', tool_input: { command: 'ls' } })) as { additionalContext: string }).additionalContext, /BRAIN-CRITICAL/);

  assert.equal(runCli(['send', 'please review', '--to', 'live/copilot'], { env: agentEnv(bus, 'live/codex', path) }).code, 0);
  const kept = JSON.parse(run('Stop', { stop_reason: 'end_turn', stop_hook_active: false })) as { decision: string; reason: string };
  assert.deepEqual([kept.decision, /please review/.test(kept.reason)], ['block', true]);
  assert.equal(run('Stop', { stop_reason: 'end_turn', stop_hook_active: true }), '');
}));

test("a server Copilot CLI starts from Claude Code's .mcp.json (whose entry wins over its own) speaks for Copilot in that repo; started by Claude Code, the same entry speaks for Claude Code", withTempBus(async (bus) => {
  const path = repo(bus, 'both');
  assert.equal(init(bus, [], path, 'claude,copilot').code, 0);
  const entry = (JSON.parse(readFileSync(join(path, '.mcp.json'), 'utf8')) as { mcpServers: Record<string, { args: string[]; env?: Record<string, string> }> }).mcpServers['agent-bus'];
  assert.deepEqual(entry?.args, ['serve', '--client', 'claude']);
  const whoami = async (extra: NodeJS.ProcessEnv): Promise<string> => {
    const session = await connect({ ...bus.env, ...entry?.env, ...extra }, { cwd: path, args: entry?.args.slice(1) ?? [] });
    try {
      return (await session.call<{ name: string }>('whoami')).name;
    } finally {
      await session.close();
    }
  };
  assert.match(await whoami({ COPILOT_AGENT_SESSION_ID: 'c-1' }), /^both\/copilot(-\d+)?$/);
  assert.match(await whoami({ CLAUDE_CODE_SESSION_ID: 'cc-1' }), /^both\/claude(-\d+)?$/);
}));
