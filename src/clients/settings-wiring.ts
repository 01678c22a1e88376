/**
 * What `agent-bus init` writes for a client that keeps its MCP servers and its hooks in one JSON
 * settings file of the repo (Gemini CLI's `.gemini/settings.json`, Qwen Code's `.qwen/settings.json`):
 * our server under `mcpServers` (trusted, so its tools need no confirmation) and a hook group for each
 * of the profile's events under `hooks`. Every other setting, server and hook in the file is left as
 * it was. The client starts a stdio server with little of its own environment: the server's env block
 * carries the repo's default subscriptions. The file is committed: it runs the bare `agent-bus` and
 * names no agent (the server and the hooks find it from the session's folder). Neither client reads a
 * personal settings file in the repo.
 */
import { isObject, isOurHookGroup, jsonText, readJsonConfig, subscriptionsInHooks, type JsonObject } from './config-files.js';
import { DEFAULT_SUBSCRIPTIONS, DEFAULT_VARIABLE } from '../core/subscriptions.js';
import type { ClientProfile } from './profile.js';
import { configPaths, hookCommand, hubMcpUrl, isServeFor, legacyName, noPersonalFileNote, noticeEvents, serveArgs, SERVER_KEY, type ClientWiring, type Launcher, type WiringInspection, type WiringPlan } from './wiring.js';

/** The client expands $AGENT_BUS_TOKEN in a header from its own environment: no file holds the token. */
function remoteEntry(remote: string): JsonObject {
  return { httpUrl: hubMcpUrl(remote), headers: { Authorization: 'Bearer $AGENT_BUS_TOKEN' }, trust: true };
}

function isRemoteEntry(entry: unknown): boolean {
  return isObject(entry) && typeof entry.httpUrl === 'string' && entry.httpUrl.endsWith('/mcp') && isObject(entry.headers) && entry.headers.Authorization === 'Bearer $AGENT_BUS_TOKEN';
}

/** The wiring of `profile` into its one settings file (its first config file). */
export function settingsFileWiring(profile: ClientProfile): ClientWiring {
  /** An entry init wrote: `serve` for this client (or an older init's, naming its agent), or a hub's endpoint with the token from the environment. */
  const isOurEntry = (entry: unknown): boolean => isRemoteEntry(entry) || (isObject(entry) && isServeFor(profile, entry.args, entry.env));
  return {
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
      return { status: isOurEntry(entry) ? 'managed' : 'handwritten', previousName: isObject(entry) ? legacyName(entry.env) : null };
    },

    plan(repo, launcher: Launcher, remote = null): WiringPlan {
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
        : { command: launcher.command, args: serveArgs(profile), env: { [DEFAULT_VARIABLE]: channels }, trust: true };
      settings.mcpServers = servers;

      for (const event of new Set(profile.hookEvents.map(([event]) => event))) {
        if (Array.isArray(hooks[event])) hooks[event] = (hooks[event] as unknown[]).filter((group) => !isOurHookGroup(group, profile.id));
      }
      for (const [event, subcommand, matcher = ''] of profile.hookEvents) {
        const kept = Array.isArray(hooks[event]) ? (hooks[event] as unknown[]) : [];
        // Gemini CLI asks again about a project hook whose name or command changed: both stay as they are from run to run.
        kept.push({ matcher, hooks: [{ type: 'command', name: `agent-bus ${subcommand}`, command: hookCommand(profile, launcher.command, subcommand, channels, remote) }] });
        hooks[event] = kept;
      }
      settings.hooks = hooks;
      return { files: [{ path: settingsPath, before: read.kind === 'ok' ? read.text : null, after: jsonText(settings) }], notes: noPersonalFileNote(profile, launcher) };
    },
  };
}
