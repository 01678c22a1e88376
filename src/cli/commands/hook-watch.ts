/** `agent-bus hook-watch`: wait in the background for mail for this session; exit 10 (mail, said on stderr) or 0. */
import { UsageError } from '../args.js';
import type { CommandRunner } from '../spec.js';
import { runWatch, startWatch, type WatchRun } from '../../hooks/watch.js';
import { runRemoteWatch } from '../../hooks/remote-watch.js';
import { hubAccess } from '../../adapters/hub-access.js';
import { openBusHere } from '../../runtime.js';
import { quoted } from '../../model/quote.js';

export const run: CommandRunner = async (args, io) => {
  const raw = args.values['max-seconds'];
  let maxSeconds: number | undefined;
  if (typeof raw === 'string') {
    maxSeconds = Number(raw);
    if (!Number.isFinite(maxSeconds) || maxSeconds < 0) throw new UsageError(`hook-watch: --max-seconds must be a number of seconds ≥ 0, got ${quoted(raw)}`);
  }
  const watch: WatchRun = {
    client: typeof args.values.client === 'string' ? args.values.client : undefined,
    maxSeconds,
    env: io.env,
    cwd: io.cwd,
    say: (text) => io.stderr.write(`${text}\n`),
    warn: (text) => io.stderr.write(`${text}\n`),
  };
  const start = await startWatch(watch);
  if (start === null) return 0;
  // Over a hub the watcher waits at the hub; here, on this machine's store.
  const access = hubAccess(io.env);
  if (access !== null) return runRemoteWatch(watch, access, start.maxMs, start.sessionKey);
  return runWatch(watch, start, openBusHere(io.env));
};
