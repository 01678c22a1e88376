/**
 * What `agent-bus init` writes for Gemini CLI: in the repo's `.gemini/settings.json`, our MCP server
 * under `mcpServers` (trusted, so its tools need no confirmation) and the hooks of its profile under
 * `hooks`. Every other setting, server and hook in the file is left as it was. Gemini CLI starts a
 * stdio server with little of its own environment (no secrets, no session id): the server's env
 * block names the agent and the repo's default subscriptions.
 */
import { isObject, isOurHookGroup, jsonText, readJsonConfig, subscriptionsInHooks, type JsonObject } from '../config-files.js';
import { DEFAULT_SUBSCRIPTIONS, DEFAULT_VARIABLE } from '../../core/subscriptions.js';
import { configPaths, hubMcpUrl, namedHookCommand, noticeEvents, SERVER_KEY, type ClientWiring, type WiringInspection, type WiringPlan } from '../wiring.js';
import { geminiProfile as profile } from './profile.js';

/** Gemini CLI expands $AGENT_BUS_TOKEN in a header from its own environment: no file holds the token. */
function remoteEntry(remote: string): JsonObject {
  return { httpUrl: hubMcpUrl(remote), headers: { Authorization: 'Bearer $AGENT_BUS_TOKEN' }, trust: true };
}

function isRemoteEntry(entry: unknown): boolean {
  return isObject(entry) && typeof entry.httpUrl === 'string' && entry.httpUrl.endsWith('/mcp') && isObject(entry.headers) && entry.headers.Authorization === 'Bearer $AGENT_BUS_TOKEN';
}

/** An entry init wrote: `serve` naming its agent, or a hub's endpoint with the token from the environment. */
function isOurEntry(entry: unknown): boolean {
  if (isRemoteEntry(entry)) return true;
  return isObject(entry) && Array.isArray(entry.args) && entry.args[0] === 'serve' && isObject(entry.env) && typeof entry.env.AGENT_BUS_NAME === 'string';
}

export const geminiWiring: ClientWiring = {
  profile,
  forceable: true,
  files: (repo) => configPaths(profile, repo),

  inspect(repo): WiringInspection {
    const [settingsPath] = this.files(repo) as [string];
    const read = readJsonConfig(settingsPath);
    if (read.kind === 'unreadable') return { status: 'unreadable', previousName: null, problem: `${settingsPath}: ${read.reason}, left alone` };
    const servers = read.kind === 'ok' && isObject(read.value.mcpServers) ? read.value.mcpServers : {};
    const entry = servers[SERVER_KEY];
    if (entry === undefined) return { status: 'absent', previousName: null };
    const env = isObject(entry) && isObject(entry.env) ? entry.env : {};
    return { status: isOurEntry(entry) ? 'managed' : 'handwritten', previousName: typeof env.AGENT_BUS_NAME === 'string' ? env.AGENT_BUS_NAME : null };
  },

  plan(repo, name, bin, remote = null): WiringPlan {
    const [settingsPath] = this.files(repo) as [string];
    const read = readJsonConfig(settingsPath);
    if (read.kind === 'unreadable') throw new Error('a config file cannot be parsed');
    const settings: JsonObject = read.kind === 'ok' ? structuredClone(read.value) : {};
    const hooks = isObject(settings.hooks) ? settings.hooks : {};
    // The subscriptions are edited in the hook commands: an earlier run's (or the user's) value is kept.
    const channels = subscriptionsInHooks(hooks, noticeEvents(profile))?.channels ?? DEFAULT_SUBSCRIPTIONS;

    const servers = isObject(settings.mcpServers) ? settings.mcpServers : {};
    servers[SERVER_KEY] = remote
      ? remoteEntry(remote)
      : { command: bin, args: ['serve'], env: { AGENT_BUS_NAME: name, AGENT_BUS_REPO: repo, [DEFAULT_VARIABLE]: channels }, trust: true };
    settings.mcpServers = servers;

    for (const event of new Set(profile.hookEvents.map(([event]) => event))) {
      if (Array.isArray(hooks[event])) hooks[event] = (hooks[event] as unknown[]).filter((group) => !isOurHookGroup(group, profile.id));
    }
    for (const [event, subcommand] of profile.hookEvents) {
      const kept = Array.isArray(hooks[event]) ? (hooks[event] as unknown[]) : [];
      // Gemini CLI asks again about a project hook whose name or command changed: both stay as they are from run to run.
      kept.push({ matcher: '', hooks: [{ type: 'command', name: `agent-bus ${subcommand}`, command: namedHookCommand(profile, bin, name, subcommand, channels, remote) }] });
      hooks[event] = kept;
    }
    settings.hooks = hooks;
    return { files: [{ path: settingsPath, before: read.kind === 'ok' ? read.text : null, after: jsonText(settings) }] };
  },
};
