/** `agent-bus init --clients codex`: our table between markers, everything else byte for byte, and hooks that run. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parse } from 'smol-toml';
import { runCli, type TempBus, withTempBus } from '../helpers/bus-env.js';
import { agentBusOnPath } from '../helpers/on-path.js';

function repo(bus: TempBus, ...parts: string[]): string {
  const path = join(bus.dir, ...parts);
  mkdirSync(join(path, '.git'), { recursive: true });
  return path;
}

/** The bus's environment with agent-bus on PATH, as an installed one is: what the committed files run. */
const onPath = (bus: TempBus): NodeJS.ProcessEnv => ({ ...bus.env, PATH: agentBusOnPath(bus.dir).PATH });
const init = (bus: TempBus, args: string[], cwd?: string) => runCli(['init', '--clients', 'codex', ...args], { env: onPath(bus), cwd });
const config = (path: string): string => readFileSync(join(path, '.codex', 'config.toml'), 'utf8');

test('a fresh repo gets the marked table and hooks that carry no agent name', withTempBus((bus) => {
  const one = repo(bus, 'web-app');
  const two = repo(bus, 'api');
  assert.equal(init(bus, [], one).code, 0);
  assert.equal(init(bus, [], two).code, 0);
  assert.equal(
    config(one),
    [
      '# >>> agent-bus: managed by `agent-bus init`, regenerated on every run >>>',
      '[mcp_servers.agent-bus]',
      'command = "agent-bus"',
      'args = ["serve", "--client", "codex"]',
      'env_vars = ["AGENT_BUS_SESSION", "AGENT_BUS_INSTANCE", "AGENT_BUS_DB", "AGENT_BUS_HOME", "AGENT_BUS_AUDIT_LOG", "AGENT_BUS_PG_CONNECT_TIMEOUT", "AGENT_BUS_CHANNELS", "AGENTIHOOKS_BASE_CHANNELS", "AGENT_BUS_NAME"]',
      'default_tools_approval_mode = "approve"',
      '# <<< agent-bus <<<',
      '',
    ].join('\n'),
  );
  const hooks = readFileSync(join(one, '.codex', 'hooks.json'), 'utf8');
  assert.equal(hooks, readFileSync(join(two, '.codex', 'hooks.json'), 'utf8'), 'identical in every repo, so one approval covers them');
  const parsed = JSON.parse(hooks) as { hooks: Record<string, Array<{ matcher?: string; hooks: Array<{ command: string }> }>> };
  for (const [event, subcommand] of [['SessionStart', 'hook-session-start'], ['UserPromptSubmit', 'hook-user-prompt'], ['PreToolUse', 'hook-pre-tool']]) {
    // Codex gives hooks only its own environment: the subscriptions ride in the command.
    assert.equal(parsed.hooks[event as string]?.[0]?.hooks[0]?.command, `AGENT_BUS_DEFAULT_CHANNELS=brain,amygdala agent-bus ${subcommand} --client codex || true`, event);
  }
  assert.equal(parsed.hooks.Stop?.[0]?.hooks[0]?.command, 'agent-bus hook-stop --client codex || true');
  assert.equal(config(one), config(two), 'the config too is the same in every repo: nothing in it is the repo\'s or the machine\'s');
  assert.equal(parsed.hooks.Stop?.[0]?.matcher, undefined);
  assert.deepEqual(Object.keys(parsed.hooks), ['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'Stop'], 'Codex has no notification or session-end event');
  assert.doesNotMatch(hooks, /AGENT_BUS_NAME/);
}));

test('subscriptions edited in the hook commands are kept by a re-run', withTempBus((bus) => {
  const path = repo(bus, 'ops');
  assert.equal(init(bus, [], path).code, 0);
  const hooksPath = join(path, '.codex', 'hooks.json');
  writeFileSync(hooksPath, readFileSync(hooksPath, 'utf8').replaceAll('AGENT_BUS_DEFAULT_CHANNELS=brain,amygdala', "AGENT_BUS_DEFAULT_CHANNELS='*'"));
  const rerun = init(bus, ['--bin-path', '/opt/agent-bus'], path);
  assert.equal(rerun.code, 0);
  assert.match(rerun.stdout, /Codex reads no personal file in the repo, so its committed files run `agent-bus` from PATH and \/opt\/agent-bus is written nowhere/);
  const parsed = JSON.parse(readFileSync(hooksPath, 'utf8')) as { hooks: Record<string, Array<{ hooks: Array<{ command: string }> }>> };
  assert.equal(parsed.hooks.PreToolUse?.[0]?.hooks[0]?.command, "AGENT_BUS_DEFAULT_CHANNELS='*' agent-bus hook-pre-tool --client codex || true");
  assert.equal(parsed.hooks.PreToolUse?.length, 1);
}));

test('hooks an older init wrote with AGENT_BUS_CHANNELS are migrated, the value kept, and Codex is said to ask again', withTempBus((bus) => {
  const path = repo(bus, 'older');
  assert.equal(init(bus, [], path).code, 0);
  const hooksPath = join(path, '.codex', 'hooks.json');
  // As an init older than the layers wrote them, with the user's edit.
  writeFileSync(hooksPath, readFileSync(hooksPath, 'utf8').replaceAll('AGENT_BUS_DEFAULT_CHANNELS=brain,amygdala', 'AGENT_BUS_CHANNELS=brain,deploy'));
  const rerun = init(bus, [], path);
  assert.equal(rerun.code, 0, rerun.stderr);
  assert.match(rerun.stdout, /subscriptions now set as AGENT_BUS_DEFAULT_CHANNELS, so a launch value wins over them: approve the changed hooks under \/hooks in Codex/);
  const text = readFileSync(hooksPath, 'utf8');
  assert.doesNotMatch(text, /\bAGENT_BUS_CHANNELS=/);
  const parsed = JSON.parse(text) as { hooks: Record<string, Array<{ hooks: Array<{ command: string }> }>> };
  for (const event of ['SessionStart', 'UserPromptSubmit', 'PreToolUse']) {
    assert.equal(parsed.hooks[event]?.[0]?.hooks[0]?.command, `AGENT_BUS_DEFAULT_CHANNELS=brain,deploy agent-bus ${event === 'SessionStart' ? 'hook-session-start' : event === 'UserPromptSubmit' ? 'hook-user-prompt' : 'hook-pre-tool'} --client codex || true`);
  }
  const again = init(bus, [], path);
  assert.match(again.stdout, /nothing to do/);
  assert.doesNotMatch(again.stdout, /approve the changed hooks/);
}));

test("the user's tables and comments stay byte for byte; re-runs are identical; an older init's block is replaced; a rename leaves the config as it is", withTempBus((bus) => {
  const path = repo(bus, 'svc');
  mkdirSync(join(path, '.codex'));
  const mine = '# my codex settings\nmodel = "o3" # inline note\n\n[profiles.fast]\nmodel = "mini"\n\n[mcp_servers.other]\ncommand = "other"\n';
  writeFileSync(join(path, '.codex', 'config.toml'), mine);
  assert.equal(init(bus, [], path).code, 0);
  const first = config(path);
  assert.ok(first.startsWith(`${mine}\n# >>> agent-bus`), 'appended after a blank line, the rest untouched');
  assert.equal((parse(first) as { profiles: { fast: { model: string } } }).profiles.fast.model, 'mini');
  assert.match(init(bus, [], path).stdout, /nothing to do/);
  assert.equal(config(path), first);
  // An older init's block, naming its agent and this machine's paths: replaced by ours, the rest as it was.
  writeFileSync(join(path, '.codex', 'config.toml'), first.replace('args = ["serve", "--client", "codex"]', 'args = ["serve"]\n\n[mcp_servers.agent-bus.env]\nAGENT_BUS_NAME = "svc/codex"\nAGENT_BUS_REPO = "/home/someone/svc"'));
  const hooksPath = join(path, '.codex', 'hooks.json');
  const hooks = readFileSync(hooksPath, 'utf8');
  writeFileSync(hooksPath, hooks.replaceAll(' agent-bus hook-', ' /usr/local/bin/agent-bus hook-').replaceAll('"agent-bus hook-', '"/usr/local/bin/agent-bus hook-'));
  const replaced = init(bus, [], path);
  assert.equal(replaced.code, 0);
  assert.equal(config(path), first);
  assert.equal(readFileSync(hooksPath, 'utf8'), hooks);
  assert.match(replaced.stdout, /codex: the hook commands changed: approve them again under \/hooks in Codex/, 'Codex approves a hook by its command');
  assert.equal(init(bus, ['--name', 'renamed'], path).code, 0);
  const renamed = config(path);
  assert.equal(renamed, first, 'a name is no part of the config: it is pinned in .agent-bus-name');
  assert.equal(readFileSync(join(path, '.agent-bus-name'), 'utf8'), 'renamed\n');
  assert.equal(renamed.split('# >>> agent-bus').length, 2, 'still one block');
}));

test("a table of the user's own is left alone even with --force; broken files are never touched", withTempBus((bus) => {
  const own = repo(bus, 'own');
  mkdirSync(join(own, '.codex'));
  const theirs = '[mcp_servers.agent-bus]\ncommand = "their-bus"\n';
  writeFileSync(join(own, '.codex', 'config.toml'), theirs);
  const forced = init(bus, ['--force'], own);
  assert.match(forced.stdout, /skip-handwritten .*codex: hand-written agent-bus entry left alone\)/);
  assert.equal(config(own), theirs);

  const markers = repo(bus, 'markers');
  mkdirSync(join(markers, '.codex'));
  const twice = '# >>> agent-bus: managed by `agent-bus init`, regenerated on every run >>>\n# >>> agent-bus: managed by `agent-bus init`, regenerated on every run >>>\n# <<< agent-bus <<<\n';
  writeFileSync(join(markers, '.codex', 'config.toml'), twice);
  assert.match(init(bus, [], markers).stdout, /skip-unreadable .*markers are not a single well-formed block \(2 start, 1 end\)/);
  assert.equal(config(markers), twice);

  const invalid = repo(bus, 'invalid');
  mkdirSync(join(invalid, '.codex'));
  writeFileSync(join(invalid, '.codex', 'config.toml'), 'model = \n');
  assert.match(init(bus, ['--force'], invalid).stdout, /skip-unreadable .*it is not valid TOML, left alone/);
  assert.equal(config(invalid), 'model = \n');
}));

test('the Codex hook commands run as written and answer in JSON', withTempBus((bus) => {
  const path = repo(bus, 'live');
  assert.equal(init(bus, [], path).code, 0);
  assert.equal(runCli(['send', 'mail for codex', '--to', 'live/codex'], { env: bus.env }).code, 0);
  const hooks = JSON.parse(readFileSync(join(path, '.codex', 'hooks.json'), 'utf8')) as { hooks: Record<string, Array<{ hooks: Array<{ command: string }> }>> };
  const command = hooks.hooks.UserPromptSubmit?.[0]?.hooks[0]?.command ?? '';
  const ran = spawnSync('sh', ['-c', command], { env: onPath(bus), cwd: bus.dir, input: JSON.stringify({ cwd: path, session_id: 't-1', hook_event_name: 'UserPromptSubmit' }), encoding: 'utf8' });
  assert.equal(ran.status, 0, ran.stderr);
  const context = (JSON.parse(ran.stdout) as { hookSpecificOutput: { additionalContext: string } }).hookSpecificOutput.additionalContext;
  assert.match(context, /mail for codex/);
}));
