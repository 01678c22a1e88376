/**
 * Every setting agent-bus reads from the environment: its name, its kind and its default, in one
 * place. Readers go through `setting(env, name)`, so each default is written once, a name that is
 * not listed here is a type error, and the value's type follows the kind. The configuration reference
 * (docs/configuration.md) is rendered from this list and the help beside it (settings-help.ts);
 * `doctor` reads it to name a variable that is no setting, or a value that cannot be read.
 * Hooks load this module at every turn: it holds the list and its parsers, and no help text.
 */

import { DURATION_FORMS, durationText, parseDuration } from './duration.js';
import { MID_TURN_MODES } from './hooks.js';

/** An environment: the process's, a settings file's `env` block, or the bus folder's `.env`. */
export type Env = Record<string, string | undefined>;

/**
 * How a setting's text becomes its value. Every kind is forgiving the way users expect: unset, or
 * a value it cannot read, is the default (and doctor says which default was used).
 */
type SettingSpec =
  /** A whole number. Below `min` it is `min`, or the default with `below: 'default'`. */
  | { readonly kind: 'whole'; readonly default: number; readonly min: number; readonly below?: 'default' }
  /** A whole number of days, or off: 0, less, or unset is off (null). */
  | { readonly kind: 'whole-or-off' }
  /** A number, fractions allowed. Below `min` (or at it, when `exclusive`) it is the default. */
  | { readonly kind: 'number'; readonly default: number; readonly min: number; readonly exclusive?: true }
  /** A duration (`90s`, `5m`, `1h`, or plain seconds), read in milliseconds; above `max` it is `max`. */
  | { readonly kind: 'duration'; readonly default: number; readonly max: number }
  /** One of a few words (trimmed, any case); anything else is the default. */
  | { readonly kind: 'choice'; readonly default: string; readonly choices: readonly string[] }
  /** A size in bytes: a whole number, optionally with K, M or G (KB, MB, GB; powers of 1024). */
  | { readonly kind: 'bytes'; readonly default: number }
  /** Text, trimmed; empty is the default (none: empty). */
  | { readonly kind: 'text'; readonly default?: string }
  /** Text exactly as set, spaces and all; unset is empty. */
  | { readonly kind: 'verbatim' }
  /** Comma-separated items, each trimmed; empty items are dropped. */
  | { readonly kind: 'list' }
  /**
   * Notice channels, exactly as set, or undefined when unset: set to nothing means global notices
   * only, which no lower layer may override (core/subscriptions.ts reads the layers).
   */
  | { readonly kind: 'channels' }
  /** On when set to anything at all, off when unset or empty (as NO_COLOR is read everywhere). */
  | { readonly kind: 'present' }
  /** On unless set to one of `off` (trimmed, any case). */
  | { readonly kind: 'flag'; readonly off: readonly string[] }
  /** On for 1, true, yes or on (any case), off for anything else; null when unset: the reader decides. */
  | { readonly kind: 'switch' };

export type SettingKind = SettingSpec['kind'];

/** The value each kind reads as. */
interface KindValues {
  whole: number;
  'whole-or-off': number | null;
  number: number;
  bytes: number;
  duration: number;
  choice: string;
  text: string;
  verbatim: string;
  list: string[];
  channels: string | undefined;
  present: boolean;
  flag: boolean;
  switch: boolean | null;
}

