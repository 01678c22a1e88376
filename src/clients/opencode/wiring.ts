/**
 * What `agent-bus init` writes for opencode: the MCP server merged into
 * `.opencode/opencode.json` (comments and the rest of the file kept), and the
 * generated plugin `.opencode/plugins/agent-bus.js`, which carries the
 * subscriptions (kept across runs once the user edits them). Both are committed:
 * they run the bare `agent-bus` and name no agent (the server and the hooks find
 * it from the session's folder). opencode reads no personal file in the repo.
 *
 * The server's entry takes the shape of the opencode installed (generation.ts):
 * `mcp.servers.agent-bus` with `codemode: false` for opencode 2, `mcp.agent-bus`
 * for 1.x; a run after an upgrade (or a downgrade) moves it, and removes the other
 * shape's entry of ours, which would start a second server. The plugin is one file
 * for both: opencode 2 and 1.x load it from `.opencode/plugins/` alike.
 */
import { readFileSync } from 'node:fs';
import { applyEdits, modify, parse, type JSONPath, type ParseError } from 'jsonc-parser';
import { isObject, SERVER_KEY } from '../config-files.js';
import { configPaths, hubMcpUrl, legacyName, noPersonalFileNote, serveArgs, type ClientWiring, type Launcher, type WiringInspection, type WiringPlan } from '../wiring.js';
import { opencodePluginSource, pluginChannels, PLUGIN_MARKERS } from './plugin.js';
import { DEFAULT_SUBSCRIPTIONS } from '../../core/subscriptions.js';
import { opencodeProfile as profile } from './profile.js';
import { opencodeBin, opencodeGeneration, type OpencodeGeneration } from './generation.js';

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

/** Where each opencode reads our server's entry. */
const V1_ENTRY: JSONPath = ['mcp', SERVER_KEY];
const V2_ENTRY: JSONPath = ['mcp', 'servers', SERVER_KEY];

/** Our server's entries in a parsed config: where opencode 1.x reads it and where opencode 2 does. */
function entriesIn(config: unknown): { v1: unknown; v2: unknown } {
  const mcp = isObject(config) && isObject(config.mcp) ? config.mcp : {};
  return { v1: mcp[SERVER_KEY], v2: isObject(mcp.servers) ? mcp.servers[SERVER_KEY] : undefined };
}

/** An entry init wrote: `agent-bus serve`, or a hub's `/mcp` without OAuth. */
function isOurEntry(entry: unknown): boolean {
  return (
    (isObject(entry) && Array.isArray(entry.command) && entry.command[1] === 'serve') ||
    (isObject(entry) && entry.type === 'remote' && typeof entry.url === 'string' && entry.url.endsWith('/mcp') && entry.oauth === false)
  );
}

