/**
 * What `agent-bus init` writes for Cline CLI: the generated plugin `.cline/plugins/agent-bus.js` in
 * the repo (committed: it runs the bare `agent-bus` and names no agent), and our server in Cline's MCP
 * settings, merged (the user's other servers and settings stay). Cline reads MCP servers from its user
 * settings alone, never from the repo: that file is this machine's, outside the repo, and its one
 * entry serves every repo Cline runs in here (the server finds its agent from the folder Cline starts
 * it in). Over a hub, the entry is our server as a relay to it (AGENT_BUS_URL), the token from the
 * environment Cline passes its servers.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { isObject, jsonText, readJsonConfig, type JsonObject } from '../config-files.js';
import { DEFAULT_SUBSCRIPTIONS } from '../../core/subscriptions.js';
import type { Env } from '../../model/settings.js';
import { isServeFor, legacyName, noPersonalFileNote, serveArgs, SERVER_KEY, type ClientWiring, type Launcher, type WiringInspection, type WiringPlan } from '../wiring.js';
import { CLINE_PLUGIN_MARKER, clinePluginChannels, clinePluginSource } from './plugin.js';
import { clineProfile as profile } from './profile.js';

/** Where Cline reads its MCP servers, as Cline itself resolves it from its environment. */
export function clineMcpSettingsPath(env: Env): string {
  const given = (name: string): string | null => (env[name] ?? '').trim() || null;
  const explicit = given('CLINE_MCP_SETTINGS_PATH');
  if (explicit !== null) return explicit;
  const clineDir = given('CLINE_DIR') ?? join(given('HOME') ?? homedir(), '.cline');
  return join(given('CLINE_DATA_DIR') ?? join(clineDir, 'data'), 'settings', 'cline_mcp_settings.json');
}

function readText(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

/** An entry init wrote: `serve` for Cline, here or as a relay to a hub. */
function isOurEntry(entry: unknown): boolean {
  return isObject(entry) && isServeFor(profile, entry.args, entry.env);
}

function serverEntry(command: string, remote: string | null): JsonObject {
  return { command, args: serveArgs(profile), ...(remote ? { env: { AGENT_BUS_URL: remote } } : {}) };
}

export const clineWiring: ClientWiring = {
  profile,
  forceable: true,
  files: (repo) => [join(repo, ...(profile.configFiles[0] as string).split('/')), clineMcpSettingsPath(process.env)],

  inspect(repo): WiringInspection {
    const [pluginPath, mcpPath] = this.files(repo) as [string, string];
    const plugin = readText(pluginPath);
    if (plugin !== null && !plugin.startsWith(CLINE_PLUGIN_MARKER)) return { status: 'handwritten', previousName: null };
    const mcp = readJsonConfig(mcpPath);
    if (mcp.kind === 'unreadable') return { status: 'unreadable', previousName: null, problem: `${mcpPath}: ${mcp.reason}, left alone` };
    const entry = mcp.kind === 'ok' && isObject(mcp.value.mcpServers) ? mcp.value.mcpServers[SERVER_KEY] : undefined;
    if (entry !== undefined && !isOurEntry(entry)) return { status: 'handwritten', previousName: null };
    // A clone with the committed plugin and no server in this machine's settings is not wired here yet.
    return { status: plugin === null || entry === undefined ? 'absent' : 'managed', previousName: isObject(entry) ? legacyName(entry.env) : null };
  },

  plan(repo, launcher: Launcher, remote = null): WiringPlan {
    const [pluginPath, mcpPath] = this.files(repo) as [string, string];
    const mcpRead = readJsonConfig(mcpPath);
    if (mcpRead.kind === 'unreadable') throw new Error(`${mcpPath}: ${mcpRead.reason}, left alone`);
    const settings: JsonObject = mcpRead.kind === 'ok' ? structuredClone(mcpRead.value) : {};
    const servers = isObject(settings.mcpServers) ? settings.mcpServers : {};
    servers[SERVER_KEY] = serverEntry(launcher.command, remote);
    settings.mcpServers = servers;
    const plugin = readText(pluginPath);
    return {
      files: [
        { path: pluginPath, before: plugin, after: clinePluginSource(launcher.command, (plugin === null ? null : clinePluginChannels(plugin)) ?? DEFAULT_SUBSCRIPTIONS, remote) },
        { path: mcpPath, before: mcpRead.kind === 'ok' ? mcpRead.text : null, after: jsonText(settings) },
      ],
      notes: [
        `Cline reads MCP servers only from its user settings, so the server is in ${mcpPath}, not the repo: each teammate runs agent-bus init once on their machine` +
          (remote ? '; that entry serves every repo Cline runs in on this machine, all of them through this hub' : ''),
        ...noPersonalFileNote(profile, launcher),
      ],
    };
  },
};
