/**
 * What `agent-bus init` writes for Codex: our MCP server table in
 * `.codex/config.toml`, between two marker comments so that only that span is
 * ever rewritten (the user's other tables and comments stay byte for byte),
 * and the hooks of its profile in `.codex/hooks.json`. Codex approves a hook
 * by its definition, so the commands carry no agent name (the hook finds its
 * agent from the payload's cwd) and are identical in every repo. Both files are
 * committed: they run the bare `agent-bus` and the server, too, finds its agent
 * from the folder Codex starts it in. Codex reads no personal file in the repo.
 */
import { readFileSync } from 'node:fs';
import { parse as parseToml } from 'smol-toml';
import { isObject, isOurHookGroup, jsonText, readJsonConfig, subscriptionsInHooks, type JsonObject } from '../config-files.js';
import { DEFAULT_SUBSCRIPTIONS, DEFAULT_VARIABLE } from '../../core/subscriptions.js';
import { configPaths, hookCommand, NOTICE_HOOKS, isServeFor, legacyName, noPersonalFileNote, serveArgs, type ClientWiring, type Launcher, type WiringInspection, type WiringPlan } from '../wiring.js';
import { codexProfile as profile } from './profile.js';
import { hookWayFor, mcpHookEntry, type HooksChoice } from '../hook-entries.js';

export const BLOCK_START = '# >>> agent-bus: managed by `agent-bus init`, regenerated on every run >>>';
export const BLOCK_END = '# <<< agent-bus <<<';
/**
 * Codex starts MCP servers with a minimal environment: these pass through (a launch subscription too,
 * for brain_status; the name `spawn` gives an agent it starts).
 */
export const PASSED_THROUGH = ['AGENT_BUS_SESSION', 'AGENT_BUS_INSTANCE', 'AGENT_BUS_DB', 'AGENT_BUS_HOME', 'AGENT_BUS_AUDIT_LOG', 'AGENT_BUS_PG_CONNECT_TIMEOUT', 'AGENT_BUS_CHANNELS', 'AGENTIHOOKS_BASE_CHANNELS', 'AGENT_BUS_NAME'];

type TomlRead = { kind: 'missing' } | { kind: 'ok'; text: string } | { kind: 'unreadable'; reason: string };

function readToml(path: string): TomlRead {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? { kind: 'missing' } : { kind: 'unreadable', reason: (error as Error).message };
  }
  const starts = text.split('\n').filter((line) => line.trim() === BLOCK_START).length;
  const ends = text.split('\n').filter((line) => line.trim() === BLOCK_END).length;
  const ordered = starts === 0 || text.indexOf(BLOCK_START) < text.indexOf(BLOCK_END);
  if (starts !== ends || starts > 1 || !ordered) {
    return { kind: 'unreadable', reason: `its agent-bus markers are not a single well-formed block (${starts} start, ${ends} end)` };
  }
  try {
    parseToml(text);
  } catch {
    return { kind: 'unreadable', reason: 'it is not valid TOML' };
  }
  return { kind: 'ok', text };
}

/** The text with our block (markers included) cut out, and where it was. */
function withoutBlock(text: string): { rest: string; at: number } {
  const start = text.indexOf(BLOCK_START);
  if (start < 0) return { rest: text, at: -1 };
  const endMarker = text.indexOf(BLOCK_END, start);
  let end = endMarker + BLOCK_END.length;
  if (text[end] === '\n') end++;
  return { rest: text.slice(0, start) + text.slice(end), at: start };
}

function serverTable(toml: JsonObject): unknown {
  return isObject(toml.mcp_servers) ? toml.mcp_servers['agent-bus'] : undefined;
}

function quote(value: string): string {
  return JSON.stringify(value);
}

export function codexBlock(command: string): string {
  return [
    BLOCK_START,
    '[mcp_servers.agent-bus]',
    `command = ${quote(command)}`,
    `args = [${serveArgs(profile).map(quote).join(', ')}]`,
    `env_vars = [${PASSED_THROUGH.map(quote).join(', ')}]`,
    'default_tools_approval_mode = "approve"',
    BLOCK_END,
    '',
  ].join('\n');
}

/**
 * The block for a hub: `serve` on this machine, set to use the hub, is a relay to its /mcp (the token
 * from $AGENT_BUS_TOKEN, passed through, or what `agent-bus login` saved), and answers the session's
 * hooks through the hub with no process.
 */
export function codexRemoteBlock(command: string, remote: string): string {
  return [
    BLOCK_START,
    '[mcp_servers.agent-bus]',
    `command = ${quote(command)}`,
    `args = [${serveArgs(profile).map(quote).join(', ')}]`,
    `env = { AGENT_BUS_URL = ${quote(remote)} }`,
    `env_vars = [${['AGENT_BUS_TOKEN', ...PASSED_THROUGH].map(quote).join(', ')}]`,
    'default_tools_approval_mode = "approve"',
    BLOCK_END,
    '',
  ].join('\n');
}

