/** `agent-bus hook-watch`: wait in the background for mail for this session; exit 10 (mail, said on stderr) or 0. */
import { UsageError } from '../args.js';
import type { CommandRunner } from '../spec.js';
import { runWatch } from '../../wake/watch.js';
import { quoted } from '../../model/quote.js';

export const run: CommandRunner = (args, io) => {
  const raw = args.values['max-seconds'];
  let maxSeconds: number | undefined;
  if (typeof raw === 'string') {
    maxSeconds = Number(raw);
    if (!Number.isFinite(maxSeconds) || maxSeconds < 0) throw new UsageError(`hook-watch: --max-seconds must be a number of seconds ≥ 0, got ${quoted(raw)}`);
  }
  return runWatch({
    client: typeof args.values.client === 'string' ? args.values.client : undefined,
    maxSeconds,
    env: io.env,
    cwd: io.cwd,
    say: (text) => io.stderr.write(`${text}\n`),
    warn: (text) => io.stderr.write(`${text}\n`),
  });
};