/** Every setting (the configuration reference groups them by topic: settings-help.ts). */
export const SETTINGS = {
  AGENT_BUS_NAME: { kind: 'text' },
  AGENT_BUS_REPO: { kind: 'text' },
  AGENT_BUS_CLIENT: { kind: 'text' },
  AGENT_BUS_SESSION: { kind: 'text' },
  // 1..99: adapters/identity.ts refuses anything else, with the reason.
  AGENT_BUS_INSTANCE: { kind: 'text' },
  AGENT_BUS_SESSIONS: { kind: 'flag', off: ['0', 'false', 'no', 'off'] },
  AGENT_BUS_SESSION_RESUME_HOURS: { kind: 'number', default: 1, min: 0 },
  AGENT_BUS_PROCESS_LOOKUP_TIMEOUT: { kind: 'number', default: 2, min: 0.001 },
  AGENT_BUS_BIN: { kind: 'verbatim' },
  // The remote hook's wait; the opencode plugin init writes reads it with a default of its own.
  AGENT_BUS_HOOK_TIMEOUT_MS: { kind: 'whole', default: 3000, min: 1 },
  AGENT_BUS_HOOK_PAYLOAD_TIMEOUT: { kind: 'number', default: 5, min: 0 },
  AGENT_BUS_STOP_KEEPS: { kind: 'whole', default: 8, min: 0 },
  CLAUDE_CODE_SESSION_ID: { kind: 'text' },
  AGENT_BUS_DB: { kind: 'text' },
  AGENT_BUS_HOME: { kind: 'text' },
  // A hook that cannot reach the server gives up within its budget.
  AGENT_BUS_PG_CONNECT_TIMEOUT: { kind: 'number', default: 2, min: 0.05 },
  AGENT_BUS_AUDIT_LOG: { kind: 'text' },
  AGENT_BUS_AUDIT_MAX_BYTES: { kind: 'bytes', default: 0 },
  AGENT_BUS_RETENTION_DAYS: { kind: 'whole-or-off' },
  AGENT_BUS_BUSY_TIMEOUT: { kind: 'number', default: 30, min: 0 },
  // `auto`: node:sqlite where this Node.js has it (22.13 and later), the better-sqlite3 addon elsewhere.
  AGENT_BUS_SQLITE_DRIVER: { kind: 'choice', default: 'auto', choices: ['auto', 'builtin', 'better-sqlite3'] },
  AGENT_BUS_FANOUT_MAX_IDLE_DAYS: { kind: 'whole', default: 14, min: 0 },
  AGENT_BUS_MAX_BODY_BYTES: { kind: 'whole', default: 64 * 1024, min: 1 },
  AGENT_BUS_CHANNELS: { kind: 'channels' },
  AGENTIHOOKS_BASE_CHANNELS: { kind: 'channels' },
  AGENT_BUS_DEFAULT_CHANNELS: { kind: 'channels' },
  AGENT_BUS_NOTICES_PER_TURN: { kind: 'whole', default: 8, min: 1 },
  // Below Claude Code's 10,000-character limit on one hook's output, with room for the framing; at
  // least room for the framing and a notice of a few lines.
  AGENT_BUS_NOTICE_MAX_BYTES: { kind: 'whole', default: 9000, min: 1000 },
  // 0 or less is no cap anyone means (it would evict every live notice but one): the default.
  AGENT_BUS_CHANNEL_MAX_NOTICES: { kind: 'whole', default: 50, min: 1, below: 'default' },
  BRAIN_URL: { kind: 'text' },
  BRAIN_HTTP_TOKEN: { kind: 'text' },
  KB_ROUTER_TOKEN: { kind: 'text' },
  BRAIN_HTTP_TIMEOUT: { kind: 'number', default: 3, min: 0, exclusive: true },
  BRAIN_SOURCE_TYPE: { kind: 'text', default: 'file' },
  BRAIN_SOURCE_PATH: { kind: 'text' },
  BRAIN_ENABLED: { kind: 'switch' },
  BRAIN_WRITER_ENABLED: { kind: 'switch' },
  BRAIN_CHANNEL: { kind: 'text', default: 'brain' },
  BRAIN_HOT_ARCS_TOP_N: { kind: 'whole', default: 10, min: 0 },
  // Characters, whatever the name says.
  BRAIN_PAYLOAD_MAX_BYTES: { kind: 'whole', default: 1536, min: 0 },
  BRAIN_REFRESH_TOOL_CALLS: { kind: 'whole', default: 20, min: 1 },
  AGENT_BUS_CHAT_FORCE: { kind: 'present' },
  AGENT_BUS_NATIVE_WAKE: { kind: 'flag', off: ['0'] },
  AGENT_BUS_WAKES_PER_HOUR: { kind: 'whole', default: 20, min: 0 },
  AGENT_BUS_WATCH_POLL_SECONDS: { kind: 'number', default: 2, min: 0.05 },
  AGENT_BUS_WATCH_HOURS: { kind: 'number', default: 24, min: 0 },
  AGENT_BUS_WATCH_CLIENT_PID: { kind: 'whole', default: 0, min: 0 },
  AGENT_BUS_SOCKET_TURN_SECONDS: { kind: 'number', default: 10, min: 0.1 },
  AGENT_BUS_CLAUDE_BIN: { kind: 'text', default: 'claude' },
  AGENT_BUS_CLIENT_VERSION_TIMEOUT: { kind: 'number', default: 10, min: 0, exclusive: true },
  AGENT_BUS_CODEX_BIN: { kind: 'text' },
  AGENT_BUS_OPENCODE_BIN: { kind: 'text' },
  AGENT_BUS_GEMINI_BIN: { kind: 'text' },
  AGENT_BUS_COPILOT_BIN: { kind: 'text' },
  AGENT_BUS_PI_BIN: { kind: 'text' },
  AGENT_BUS_CLINE_BIN: { kind: 'text' },
  AGENT_BUS_QWEN_BIN: { kind: 'text' },
  AGENT_BUS_MAX_SPAWNED: { kind: 'whole', default: 4, min: 1 },
  AGENT_BUS_MAX_SPAWN_DEPTH: { kind: 'whole', default: 2, min: 1 },
  // Set by the bus in the agents it starts: how deep in spawns each is (a person's is 0).
  AGENT_BUS_SPAWN_DEPTH: { kind: 'whole', default: 0, min: 0 },
  AGENT_BUS_STOP_GRACE: { kind: 'duration', default: 10_000, max: 3_600_000 },
  AGENT_BUS_RUNNER_HEARTBEAT: { kind: 'duration', default: 5_000, max: 600_000 },
  NO_COLOR: { kind: 'present' },
  AGENT_BUS_DEBUG: { kind: 'present' },
  AGENT_BUS_HTTP_RATE: { kind: 'whole', default: 200, min: 1 },
  AGENT_BUS_HTTP_CONCURRENCY: { kind: 'whole', default: 64, min: 1 },
  AGENT_BUS_HUB_SESSION_IDLE_MINUTES: { kind: 'number', default: 30, min: 0.001 },
  AGENT_BUS_HTTP_WAITS: { kind: 'whole', default: 1024, min: 1 },
  AGENT_BUS_HTTP_ORIGINS: { kind: 'list' },
  // Unset: `<hostname>:<port>`, which only the hub knows.
  AGENT_BUS_HUB_NAME: { kind: 'text' },
  // A hub's pool; a command or a hook holds a few connections (store/open.ts).
  AGENT_BUS_PG_POOL: { kind: 'whole', default: 16, min: 1 },
  AGENT_BUS_RESERVATIONS: { kind: 'choice', default: 'deny', choices: ['deny', 'warn', 'off'] },
  AGENT_BUS_RESERVATION_TTL: { kind: 'duration', default: 3_600_000, max: 86_400_000 },
  AGENT_BUS_GUARD: { kind: 'choice', default: 'on', choices: ['on', 'off'] },
  AGENT_BUS_COLLISION_WINDOW: { kind: 'duration', default: 300_000, max: 86_400_000 },
  AGENT_BUS_MIDTURN: { kind: 'choice', default: 'urgent', choices: MID_TURN_MODES },
  AGENT_BUS_URL: { kind: 'text' },
  AGENT_BUS_TOKEN: { kind: 'text' },
  // `1`: record a command bundle's code cache; `engine`: the PostgreSQL engine's (scripts/bundle.mjs).
  AGENT_BUS_BUILD_CODE_CACHE: { kind: 'verbatim' },
} as const satisfies Record<string, SettingSpec>;

