/**
 * Reading and writing the config files init owns a part of. A file that
 * cannot be parsed is reported and never overwritten; every write goes to a
 * temporary file first and is renamed over the original, so a crash never
 * leaves a half-written config.
 */
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { HOOK_TOOL } from '../protocol/tool-names.js';

export type JsonObject = Record<string, unknown>;

/** The name of agent-bus's MCP server in every client's config. */
export const SERVER_KEY = 'agent-bus';

export type ConfigRead = { kind: 'missing' } | { kind: 'ok'; value: JsonObject; text: string } | { kind: 'unreadable'; reason: string };

export function isObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

export type TextRead = { kind: 'missing' } | { kind: 'ok'; text: string } | { kind: 'unreadable'; reason: string };

/** A config file's text: missing, read, or unreadable (and why). */
export function readConfigText(path: string): TextRead {
  try {
    return { kind: 'ok', text: readFileSync(path, 'utf8') };
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? { kind: 'missing' } : { kind: 'unreadable', reason: (error as Error).message };
  }
}

export function readJsonConfig(path: string): ConfigRead {
  const read = readConfigText(path);
  if (read.kind !== 'ok') return read;
  const { text } = read;
  if (text.trim() === '') return { kind: 'ok', value: {}, text };
  try {
    const value: unknown = JSON.parse(text);
    return isObject(value) ? { kind: 'ok', value, text } : { kind: 'unreadable', reason: 'its top level is not a JSON object' };
  } catch {
    return { kind: 'unreadable', reason: 'it is not valid JSON' };
  }
}

export function jsonText(value: JsonObject): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/** Write through a temporary file in the same folder and rename it into place. */
export function writeAtomic(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  const temporary = `${path}.agent-bus-tmp`;
  try {
    writeFileSync(temporary, text);
    renameSync(temporary, path);
  } finally {
    rmSync(temporary, { force: true });
  }
}

/** A word safe to put in a shell command line. */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_./:@%+=,-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * Whether a hook group runs one of our hooks for `client`: tagged with that
 * client, whatever the binary is called (--bin-path), or written by an older
 * agent-bus before hooks carried a client tag.
 */
export function isOurHookGroup(group: unknown, client: string): boolean {
  if (!isObject(group) || !Array.isArray(group.hooks)) return false;
  const tagged = new RegExp(`\\bhook-(user-prompt|stop|session-start|session-end|pre-tool|notification|watch) --client ${client}\\b`);
  return group.hooks.some((hook) => {
    if (isOurMcpHook(hook)) return true;
    if (!isObject(hook) || typeof hook.command !== 'string') return false;
    const command = hook.command;
    if (tagged.test(command)) return true;
    return command.includes('agent-bus') && /\bhook-(user-prompt|stop)\b/.test(command) && !command.includes('--client');
  });
}

/** Whether a hook entry is an `mcp_tool` hook init wrote: a call of agent-bus's server's hook tool (any client's). */
export function isOurMcpHook(hook: unknown): boolean {
  return isObject(hook) && hook.type === 'mcp_tool' && hook.server === SERVER_KEY && hook.tool === HOOK_TOOL;
}

/**
 * The subscriptions written into a command line by an earlier init (and perhaps edited since), or
 * null: as AGENT_BUS_DEFAULT_CHANNELS, or as AGENT_BUS_CHANNELS by an init older than the layers
 * (`legacy`: that prefix masked a launch value, and the command must change).
 */
export function subscriptionsInCommand(command: unknown): { channels: string; legacy: boolean } | null {
  if (typeof command !== 'string') return null;
  const match = /\bAGENT_BUS_(DEFAULT_)?CHANNELS=(?:'((?:[^']|'\\'')*)'|([^\s']*))/.exec(command);
  if (!match) return null;
  return { channels: match[2] !== undefined ? match[2].replace(/'\\''/g, "'") : (match[3] ?? ''), legacy: match[1] === undefined };
}

/** The first of our hook commands in a hooks object that names subscriptions. */
export function subscriptionsInHooks(hooks: unknown, events: string[]): { channels: string; legacy: boolean } | null {
  if (!isObject(hooks)) return null;
  for (const event of events) {
    const groups = hooks[event];
    if (!Array.isArray(groups)) continue;
    for (const group of groups) {
      const handlers = isObject(group) && Array.isArray(group.hooks) ? group.hooks : [group];
      for (const handler of handlers) {
        const found = isObject(handler) ? (subscriptionsInInput(handler) ?? subscriptionsInCommand(handler.command)) : null;
        if (found !== null) return found;
      }
    }
  }
  return null;
}

/** The subscriptions an `mcp_tool` hook of ours carries in its input (and perhaps edited since), or null. */
function subscriptionsInInput(handler: JsonObject): { channels: string; legacy: boolean } | null {
  if (!isOurMcpHook(handler) || !isObject(handler.input)) return null;
  const channels = handler.input.default_channels;
  return typeof channels === 'string' ? { channels, legacy: false } : null;
}