/** Our hooks in a hooks file, in order: each command, or an mcp_tool entry as its JSON (Codex approves either by its definition). */
function ourCommands(value: JsonObject): string[] {
  const hooks = isObject(value.hooks) ? value.hooks : {};
  return Object.values(hooks)
    .flatMap((groups) => (Array.isArray(groups) ? groups : []))
    .filter((group) => isOurHookGroup(group, profile.id))
    .flatMap((group) => (isObject(group) && Array.isArray(group.hooks) ? group.hooks : []))
    .map((hook) => (isObject(hook) && typeof hook.command === 'string' ? hook.command : JSON.stringify(hook)));
}

export const codexWiring: ClientWiring = {
  profile,
  // A [mcp_servers.agent-bus] table of the user's own is theirs: not even --force replaces it.
  forceable: false,
  files: (repo) => configPaths(profile, repo),

  inspect(repo): WiringInspection {
    const [configPath, hooksPath] = this.files(repo) as [string, string];
    const config = readToml(configPath);
    if (config.kind === 'unreadable') return { status: 'unreadable', previousName: null, problem: `${configPath}: ${config.reason}, left alone` };
    const hooks = readJsonConfig(hooksPath);
    if (hooks.kind === 'unreadable') return { status: 'unreadable', previousName: null, problem: `${hooksPath}: ${hooks.reason}, left alone` };
    if (config.kind === 'missing') return { status: 'absent', previousName: null };
    const outside = serverTable(parseToml(withoutBlock(config.text).rest) as JsonObject);
    if (outside !== undefined) return { status: 'handwritten', previousName: null };
    const ours = serverTable(parseToml(config.text) as JsonObject);
    if (ours === undefined) return { status: 'absent', previousName: null };
    return { status: 'managed', previousName: isObject(ours) ? legacyName(ours.env) : null };
  },

  plan(repo, launcher: Launcher, remote = null, choice: HooksChoice = 'auto'): WiringPlan {
    const [configPath, hooksPath] = this.files(repo) as [string, string];
    const config = readToml(configPath);
    const hooksRead = readJsonConfig(hooksPath);
    if (config.kind === 'unreadable' || hooksRead.kind === 'unreadable') throw new Error('a config file cannot be parsed');
    const before = config.kind === 'ok' ? config.text : null;
    const block = remote ? codexRemoteBlock(launcher.command, remote) : codexBlock(launcher.command);
    let after: string;
    if (before === null || before.trim() === '') after = block;
    else {
      const { rest, at } = withoutBlock(before);
      if (at >= 0) after = rest.slice(0, at) + block + rest.slice(at);
      else after = `${before}${before.endsWith('\n') ? '' : '\n'}\n${block}`;
    }
    // Check the result before anything is written: ours is in, everything else is as it was.
    let parsed: JsonObject;
    try {
      parsed = parseToml(after) as JsonObject;
    } catch (error) {
      throw new Error(`${configPath}: adding the agent-bus table would not give valid TOML (${(error as Error).message}); nothing written`);
    }
    const server = serverTable(parsed);
    const readBack = isObject(server) && server.command === launcher.command && isServeFor(profile, server.args, server.env) && (!remote || (isObject(server.env) && server.env.AGENT_BUS_URL === remote));
    if (!readBack) {
      throw new Error(`${configPath}: the agent-bus table did not read back as written; nothing written`);
    }

    const hooksValue: JsonObject = hooksRead.kind === 'ok' ? structuredClone(hooksRead.value) : {};
    const hooks = isObject(hooksValue.hooks) ? hooksValue.hooks : {};
    // The subscriptions are edited in the hook commands: an earlier run's (or the user's) value is kept.
    const found = subscriptionsInHooks(hooks, ['UserPromptSubmit', 'SessionStart', 'PreToolUse']);
    const channels = found?.channels ?? DEFAULT_SUBSCRIPTIONS;
    const { way, note: wayNote } = hookWayFor(profile, choice, process.env);
    for (const [event, subcommand] of profile.hookEvents) {
      const kept = Array.isArray(hooks[event]) ? (hooks[event] as unknown[]).filter((group) => !isOurHookGroup(group, profile.id)) : [];
      // Codex gives hooks only its own environment, and its server a few variables: the notice hooks carry the subscriptions.
      const entry = way === 'mcp' ? mcpHookEntry(subcommand, NOTICE_HOOKS.has(subcommand) ? channels : null) : { type: 'command', command: hookCommand(profile, launcher.command, subcommand, channels, remote) };
      kept.push({ hooks: [entry] });
      hooks[event] = kept;
    }
    hooksValue.hooks = hooks;
    const hooksAfter = jsonText(hooksValue);
    const notes = [...(wayNote === null ? [] : [wayNote]), ...noPersonalFileNote(profile, launcher)];
    // Codex approves a hook by its command: a changed one waits for approval again.
    if (found?.legacy) notes.push(`subscriptions now set as ${DEFAULT_VARIABLE}, so a launch value wins over them: approve the changed hooks under /hooks in Codex`);
    else if (hooksRead.kind === 'ok' && ourCommands(hooksRead.value).length > 0 && ourCommands(hooksRead.value).join('\n') !== ourCommands(hooksValue).join('\n')) {
      notes.push('the hook commands changed: approve them again under /hooks in Codex');
    }
    return {
      files: [
        { path: configPath, before, after },
        { path: hooksPath, before: hooksRead.kind === 'ok' ? hooksRead.text : null, after: hooksAfter },
      ],
      notes,
    };
  },
};
