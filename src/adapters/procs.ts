/**
 * The process table, read for evidence about who is running: a process is
 * identified by its pid and start time (pids are reused), its state tells a
 * zombie from a live one, the boot id tells a reboot, the PID namespace tells
 * a process we cannot see. Linux reads /proc; elsewhere one `ps` per lookup,
 * bounded by AGENT_BUS_PROCESS_LOOKUP_TIMEOUT.
 */
import { accessSync, constants, readFileSync, readlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { setting, type Env } from '../model/settings.js';
import type { ProcessInfo, ProcessTable } from '../core/liveness.js';

/** The machine's name; node:os is loaded on first use, which no hook makes. */
const hostname = (): string => process.getBuiltinModule('node:os').hostname();

export { clientProcessOf, isShell, lineageOf, processEnded, type LineageEntry, type ProcessInfo, type ProcessTable } from '../core/liveness.js';

/** Parse /proc/<pid>/stat; the command name may hold spaces and parentheses, so split at the last ')'. */
export function parseProcStat(pid: number, text: string): ProcessInfo | null {
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open < 0 || close < open) return null;
  const fields = text.slice(close + 2).split(' ');
  // fields[0] is field 3 (state), fields[1] field 4 (ppid), fields[19] field 22 (starttime).
  const state = fields[0];
  const ppid = Number(fields[1]);
  const started = fields[19];
  if (!state || !Number.isFinite(ppid) || !started) return null;
  return { pid, ppid, started, state, name: text.slice(open + 1, close) };
}

export class ProcFsTable implements ProcessTable {
  get(pid: number): ProcessInfo | null | undefined {
    let text: string;
    try {
      text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      return code === 'ENOENT' || code === 'ESRCH' ? null : undefined;
    }
    return parseProcStat(pid, text) ?? undefined;
  }

  bootId(): string | null {
    try {
      return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || null;
    } catch {
      return null;
    }
  }

  pidNamespace(): string | null {
    try {
      return readlinkSync('/proc/self/ns/pid');
    } catch {
      return null;
    }
  }
}

/** Parse `ps -A -o pid=,ppid=,state=,lstart=,comm=` (lstart is five words, comm may have spaces). */
export function parsePsOutput(text: string): Map<number, ProcessInfo> {
  const table = new Map<number, ProcessInfo>();
  for (const line of text.split('\n')) {
    const words = line.trim().split(/\s+/);
    if (words.length < 9) continue;
    const pid = Number(words[0]);
    const ppid = Number(words[1]);
    if (!Number.isInteger(pid) || !Number.isInteger(ppid)) continue;
    table.set(pid, { pid, ppid, state: (words[2] ?? '?').charAt(0), started: words.slice(3, 8).join(' '), name: words.slice(8).join(' ') });
  }
  return table;
}

/** For systems without /proc: one `ps` snapshot per table, with a time limit. */
export class PsTable implements ProcessTable {
  private snapshot: Map<number, ProcessInfo> | null | undefined;
  private takenAt = 0;

  /** A snapshot older than this is taken again: a long-running server must see sessions that started later. */
  static readonly MAX_AGE_MS = 1000;

  constructor(private readonly timeoutMs: number) {}

  private load(): Map<number, ProcessInfo> | null {
    if (this.snapshot === undefined || Date.now() - this.takenAt > PsTable.MAX_AGE_MS) {
      this.takenAt = Date.now();
      // Loaded here only: node:child_process pulls in streams and sockets, which every
      // hook would pay for on Linux, where /proc answers instead.
      const { spawnSync } = createRequire(import.meta.filename)('node:child_process') as typeof import('node:child_process');
      const result = spawnSync('ps', ['-A', '-o', 'pid=,ppid=,state=,lstart=,comm='], {
        encoding: 'utf8',
        timeout: this.timeoutMs,
        stdio: ['ignore', 'pipe', 'ignore'],
        env: { ...process.env, LC_ALL: 'C', TZ: 'UTC0' },
      });
      this.snapshot = result.status === 0 ? parsePsOutput(result.stdout) : null;
    }
    return this.snapshot;
  }

  get(pid: number): ProcessInfo | null | undefined {
    const snapshot = this.load();
    if (snapshot === null) return undefined;
    return snapshot.get(pid) ?? null;
  }

  bootId(): string | null {
    return null;
  }

  pidNamespace(): string | null {
    return null;
  }
}

let procFsAvailable: boolean | undefined;

export function systemProcessTable(env: Env = process.env): ProcessTable {
  if (procFsAvailable === undefined) {
    try {
      // Whether it may be read, not a read: the kernel writes the file out at each read, a third of a millisecond of a hook's start.
      accessSync('/proc/self/stat', constants.R_OK);
      procFsAvailable = true;
    } catch {
      procFsAvailable = false;
    }
  }
  return procFsAvailable ? new ProcFsTable() : new PsTable(setting(env, 'AGENT_BUS_PROCESS_LOOKUP_TIMEOUT') * 1000);
}


/** Whether a process of this machine runs (one of another user's answers EPERM: it runs too). */
export function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A name for this process as the holder of a worker lease: its host, its pid, and a random part (pids are reused). */
export function workerName(): string {
  return `${hostname()}/${process.pid}/${Math.random().toString(36).slice(2, 8)}`;
}

/** Whether a supervisor (`<host>/<pid>/<random>`) is known to be gone: true or false on its own machine, null elsewhere. */
export function supervisorGone(supervisor: string): boolean | null {
  const [host, pid] = supervisor.split('/');
  if (host !== hostname() || !/^\d+$/.test(pid ?? '')) return null;
  return workerGone(supervisor);
}

/** Whether a worker lease's holder is known to be gone: a process of this host that no longer runs. Elsewhere, unknown: no. */
export function workerGone(holder: string): boolean {
  const [host, pid] = holder.split('/');
  if (host !== hostname() || !/^\d+$/.test(pid ?? '')) return false;
  try {
    process.kill(Number(pid), 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
