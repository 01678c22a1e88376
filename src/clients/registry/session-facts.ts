/**
 * What decides which inbox a hook drains, besides the session rows (the rule is the core's:
 * Sessions.readerFor): whether session addresses are on, whether the client runs many sessions
 * from one process (Codex: its hooks are matched by session id alone), and the client process
 * this hook runs under (past the process its client runs hooks in, where it has one), read from the
 * process table only when the rule asks.
 */
import { profileFor } from './profiles.js';
import type { HookSessionFacts } from '../../core/session-ops.js';
import { parseNameLenient } from '../../core/names.js';
import { clientProcessOf, isShell, lineageOf, type LineageEntry, type ProcessTable } from '../../adapters/procs.js';

export function hookSessionFacts(name: string, sessionsOn: boolean, table: ProcessTable): HookSessionFacts {
  const profile = profileFor(parseNameLenient(name)?.client);
  return {
    sessionsOn,
    manySessionsPerProcess: profile.manySessionsPerProcess,
    ownClientProcess: () => clientProcessOf(withoutHost(lineageOf(process.pid, table), profile.hookHost ?? null)),
  };
}

/** A hook's ancestors without the process its client runs hooks under (ClientProfile.hookHost), when that is the nearest one not a shell. */
function withoutHost(lineage: LineageEntry[], host: string | null): LineageEntry[] {
  if (host === null) return lineage;
  const nearest = lineage.findIndex(([, , name]) => !isShell(name));
  return nearest >= 0 && lineage[nearest]?.[2] === host ? lineage.filter((_, index) => index !== nearest) : lineage;
}