export type SettingName = keyof typeof SETTINGS;
export type SettingValue<N extends SettingName> = KindValues[(typeof SETTINGS)[N]['kind']];
/** The settings of one kind: a `SettingOfKind<'text'>` reads as a string. */
export type SettingOfKind<K extends SettingKind> = { [N in SettingName]: (typeof SETTINGS)[N]['kind'] extends K ? N : never }[SettingName];

/**
 * What agent-bus puts in the environment of a command it runs (a wake command, wake/fire.ts), for
 * that command to read: no setting, though they share the prefix.
 */
export const WAKE_COMMAND_VARIABLES = ['AGENT_BUS_FROM', 'AGENT_BUS_TO', 'AGENT_BUS_THREAD_ID', 'AGENT_BUS_MESSAGE_ID', 'AGENT_BUS_BODY_PREVIEW'] as const;

/** A setting's value in `env`. */
export function setting<N extends SettingName>(env: Env, name: N): SettingValue<N> {
  return read(SETTINGS[name], env[name]).value as SettingValue<N>;
}

/** A setting's value when it is unset. */
export function settingDefault<N extends SettingName>(name: N): SettingValue<N> {
  return read(SETTINGS[name], undefined).value as SettingValue<N>;
}

/** Whether `name` is a setting agent-bus reads. */
export function isSettingName(name: string): name is SettingName {
  return Object.hasOwn(SETTINGS, name);
}

