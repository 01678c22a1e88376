/**
 * Which inbox a hook drains. A hook runs for one session of its client, but
 * only the client's session id or the process table can say which:
 * - a running session whose session id matches the payload's;
 * - else, for a client that runs one session per process, the running
 *   session of the hook's own client process (this wins over a stale id,
 *   e.g. after Claude Code's /clear). Codex runs every thread's server from
 *   one process, so for it only the thread id counts.
 * A hook that cannot tell reads the address all sessions share, never a
 * session's own.
 */
import type { Bus } from '../core/bus.js';
import { profileFor } from '../clients/profiles.js';
import { clientAddressOf, parseNameLenient } from '../core/names.js';
import { clientProcessOfRow } from '../core/sessions.js';
import { clientProcessOf, lineageOf, type ProcessTable } from '../sessions/procs.js';
import type { SessionRecord } from '../model/records.js';

function onlyName(rows: SessionRecord[]): string | null {
  const names = new Set(rows.map((row) => row.name));
  return names.size === 1 ? ([...names][0] as string) : null;
}

export async function hookReader(bus: Bus, name: string, sessionKey: string | null, table: ProcessTable, sessionsOn: boolean): Promise<string> {
  const shared = clientAddressOf(name);
  if (shared === null) return name;
  if (!sessionsOn) return shared;
  const live = await bus.runningSessions(shared);
  if (live.length === 0) return shared;
  if (sessionKey !== null) {
    const byKey = onlyName(live.filter((row) => row.sessionKey === sessionKey));
    if (byKey !== null) return byKey;
  }
  // A client whose one process hosts several sessions: its hooks are matched by session id alone.
  if (profileFor(parseNameLenient(shared)?.client).manySessionsPerProcess) return shared;
  const mine = clientProcessOf(lineageOf(process.pid, table));
  if (mine !== null) {
    const byProcess = onlyName(
      live.filter((row) => {
        const theirs = clientProcessOfRow(row);
        return theirs !== null && theirs[0] === mine[0] && theirs[1] === mine[1];
      }),
    );
    if (byProcess !== null) return byProcess;
  }
  return shared;
}
