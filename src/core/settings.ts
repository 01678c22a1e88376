/**
 * Settings read from the environment. Every parser is forgiving the way users
 * expect: unset or unparseable values fall back to the documented default.
 */
export type Env = Record<string, string | undefined>;

export function intSetting(env: Env, key: string, fallback: number, min = 0): number {
  const raw = env[key]?.trim();
  if (!raw) return fallback;
  if (!/^-?\d+$/.test(raw)) return fallback;
  return Math.max(min, Number.parseInt(raw, 10));
}

function positiveOr(value: number, fallback: number): number {
  return value >= 1 ? value : fallback;
}

export function floatSetting(env: Env, key: string, fallback: number, min = 0): number {
  const raw = env[key]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value)) return fallback;
  return value < min ? fallback : value;
}

const BYTE_UNITS: Record<string, number> = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 };

/** A size in bytes: a whole number, optionally with K, M or G (KB, MB, GB; powers of 1024). */
export function byteSetting(env: Env, key: string, fallback: number): number {
  const match = /^(\d+)\s*([kmg]?)b?$/i.exec(env[key]?.trim() ?? '');
  if (match === null) return fallback;
  return Number(match[1]) * (BYTE_UNITS[(match[2] as string).toLowerCase()] as number);
}

export interface BusSettings {
  /** Skip clients idle this many days in repo-wide and `*` sends, when a fresher repo-mate exists; 0 disables. */
  fanoutMaxIdleDays: number;
  /** Largest body accepted, in UTF-8 bytes. */
  maxBodyBytes: number;
  /** Most live notices one channel (or the global notices) holds. */
  channelMaxNotices: number;
  /** Minutes a session held over a hub may go unheard before it counts as ended. */
  hubSessionIdleMinutes: number;
  /** Hours an ended session's address waits to be resumed. */
  sessionResumeHours: number;
  /** Days read mail is kept before the automatic prune removes it; null: no automatic prune. */
  retentionDays: number | null;
}

/** How long an ended session's address waits to be resumed (AGENT_BUS_SESSION_RESUME_HOURS). */
export const DEFAULT_SESSION_RESUME_HOURS = 1;
export const DEFAULT_MAX_BODY_BYTES = 64 * 1024;
export const DEFAULT_FANOUT_MAX_IDLE_DAYS = 14;
export const DEFAULT_CHANNEL_MAX_NOTICES = 50;
/** How long a session held over a hub may go unheard before it counts as ended. */
export const DEFAULT_HUB_SESSION_IDLE_MINUTES = 30;

export function busSettings(env: Env = process.env): BusSettings {
  return {
    fanoutMaxIdleDays: intSetting(env, 'AGENT_BUS_FANOUT_MAX_IDLE_DAYS', DEFAULT_FANOUT_MAX_IDLE_DAYS, 0),
    maxBodyBytes: intSetting(env, 'AGENT_BUS_MAX_BODY_BYTES', DEFAULT_MAX_BODY_BYTES, 1),
    // 0 or less is no cap anyone means (it would evict every live notice but one): the default.
    hubSessionIdleMinutes: floatSetting(env, 'AGENT_BUS_HUB_SESSION_IDLE_MINUTES', DEFAULT_HUB_SESSION_IDLE_MINUTES, 0.001),
    sessionResumeHours: floatSetting(env, 'AGENT_BUS_SESSION_RESUME_HOURS', DEFAULT_SESSION_RESUME_HOURS, 0),
    retentionDays: intSetting(env, 'AGENT_BUS_RETENTION_DAYS', 0, 0) || null,
    channelMaxNotices: positiveOr(intSetting(env, 'AGENT_BUS_CHANNEL_MAX_NOTICES', DEFAULT_CHANNEL_MAX_NOTICES, Number.MIN_SAFE_INTEGER), DEFAULT_CHANNEL_MAX_NOTICES),
  };
}
