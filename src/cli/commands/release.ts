/** `agent-bus release`: give back reservations, these paths or all of them; a person may release another's. */
import { openClient } from '../../connect.js';
import { UsageError } from '../args.js';
import { askedName } from '../context.js';
import { placeOf, reservationLines } from '../reservation-output.js';
import type { CommandRunner } from '../spec.js';
import { BusError } from '../../model/errors.js';
import { quoted } from '../../model/quote.js';

export const run: CommandRunner = async (args, io) => {
  const all = Boolean(args.values.all);
  if (all === (args.positionals.length > 0)) throw new UsageError("release: name the PATHs to release, or --all (not both). See 'agent-bus release --help'.");
  const holder = typeof args.values.holder === 'string' ? args.values.holder.trim() : null;
  if (holder === '') throw new UsageError('release: --holder needs a name');
  const client = openClient(io.env, { cwd: io.cwd, as: askedName(args.values.name, io.env) });
  try {
    const place = all && args.values.repo === undefined ? null : placeOf('release', args.values.repo, io.cwd);
    const released = await client.reservations.release({ place, paths: all ? null : args.positionals, holder });
    if (args.values.json) io.stdout.write(`${JSON.stringify({ released })}\n`);
    else if (released.length > 0) io.stdout.write(`released:\n${reservationLines(released)}`);
    else if (all) io.stdout.write('(nothing to release)\n');
    // Paths named that no reservation held: the release did nothing, which is never a silent success.
    else throw new BusError(`release: no reservation of ${args.positionals.map((path) => quoted(path)).join(', ')} to release ('agent-bus reservations' lists them)`);
    return released.length === 0 && !all ? 1 : 0;
  } finally {
    await client.close();
  }
};
