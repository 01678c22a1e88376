/** `agent-bus release`: give back reservations, these paths or all of them; a person may release another's. */
import { openClient } from '../../connect.js';
import { UsageError } from '../args.js';
import { askedName } from '../context.js';
import { placeOf, reservationLines } from '../reservation-output.js';
import type { CommandRunner } from '../spec.js';

export const run: CommandRunner = async (args, io) => {
  const all = Boolean(args.values.all);
  if (all === (args.positionals.length > 0)) throw new UsageError("release: name the PATHs to release, or --all (not both). See 'agent-bus release --help'.");
  const holder = typeof args.values.holder === 'string' ? args.values.holder.trim() : null;
  if (holder === '') throw new UsageError('release: --holder needs a name');
  const client = openClient(io.env, { cwd: io.cwd, as: askedName(args.values.name, io.env) });
  try {
    const place = all && args.values.repo === undefined ? null : placeOf(args.values.repo, io.cwd);
    const released = await client.reservations.release({ place, paths: all ? null : args.positionals, holder });
    if (args.values.json) io.stdout.write(`${JSON.stringify({ released })}\n`);
    else io.stdout.write(released.length === 0 ? '(nothing to release)\n' : `released:\n${reservationLines(released)}`);
    return 0;
  } finally {
    await client.close();
  }
};
