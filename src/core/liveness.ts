/**
 * Whether a session's process has ended, decided on evidence only: a process
 * is its pid and start time (pids are reused), a zombie has ended, another boot
 * means ended, a process in another PID namespace cannot be seen and counts as
 * running, and a table that cannot tell says running. Pure rules over a
 * process table the caller gives (the system's, read in sessions/procs).
 */
import type { SessionRecord } from '../model/records.js';

export interface ProcessInfo {
  pid: number;
  ppid: number;
  /** Start time as the system reports it: clock ticks since boot (/proc) or ps's lstart text. */
  started: string;
  /** One-letter state; Z (zombie) and X (dead) mean ended. */
  state: string;
  name: string;
}

export interface ProcessTable {
  /** The process, null when it does not exist, undefined when the table cannot tell. */
  get(pid: number): ProcessInfo | null | undefined;
  bootId(): string | null;
  pidNamespace(): string | null;
}

/** An ancestor as a session row stores it: [pid, start time, command name]. */
export type LineageEntry = [number, string, string];

const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'fish', 'ksh', 'mksh', 'busybox']);

/** A process's ancestors, nearest first, as far as the table can see. */
export function lineageOf(pid: number, table: ProcessTable): LineageEntry[] {
  const lineage: LineageEntry[] = [];
  let current = table.get(pid);
  const seen = new Set<number>();
  while (current && current.ppid > 0 && !seen.has(current.ppid)) {
    seen.add(current.ppid);
    const parent = table.get(current.ppid);
    if (!parent) break;
    lineage.push([parent.pid, parent.started, parent.name]);
    current = parent;
  }
  return lineage;
}

export function isShell(name: string): boolean {
  const base = name.split('/').pop() ?? name;
  return SHELLS.has(base.replace(/^-/, ''));
}

/** The client that started a process: its nearest ancestor that is not a shell (`sh -c` wrappers). */
export function clientProcessOf(lineage: readonly LineageEntry[]): LineageEntry | null {
  return lineage.find(([, , name]) => !isShell(name)) ?? null;
}

/** Whether the process a row recorded has ended, on evidence only. */
export function processEnded(
  recorded: { pid: number; started: string; bootId: string | null; pidNs: string | null },
  table: ProcessTable,
  current: { bootId: string | null; pidNs: string | null },
): boolean {
  if (recorded.bootId && current.bootId && recorded.bootId !== current.bootId) return true;
  // A process in another PID namespace is invisible from here: it counts as running.
  if (recorded.pidNs && current.pidNs && recorded.pidNs !== current.pidNs) return false;
  const info = table.get(recorded.pid);
  if (info === undefined) return false;
  if (info === null) return true;
  return info.started !== recorded.started || info.state === 'Z' || info.state === 'X';
}

/**
 * Whether a session row's server is still running; and, where the judge can tell, whether a row's
 * client runs on though its server has ended (clientOutlivesServer).
 */
export type SessionLiveness = ((row: SessionRecord) => boolean) & { clientRunsOn?: (row: SessionRecord) => boolean };

/** Liveness judged from a process table (read lazily, once per judge). */
export function livenessFrom(table: ProcessTable): SessionLiveness {
  const current = { bootId: table.bootId(), pidNs: table.pidNamespace() };
  const running = (row: SessionRecord): boolean =>
    row.endedAt === null &&
    !processEnded({ pid: row.serverPid, started: row.serverStarted, bootId: row.bootId, pidNs: row.pidNs }, table, current);
  return Object.assign(running, { clientRunsOn: (row: SessionRecord) => clientOutlivesServer(row, table) });
}

/**
 * Whether a row's server has ended while the client that started it runs on: a session whose hooks,
 * where its server answers them, reach nothing (the client skips them), so its mail waits unread.
 */
export function clientOutlivesServer(row: SessionRecord, table: ProcessTable): boolean {
  if (row.endedAt !== null) return false;
  const current = { bootId: table.bootId(), pidNs: table.pidNamespace() };
  const recorded = { bootId: row.bootId, pidNs: row.pidNs };
  if (!processEnded({ pid: row.serverPid, started: row.serverStarted, ...recorded }, table, current)) return false;
  let lineage: LineageEntry[];
  try {
    lineage = JSON.parse(row.lineage) as LineageEntry[];
  } catch {
    return false;
  }
  const client = Array.isArray(lineage) ? clientProcessOf(lineage) : null;
  if (client === null) return false;
  // Only a client the table sees running counts: one it cannot tell about is not evidence.
  const info = table.get(client[0]);
  return info !== undefined && info !== null && info.started === client[1] && info.state !== 'Z' && info.state !== 'X';
}
