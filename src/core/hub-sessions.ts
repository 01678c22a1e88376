/**
 * Sessions held over a hub. A remote client's session has no process on the
 * hub's machine to watch, so its row stands for the session id the client
 * sends (a Codex thread id, a hook payload's session id) and lives while the
 * session is heard from: a session silent for longer than the idle limit
 * counts as ended, exactly as a local session whose process is gone, and the
 * same claim rules then apply. Rows are told apart from local ones by their
 * boot id, which no machine reports.
 */
import { formatStamp } from '../model/clock.js';
import { uniqueToken } from '../model/ids.js';
import type { SessionRecord } from '../model/records.js';

/** The boot id of a row a hub claimed: no process table's, so no local judge mistakes it for a process. */
export const HUB_SESSION_BOOT_ID = 'hub';
/** A session heard from again is noted at most this often: a lease of minutes needs no write at every request. */
export const HUB_SESSION_TOUCH_MICROS = 60_000_000;

export function isHubSession(row: Pick<SessionRecord, 'bootId'>): boolean {
  return row.bootId === HUB_SESSION_BOOT_ID;
}

/** Whether a hub session is still heard from at `nowMicros`. */
export function hubSessionLive(row: Pick<SessionRecord, 'endedAt' | 'lastSeen'>, nowMicros: number, idleMinutes: number): boolean {
  return row.endedAt === null && row.lastSeen >= formatStamp(nowMicros - idleMinutes * 60_000_000);
}

/** The row a hub writes for a session id it has not seen: pid 0 and a start no other row has make its key. */
export function hubSessionRow(clientAddress: string, repoPath: string, sessionKey: string, nowMicros: number): Omit<SessionRecord, 'name' | 'endedAt'> {
  const stamp = formatStamp(nowMicros);
  return {
    serverPid: 0,
    serverStarted: `hub:${uniqueToken()}`,
    clientAddress,
    repoPath,
    lineage: '[]',
    sessionKey,
    bootId: HUB_SESSION_BOOT_ID,
    pidNs: null,
    startedAt: stamp,
    lastSeen: stamp,
  };
}

/** The row a session id holds now (not ended), the newest when a race left two. */
export function heldBy(rows: SessionRecord[], sessionKey: string): SessionRecord | null {
  const held = rows.filter((row) => isHubSession(row) && row.endedAt === null && row.sessionKey === sessionKey);
  return held.sort((a, b) => (a.startedAt < b.startedAt ? 1 : -1))[0] ?? null;
}

/**
 * The client's id for the conversation making an MCP call, from the call's metadata: Codex
 * puts its thread id in `x-codex-turn-metadata` (and, in older versions, as `threadId`).
 */
export function callSessionKey(meta: Record<string, unknown> | undefined): string | null {
  if (meta === undefined) return null;
  const turn = meta['x-codex-turn-metadata'];
  const candidates = [meta.threadId, typeof turn === 'object' && turn !== null ? (turn as Record<string, unknown>).thread_id : undefined];
  for (const value of candidates) if (typeof value === 'string' && value.trim() !== '' && value.length <= 200) return value.trim();
  return null;
}
