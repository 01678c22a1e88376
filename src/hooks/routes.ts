/**
 * The hooks of a client whose idle sessions the sender queues a turn for
 * (Codex) note how to reach their session from outside, for waking it later:
 * its thread id, the client's executable that runs it (the real binary, even
 * when `codex` on PATH is a wrapper script), and that process.
 */
import { readlinkSync } from 'node:fs';
import type { HookBus } from '../core/hook-bus.js';
import { formatStamp, nowMicros } from '../model/clock.js';
import { clientProcessOf, lineageOf, type ProcessTable } from '../adapters/procs.js';

/** A route is rewritten at least this often, so its age says whether the session is still around. */
const ROUTE_REFRESH_MICROS = 10 * 60 * 1_000_000;

function executableOf(pid: number): string | null {
  try {
    return readlinkSync(`/proc/${pid}/exe`);
  } catch {
    return null;
  }
}

export async function recordWakeRoute(bus: HookBus, clientId: string, agent: string, threadId: string, repoPath: string, table: ProcessTable, turnState: 'busy' | 'idle'): Promise<void> {
  const client = clientProcessOf(lineageOf(process.pid, table));
  const micros = nowMicros();
  await bus.sessions.recordRoute(
    {
      threadId,
      agent,
      client: clientId,
      executable: client ? executableOf(client[0]) : null,
      clientPid: client ? client[0] : null,
      clientStarted: client ? client[1] : null,
      repoPath,
      updatedAt: formatStamp(micros),
      turnState,
    },
    formatStamp(micros - ROUTE_REFRESH_MICROS),
  );
}
