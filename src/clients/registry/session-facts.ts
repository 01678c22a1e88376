/**
 * What decides which inbox a hook drains, besides the session rows (the rule is the core's:
 * Sessions.readerFor): whether session addresses are on, whether the client runs many sessions
 * from one process (Codex: its hooks are matched by session id alone), and the client process
 * this hook runs under, read from the process table only when the rule asks.
 */
import { profileFor } from './profiles.js';
import type { HookSessionFacts } from '../../core/session-ops.js';
import { parseNameLenient } from '../../core/names.js';
import { clientProcessOf, lineageOf, type ProcessTable } from '../../adapters/procs.js';

export function hookSessionFacts(name: string, sessionsOn: boolean, table: ProcessTable): HookSessionFacts {
  return {
    sessionsOn,
    manySessionsPerProcess: profileFor(parseNameLenient(name)?.client).manySessionsPerProcess,
    ownClientProcess: () => clientProcessOf(lineageOf(process.pid, table)),
  };
}
