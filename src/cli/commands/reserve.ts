/** `agent-bus reserve`: hold files or globs of this repo, all or none. */
import { openClient } from '../../connect.js';
import { parseDuration } from '../../model/duration.js';
import { askedName } from '../context.js';
import { placeOf, reservationLines } from '../reservation-output.js';
import type { CommandRunner } from '../spec.js';

export const run: CommandRunner = async (args, io) => {
  const ttl = typeof args.values.ttl === 'string' ? parseDuration(args.values.ttl) : undefined;
  const place = placeOf('reserve', args.values.repo, io.cwd);
  const client = openClient(io.env, { cwd: io.cwd, as: askedName(args.values.name, io.env) });
  try {
    const reserved = await client.reservations.reserve({
      place,
      paths: args.positionals,
      ...(ttl === undefined ? {} : { ttlMs: ttl }),
      reason: typeof args.values.reason === 'string' ? args.values.reason : null,
      shared: Boolean(args.values.shared),
    });
    io.stdout.write(args.values.json ? `${JSON.stringify({ reserved })}\n` : `reserved:\n${reservationLines(reserved)}`);
    return 0;
  } finally {
    await client.close();
  }
};