/**
 * Why `raw`, set for `name`, is not read as written, and what is used instead (for doctor):
 * `is not a whole number: the default 200 is used`. Null when it is read as written.
 */
export function settingProblem(name: SettingName, raw: string): string | null {
  return read(SETTINGS[name], raw).problem;
}

interface Reading {
  value: unknown;
  /** Why the text was not read as written; null when it was (or was unset). */
  problem: string | null;
}

const SWITCH_ON = ['1', 'true', 'yes', 'on'];
const SWITCH_OFF = ['0', 'false', 'no', 'off'];
const BYTE_UNITS: Record<string, number> = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 };

function readAs(value: unknown): Reading {
  return { value, problem: null };
}

function fallBack(value: unknown, why: string): Reading {
  return { value, problem: `${why}: the default ${String(value)} is used` };
}

function read(spec: SettingSpec, raw: string | undefined): Reading {
  switch (spec.kind) {
    case 'whole': {
      const text = raw?.trim();
      if (!text) return readAs(spec.default);
      if (!/^-?\d+$/.test(text)) return fallBack(spec.default, 'is not a whole number');
      const value = Number.parseInt(text, 10);
      if (value >= spec.min) return readAs(value);
      if (spec.below === 'default') return fallBack(spec.default, `is below ${spec.min}`);
      return { value: Math.max(spec.min, value), problem: `is below ${spec.min}: ${spec.min} is used` };
    }
    case 'whole-or-off': {
      const text = raw?.trim();
      if (!text) return readAs(null);
      if (!/^-?\d+$/.test(text)) return { value: null, problem: 'is not a whole number: it is off' };
      const days = Number.parseInt(text, 10);
      return days >= 0 ? readAs(days || null) : { value: null, problem: 'is below 0: it is off' };
    }
    case 'number': {
      const text = raw?.trim();
      if (!text) return readAs(spec.default);
      const value = Number(text);
      if (!Number.isFinite(value)) return fallBack(spec.default, 'is not a number');
      if (value < spec.min || (spec.exclusive === true && value === spec.min)) return fallBack(spec.default, `is not ${spec.exclusive ? 'more than' : 'at least'} ${spec.min}`);
      return readAs(value);
    }
    case 'bytes': {
      const text = raw?.trim() ?? '';
      const match = /^(\d+)\s*([kmg]?)b?$/i.exec(text);
      if (match !== null) return readAs(Number(match[1]) * (BYTE_UNITS[(match[2] as string).toLowerCase()] as number));
      return text === '' ? readAs(spec.default) : fallBack(spec.default, 'is not a size in bytes (a whole number, with K, M or G or without)');
    }
    case 'duration': {
      const text = raw?.trim();
      if (!text) return readAs(spec.default);
      let value: number;
      try {
        value = parseDuration(text);
      } catch {
        return { value: spec.default, problem: `is not a duration (${DURATION_FORMS}): the default ${durationText(spec.default)} is used` };
      }
      return value <= spec.max ? readAs(value) : { value: spec.max, problem: `is longer than ${durationText(spec.max)}: ${durationText(spec.max)} is used` };
    }
    case 'choice': {
      const text = (raw ?? '').trim().toLowerCase();
      if (text === '') return readAs(spec.default);
      return spec.choices.includes(text) ? readAs(text) : fallBack(spec.default, `is not one of ${spec.choices.join(', ')}`);
    }
    case 'text':
      return readAs((raw ?? '').trim() || (spec.default ?? ''));
    case 'verbatim':
      return readAs(raw ?? '');
    case 'list':
      return readAs((raw ?? '').split(',').map((item) => item.trim()).filter((item) => item !== ''));
    case 'channels':
      return readAs(raw);
    case 'present':
      return readAs((raw ?? '') !== '');
    case 'flag':
      return readAs(!spec.off.includes((raw ?? '').trim().toLowerCase()));
    case 'switch': {
      const text = (raw ?? '').trim().toLowerCase();
      if (text === '') return readAs(null);
      if (SWITCH_ON.includes(text)) return readAs(true);
      return { value: false, problem: SWITCH_OFF.includes(text) ? null : `is neither on (${SWITCH_ON.join(', ')}) nor off (${SWITCH_OFF.join(', ')}): it is taken as off` };
    }
  }
}