/** Whether a generated plugin carries opencode 2's definition (`setup`); the 1.x-only ones exported a function. */
function pluginRunsOnV2(source: string): boolean {
  return /^export default \{[^\n]*\bsetup\b/m.test(source);
}

const FORMAT = { formattingOptions: { insertSpaces: true, tabSize: 2, eol: '\n' } } as const;

/** `text` with `path` set to `value` (removed when undefined): an edit, so the user's comments and layout stay. */
function edited(text: string, path: JSONPath, value: unknown): string {
  return applyEdits(text, modify(text, path, value, FORMAT));
}

/**
 * Why this repo's wiring does not fit the opencode installed here (`generation`), or null: a 1.x
 * shape under opencode 2 starts the server, but none of its tools reaches the model and the plugin
 * is not loaded, silently; a 2.x shape under 1.x starts no server.
 */
export function opencodeDrift(configText: string | null, pluginText: string | null, generation: OpencodeGeneration, bin: string): string | null {
  if (generation.version === null) return null;
  const parsed = configText === null ? { value: {}, ok: true } : parseJsonc(configText);
  if (!parsed.ok) return null;
  const { v1, v2 } = entriesIn(parsed.value);
  const problems: string[] = [];
  if (generation.major === 2) {
    if (v2 === undefined && v1 !== undefined) problems.push("its server is in opencode 1.x's place (mcp.agent-bus), where opencode 2's Code Mode hides the bus's tools from the model behind `execute`");
    else if (isObject(v2) && v2.codemode !== false) problems.push("its server is in opencode 2's Code Mode (no codemode: false), which hides the bus's tools from the model behind `execute`");
    if (pluginText !== null && !pluginRunsOnV2(pluginText)) problems.push('its plugin is an opencode 1.x plugin, which opencode 2 does not load: no mail shown, no reservation enforced, no stop held');
  } else if (v1 === undefined && v2 !== undefined) {
    problems.push("its server is in opencode 2's place (mcp.servers), where opencode 1.x finds no server");
  }
  if (problems.length === 0) return null;
  const hub = [v1, v2].map((entry) => (isObject(entry) && entry.type === 'remote' && typeof entry.url === 'string' ? entry.url.replace(/\/mcp$/, '') : null)).find((url) => url !== null);
  const again = hub ? ` (init again with --remote ${hub})` : '';
  return `wired for opencode ${generation.major === 2 ? '1.x' : '2'}, and opencode ${generation.version} is installed here (${bin}): ${problems.join('; ')}${again}`;
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
    const { v1, v2 } = entriesIn(parsed.value);
    const entries = [v1, v2].filter((entry) => entry !== undefined);
    if (entries.length === 0) return { status: plugin.kind === 'ok' ? 'managed' : 'absent', previousName: null };
    const previous = entries.map((entry) => (isObject(entry) ? legacyName(entry.environment) : null)).find((name) => name !== null) ?? null;
    return { status: entries.every(isOurEntry) ? 'managed' : 'handwritten', previousName: previous };
  },

  drift(repo, env) {
    const [configPath, pluginPath] = this.files(repo) as [string, string];
    const config = readText(configPath);
    const plugin = readText(pluginPath);
    return opencodeDrift(config.kind === 'ok' ? config.text : null, plugin.kind === 'ok' ? plugin.text : null, opencodeGeneration(env), opencodeBin(env));
  },

  plan(repo, launcher: Launcher, remote = null): WiringPlan {
    const [configPath, pluginPath] = this.files(repo) as [string, string];
    const config = readText(configPath);
    if (config.kind === 'unreadable') throw new Error('a config file cannot be read');
    const before = config.kind === 'ok' ? config.text : null;
    const base = before === null || before.trim() === '' ? '{}\n' : before;
    if (!parseJsonc(base).ok) throw new Error(`${configPath}: it is not valid JSON with comments, left alone`);
    const generation = opencodeGeneration(process.env);
    // For a hub: opencode expands {env:AGENT_BUS_TOKEN} (not ${…}), and oauth:false keeps it from starting an OAuth flow.
    const entry = remote
      ? { type: 'remote', url: hubMcpUrl(remote), oauth: false, headers: { Authorization: 'Bearer {env:AGENT_BUS_TOKEN}' } }
      : { type: 'local', command: [launcher.command, ...serveArgs(profile)] };
    // An edit, not a rewrite: the user's comments and layout stay where they are. Our entry in the other
    // opencode's place goes: opencode 2 would start it as a second server (in Code Mode).
    const { v1, v2 } = entriesIn(parseJsonc(base).value);
    let after = base;
    if (generation.major === 2) {
      if (v1 !== undefined && isOurEntry(v1)) after = edited(after, V1_ENTRY, undefined);
      after = edited(after, V2_ENTRY, { ...entry, codemode: false });
    } else {
      if (v2 !== undefined && isOurEntry(v2)) {
        after = edited(after, V2_ENTRY, undefined);
        // An empty `servers` left behind would be a server of that name to opencode 1.x.
        const left = parseJsonc(after).value;
        const servers = isObject(left) && isObject(left.mcp) ? left.mcp.servers : undefined;
        if (isObject(servers) && Object.keys(servers).length === 0) after = edited(after, ['mcp', 'servers'], undefined);
      }
      after = edited(after, V1_ENTRY, { ...entry, enabled: true });
    }
    const notes =
      generation.version === null
        ? [`${generation.problem ?? 'cannot tell the opencode version'}: wrote opencode 1.x's shape; run init again once opencode is on PATH (or AGENT_BUS_OPENCODE_BIN names it)`]
        : [];
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
      notes: [...notes, ...noPersonalFileNote(profile, launcher)],
    };
  },
};
