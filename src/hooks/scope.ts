/**
 * Which inbox a hook drains. A hook runs for one session of its client, but
 * only the process table or the client's session id can say which: its
 * nearest non-shell ancestor is a running session's client process, or the
 * payload's session id matches exactly one running session. A hook that
 * cannot tell reads the address all sessions share, never a session's own.
 */
import type { Bus } from '../core/bus.js';
import { clientAddressOf } from '../core/names.js';
import { clientProcessOfRow } from '../core/sessions.js';
import { clientProcessOf, lineageOf, type ProcessTable } from '../sessions/procs.js';
import type { SessionRecord } from '../store/types.js';

function onlyName(rows: SessionRecord[]): string | null {
  const names = new Set(rows.map((row) => row.name));
  return names.size === 1 ? ([...names][0] as string) : null;
}

export async function hookReader(bus: Bus, name: string, sessionKey: string | null, table: ProcessTable, sessionsOn: boolean): Promise<string> {
  const shared = clientAddressOf(name);
  if (shared === null) return name;
  if (!sessionsOn) return shared;
  const live = (await bus.store.sessionRows(shared)).filter((row) => bus.isRunning(row));
  if (live.length === 0) return shared;
  const mine = clientProcessOf(lineageOf(process.pid, table));
  if (mine !== null) {
    const byProcess = onlyName(live.filter((row) => {
      const theirs = clientProcessOfRow(row);
      return theirs !== null && theirs[0] === mine[0] && theirs[1] === mine[1];
    }));
    if (byProcess !== null) return byProcess;
  }
  if (sessionKey !== null) {
    const byKey = onlyName(live.filter((row) => row.sessionKey === sessionKey));
    if (byKey !== null) return byKey;
  }
  return shared;
}
