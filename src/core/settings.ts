/** The settings the Bus is built with: its view of the registry (model/settings.ts), read once. */
import { setting, type Env } from '../model/settings.js';

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
  /** A reservation's time to live when none is asked for, in milliseconds. */
  reservationTtlMs: number;
  /** How close two agents' writes of one file must be to be a collision, in milliseconds. */
  collisionWindowMs: number;
  /** Where the person (`human`) is filed when mail reaches them before they have used the bus: their home folder. */
  personHome: string;
}

export function busSettings(env: Env = process.env): BusSettings {
  return {
    fanoutMaxIdleDays: setting(env, 'AGENT_BUS_FANOUT_MAX_IDLE_DAYS'),
    maxBodyBytes: setting(env, 'AGENT_BUS_MAX_BODY_BYTES'),
    hubSessionIdleMinutes: setting(env, 'AGENT_BUS_HUB_SESSION_IDLE_MINUTES'),
    sessionResumeHours: setting(env, 'AGENT_BUS_SESSION_RESUME_HOURS'),
    retentionDays: setting(env, 'AGENT_BUS_RETENTION_DAYS'),
    channelMaxNotices: setting(env, 'AGENT_BUS_CHANNEL_MAX_NOTICES'),
    reservationTtlMs: setting(env, 'AGENT_BUS_RESERVATION_TTL'),
    collisionWindowMs: setting(env, 'AGENT_BUS_COLLISION_WINDOW'),
    personHome: env.HOME && env.HOME !== '' ? env.HOME : '~',
  };
}
