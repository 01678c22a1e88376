/**
 * What `agent-bus init` writes for GitHub Copilot CLI: our server in the repo's `.github/mcp.json`
 * (merged: the user's other servers stay), and our hooks in a file of their own,
 * `.github/hooks/agent-bus.json`, in the shape Copilot shares with Claude Code (PascalCase events,
 * `matcher` and `hooks`), which gives them Claude Code's payloads. Both are committed: they run the
 * bare `agent-bus` and name no agent (the server and the hooks find it from the session's folder).
 * Copilot CLI reads no personal file in the repo that agent-bus writes.
 */
import { isObject, isOurHookGroup, jsonText, readJsonConfig, subscriptionsInHooks, type JsonObject } from '../config-files.js';
import { DEFAULT_SUBSCRIPTIONS, DEFAULT_VARIABLE } from '../../core/subscriptions.js';
import { configPaths, hookCommand, hubMcpUrl, isServeFor, legacyName, noPersonalFileNote, noticeEvents, serveArgs, SERVER_KEY, type ClientWiring, type Launcher, type WiringInspection, type WiringPlan } from '../wiring.js';
import { copilotProfile as profile } from './profile.js';

/** The hub's endpoint, the token from the environment Copilot CLI was started with. */
function remoteEntry(remote: string): JsonObject {
  return { type: 'http', url: hubMcpUrl(remote), headers: { Authorization: 'Bearer ${AGENT_BUS_TOKEN}' }, tools: ['*'] };
}

function isOurEntry(entry: unknown): boolean {
  if (!isObject(entry)) return false;
  if (entry.type === 'http') return typeof entry.url === 'string' && entry.url.endsWith('/mcp') && isObject(entry.headers) && entry.headers.Authorization === 'Bearer ${AGENT_BUS_TOKEN}';
  return isServeFor(profile, entry.args, entry.env);
}

/** A hooks file init wrote: every group in it is one of ours. */
function isOurHooksFile(value: JsonObject): boolean {
  if (!isObject(value.hooks)) return false;
  const groups = Object.values(value.hooks).flatMap((list) => (Array.isArray(list) ? list : [list]));
  return groups.length > 0 && groups.every((group) => isOurHookGroup(group, profile.id));
}

export const copilotWiring: ClientWiring = {
  profile,
  forceable: true,
  files: (repo) => configPaths(profile, repo),

  inspect(repo): WiringInspection {
    const [mcpPath, hooksPath] = this.files(repo) as [string, string];
    for (const path of [mcpPath, hooksPath]) {
      const read = readJsonConfig(path);
      if (read.kind === 'unreadable') return { status: 'unreadable', previousName: null, problem: `${path}: ${read.reason}, left alone` };
    }
    const mcp = readJsonConfig(mcpPath);
    const hooks = readJsonConfig(hooksPath);
    const entry = mcp.kind === 'ok' && isObject(mcp.value.mcpServers) ? mcp.value.mcpServers[SERVER_KEY] : undefined;
    if (entry === undefined && hooks.kind !== 'ok') return { status: 'absent', previousName: null };
    const ours = (entry === undefined || isOurEntry(entry)) && (hooks.kind !== 'ok' || isOurHooksFile(hooks.value));
    return { status: ours ? (entry === undefined ? 'absent' : 'managed') : 'handwritten', previousName: isObject(entry) ? legacyName(entry.env) : null };
  },

  plan(repo, launcher: Launcher, remote = null): WiringPlan {
    const [mcpPath, hooksPath] = this.files(repo) as [string, string];
    const mcpRead = readJsonConfig(mcpPath);
    const hooksRead = readJsonConfig(hooksPath);
    if (mcpRead.kind === 'unreadable' || hooksRead.kind === 'unreadable') throw new Error('a config file cannot be parsed');
    const channels = (hooksRead.kind === 'ok' ? subscriptionsInHooks(hooksRead.value.hooks, noticeEvents(profile))?.channels : undefined) ?? DEFAULT_SUBSCRIPTIONS;

    const mcp: JsonObject = mcpRead.kind === 'ok' ? structuredClone(mcpRead.value) : {};
    const servers = isObject(mcp.mcpServers) ? mcp.mcpServers : {};
    servers[SERVER_KEY] = remote
      ? remoteEntry(remote)
      : { command: launcher.command, args: serveArgs(profile), env: { [DEFAULT_VARIABLE]: channels }, tools: ['*'] };
    mcp.mcpServers = servers;

    const hooks: JsonObject = {};
    for (const [event, subcommand, matcher = ''] of profile.hookEvents) {
      hooks[event] = [{ matcher, hooks: [{ type: 'command', command: hookCommand(profile, launcher.command, subcommand, channels, remote) }] }];
    }
    return {
      files: [
        { path: mcpPath, before: mcpRead.kind === 'ok' ? mcpRead.text : null, after: jsonText(mcp) },
        { path: hooksPath, before: hooksRead.kind === 'ok' ? hooksRead.text : null, after: jsonText({ version: 1, hooks }) },
      ],
      notes: noPersonalFileNote(profile, launcher),
    };
  },
};
