/**
 * What `agent-bus init` writes for opencode: the MCP server merged into
 * `.opencode/opencode.json` (comments and the rest of the file kept), and the
 * generated plugin `.opencode/plugins/agent-bus.js`, which carries the
 * subscriptions (kept across runs once the user edits them). Both are committed:
 * they run the bare `agent-bus` and name no agent (the server and the hooks find
 * it from the session's folder). opencode reads no personal file in the repo.
 */
import { readFileSync } from 'node:fs';
import { applyEdits, modify, parse, type ParseError } from 'jsonc-parser';
import { isObject } from '../config-files.js';
import { configPaths, hubMcpUrl, legacyName, noPersonalFileNote, serveArgs, type ClientWiring, type Launcher, type WiringInspection, type WiringPlan } from '../wiring.js';
import { opencodePluginSource, pluginChannels, PLUGIN_MARKERS } from './plugin.js';
import { DEFAULT_SUBSCRIPTIONS } from '../../core/subscriptions.js';
import { opencodeProfile as profile } from './profile.js';

type TextRead = { kind: 'missing' } | { kind: 'ok'; text: string } | { kind: 'unreadable'; reason: string };

function readText(path: string): TextRead {
  try {
    return { kind: 'ok', text: readFileSync(path, 'utf8') };
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? { kind: 'missing' } : { kind: 'unreadable', reason: (error as Error).message };
  }
}

function parseJsonc(text: string): { value: unknown; ok: boolean } {
  const errors: ParseError[] = [];
  const value: unknown = parse(text, errors, { allowTrailingComma: true });
  return { value: text.trim() === '' ? {} : value, ok: errors.length === 0 && (text.trim() === '' || isObject(value)) };
}

export const opencodeWiring: ClientWiring = {
  profile,
  forceable: true,
  files: (repo) => configPaths(profile, repo),

  inspect(repo): WiringInspection {
    const [configPath, pluginPath] = this.files(repo) as [string, string];
    const config = readText(configPath);
    if (config.kind === 'unreadable') return { status: 'unreadable', previousName: null, problem: `${configPath}: ${config.reason}, left alone` };
    const plugin = readText(pluginPath);
    if (plugin.kind === 'ok' && !PLUGIN_MARKERS.some((marker) => plugin.text.startsWith(marker))) return { status: 'handwritten', previousName: null };
    if (config.kind === 'missing') return { status: plugin.kind === 'ok' ? 'managed' : 'absent', previousName: null };
    const parsed = parseJsonc(config.text);
    if (!parsed.ok) return { status: 'unreadable', previousName: null, problem: `${configPath}: it is not valid JSON with comments, left alone` };
    const entry = isObject(parsed.value) && isObject(parsed.value.mcp) ? parsed.value.mcp['agent-bus'] : undefined;
    if (entry === undefined) return { status: plugin.kind === 'ok' ? 'managed' : 'absent', previousName: null };
    const managed =
      (isObject(entry) && Array.isArray(entry.command) && entry.command[1] === 'serve') ||
      (isObject(entry) && entry.type === 'remote' && typeof entry.url === 'string' && entry.url.endsWith('/mcp') && entry.oauth === false);
    return { status: managed ? 'managed' : 'handwritten', previousName: isObject(entry) ? legacyName(entry.environment) : null };
  },

  plan(repo, launcher: Launcher, remote = null): WiringPlan {
    const [configPath, pluginPath] = this.files(repo) as [string, string];
    const config = readText(configPath);
    if (config.kind === 'unreadable') throw new Error('a config file cannot be read');
    const before = config.kind === 'ok' ? config.text : null;
    const base = before === null || before.trim() === '' ? '{}\n' : before;
    if (!parseJsonc(base).ok) throw new Error(`${configPath}: it is not valid JSON with comments, left alone`);
    // For a hub: opencode expands {env:AGENT_BUS_TOKEN} (not ${…}), and oauth:false keeps it from starting an OAuth flow.
    const entry = remote
      ? { type: 'remote', url: hubMcpUrl(remote), oauth: false, headers: { Authorization: 'Bearer {env:AGENT_BUS_TOKEN}' }, enabled: true }
      : { type: 'local', command: [launcher.command, ...serveArgs(profile)], enabled: true };
    // An edit, not a rewrite: the user's comments and layout stay where they are.
    const after = applyEdits(base, modify(base, ['mcp', 'agent-bus'], entry, { formattingOptions: { insertSpaces: true, tabSize: 2, eol: '\n' } }));
    const plugin = readText(pluginPath);
    return {
      files: [
        { path: configPath, before, after: after.endsWith('\n') ? after : `${after}\n` },
        {
          path: pluginPath,
          before: plugin.kind === 'ok' ? plugin.text : null,
          after: opencodePluginSource(launcher.command, (plugin.kind === 'ok' ? pluginChannels(plugin.text) : null) ?? DEFAULT_SUBSCRIPTIONS, remote),
        },
      ],
      notes: noPersonalFileNote(profile, launcher),
    };
  },
};
