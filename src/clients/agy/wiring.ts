/**
 * What `agent-bus init` writes for Antigravity CLI (agy): a workspace plugin
 * of its own under `.agents/plugins/agent-bus/` (agy only starts MCP servers
 * configured per user or bundled with a plugin). The folder is ours whole;
 * nothing of the user's under `.agents/` is touched. agy has no prompt-submit
 * event: the prompt hook runs before each model call (PreInvocation), so it
 * also carries the notices (critical and alert ones at every model call).
 * The plugin is committed with the repo: it runs the bare `agent-bus` and names
 * no agent (the hooks find it from the workspace agy names, the server from the
 * folder agy starts it in). agy reads no personal file in the repo.
 */
import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { isObject, jsonText, readJsonConfig, shellQuote, subscriptionsInCommand, type JsonObject } from '../config-files.js';
import { DEFAULT_SUBSCRIPTIONS, DEFAULT_VARIABLE } from '../../core/subscriptions.js';
import type { HookCommand } from '../profile.js';
import { configPaths, hubMcpUrl, hubPrefix, legacyName, noPersonalFileNote, serveArgs, type ClientWiring, type Launcher, type WiringInspection, type WiringPlan } from '../wiring.js';
import { agyProfile as profile } from './profile.js';

/** The plugin's folder, which holds its config files. */
function pluginFolder(repo: string): string {
  return dirname(configPaths(profile, repo)[0] as string);
}

/** The event whose hook shows the notices, so carries the subscriptions: the prompt hook's. */
const NOTICE_EVENT = profile.hookEvents.find(([, command]) => command === 'hook-user-prompt')?.[0] as string;

/** The repo's default subscriptions ride on the command as AGENT_BUS_DEFAULT_CHANNELS, so a launch AGENT_BUS_CHANNELS wins. */
function hookCommand(command: string, subcommand: HookCommand, channels: string | null, remote: string | null): string {
  const subscribe = channels === null ? '' : `${DEFAULT_VARIABLE}=${shellQuote(channels)} `;
  return `${hubPrefix(remote, shellQuote)}${subscribe}${shellQuote(command)} ${subcommand} --client ${profile.id} || true`;
}

/** The subscriptions in our PreInvocation command (an earlier run's, perhaps edited), else the default. */
function currentChannels(hooksPath: string): string {
  const read = readJsonConfig(hooksPath);
  const ours = read.kind === 'ok' && isObject(read.value['agent-bus']) ? read.value['agent-bus'][NOTICE_EVENT] : undefined;
  const first = Array.isArray(ours) && isObject(ours[0]) ? ours[0].command : undefined;
  return subscriptionsInCommand(first)?.channels ?? DEFAULT_SUBSCRIPTIONS;
}

/** Our hooks, one command per event of the profile; the notices' hook carries the subscriptions. */
function hooks(command: string, channels: string, remote: string | null): JsonObject {
  const events: JsonObject = {};
  for (const [event, subcommand] of profile.hookEvents) {
    events[event] = [{ type: 'command', command: hookCommand(command, subcommand, event === NOTICE_EVENT ? channels : null, remote) }];
  }
  return events;
}

export const agyWiring: ClientWiring = {
  profile,
  forceable: true,
  files: (repo) => configPaths(profile, repo),

  inspect(repo): WiringInspection {
    if (!existsSync(pluginFolder(repo))) return { status: 'absent', previousName: null };
    const [, mcpPath] = this.files(repo) as [string, string, string];
    for (const path of this.files(repo)) {
      const read = readJsonConfig(path);
      if (read.kind === 'unreadable') return { status: 'unreadable', previousName: null, problem: `${path}: ${read.reason}, left alone` };
    }
    const mcp = readJsonConfig(mcpPath);
    const entry = mcp.kind === 'ok' && isObject(mcp.value.mcpServers) ? mcp.value.mcpServers['agent-bus'] : undefined;
    if (entry === undefined) return { status: 'absent', previousName: null };
    const managed = isObject(entry) && ((Array.isArray(entry.args) && entry.args[0] === 'serve') || (typeof entry.serverUrl === 'string' && entry.serverUrl.endsWith('/mcp')));
    return { status: managed ? 'managed' : 'handwritten', previousName: isObject(entry) ? legacyName(entry.env) : null };
  },

  plan(repo, launcher: Launcher, remote = null): WiringPlan {
    const [pluginPath, mcpPath, hooksPath] = this.files(repo) as [string, string, string];
    const current = (path: string): string | null => {
      const read = readJsonConfig(path);
      return read.kind === 'ok' ? read.text : null;
    };
    return {
      files: [
        { path: pluginPath, before: current(pluginPath), after: jsonText({ name: 'agent-bus' }) },
        {
          path: mcpPath,
          before: current(mcpPath),
          // agy reads a hub's address as serverUrl; $AGENT_BUS_TOKEN in a header is expanded from its environment.
          after: jsonText({
            mcpServers: {
              'agent-bus': remote
                ? { serverUrl: hubMcpUrl(remote), headers: { Authorization: 'Bearer $AGENT_BUS_TOKEN' } }
                : { command: launcher.command, args: serveArgs(profile) },
            },
          }),
        },
        {
          path: hooksPath,
          before: current(hooksPath),
          after: jsonText({ 'agent-bus': hooks(launcher.command, currentChannels(hooksPath), remote) }),
        },
      ],
      notes: noPersonalFileNote(profile, launcher),
    };
  },
};
