/**
 * What a client's `mcp_tool` hook hands `client_hook`: the input's schema and its reading into the
 * client's payload, and how a model's call is told from a hook's. Shared by the session's server,
 * which answers the hook, and its relay to a hub, which asks the hub. Data and small functions only.
 *
 * The input is the client's payload, field by field, as the entry init writes interpolates it:
 * Claude Code gives every value as a string (an object as JSON text, a boolean as "true"), and a
 * path its payload lacks as ""; Codex keeps each value's type.
 */
import { z } from 'zod';
import type { Payload } from './payload.js';
import { HOOK_KINDS } from '../model/hooks.js';
import type { Env } from '../model/settings.js';
import { DEFAULT_VARIABLE } from '../core/subscriptions.js';
import { HOOK_TOOL } from '../protocol/tool-names.js';

export { HOOK_KINDS, HOOK_TOOL };


/** The payload fields a hook entry passes on: each a string (Claude Code), or of its own type (Codex). */
export const HOOK_INPUT_FIELDS = [
  'session_id',
  'cwd',
  'hook_event_name',
  'transcript_path',
  'tool_name',
  'tool_input',
  'stop_hook_active',
  'last_assistant_message',
  'notification_type',
] as const;

/** Where the answer's time inside the server is reported, in the result's `_meta` (for the benchmark and a curious reader). */
export const ANSWER_MS_KEY = 'agent-bus/answer_ms';

export const HOOK_TOOL_DESCRIPTION =
  "For the client's own hooks only (mcp_tool hooks at a prompt, a tool call and a stop): a model must never call it. " +
  'A call made by a model is refused and changes nothing. Read your mail with read_inbox instead.';

const anyValue = z.unknown().optional();
export const hookInputSchema = {
  kind: z.enum(HOOK_KINDS).describe('which hook this is'),
  default_channels: z.string().optional().describe("the repo's default subscriptions, as init wrote them"),
  ...Object.fromEntries(HOOK_INPUT_FIELDS.map((field) => [field, anyValue])),
} as { kind: z.ZodEnum<{ [K in (typeof HOOK_KINDS)[number]]: K }>; default_channels: z.ZodOptional<z.ZodString> } & Record<(typeof HOOK_INPUT_FIELDS)[number], typeof anyValue>;

/**
 * Whether a call is a model's, not a hook's: a client marks its model's calls (Claude Code with the
 * tool use's id, Codex with the call's id and the turn's metadata), and its hook calls with neither.
 */
export function isModelCall(meta: Record<string, unknown> | undefined): boolean {
  return meta !== undefined && ('callId' in meta || 'x-codex-turn-metadata' in meta || 'claudecode/toolUseId' in meta);
}

/** A value as a payload holds it: JSON text of an object parsed, "true"/"false" as booleans, "" as absent. */
function payloadValue(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  if (value === '') return undefined;
  if (value === 'true' || value === 'false') return value === 'true';
  if (value.startsWith('{')) {
    try {
      return JSON.parse(value) as unknown;
    } catch {
      return value;
    }
  }
  return value;
}

/** The client's payload, as the hook's input carried it. */
export function payloadOfInput(input: Record<string, unknown>): Payload {
  const payload: Payload = {};
  for (const field of HOOK_INPUT_FIELDS) {
    const value = payloadValue(input[field]);
    if (value !== undefined && value !== null) payload[field] = value;
  }
  return payload;
}


/** The tool as a client lists it (tools/list), for a relay that serves it beside the hub's tools. */
export function hookToolListing(): { name: string; description: string; inputSchema: Record<string, unknown> } {
  return { name: HOOK_TOOL, description: HOOK_TOOL_DESCRIPTION, inputSchema: z.toJSONSchema(z.object(hookInputSchema)) as Record<string, unknown> };
}

/** What a model's call is told: the tool did nothing. */
export const MODEL_CALL_REFUSAL = `${HOOK_TOOL} answers the client's hooks only; it did nothing. Read your mail with read_inbox.`;

/** The environment a hook's answer reads its settings from: the server's, with the repo's subscriptions the entry carries (Codex's). */
export function hookEnv(env: Env, channels: unknown): Env {
  return typeof channels === 'string' && channels !== '' ? { ...env, [DEFAULT_VARIABLE]: channels } : env;
}
