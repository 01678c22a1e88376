/** `agent-bus reservations`: the live reservations, of every repo or one. */
import { openClient } from '../../connect.js';
import { reservationLines } from '../reservation-output.js';
import type { CommandRunner } from '../spec.js';

export const run: CommandRunner = async (args, io) => {
  const repo = typeof args.values.repo === 'string' && args.values.repo.trim() !== '' ? args.values.repo.trim() : null;
  const client = openClient(io.env, { cwd: io.cwd, as: null });
  try {
    const reservations = await client.reservations.list(repo);
    if (args.values.json) io.stdout.write(`${JSON.stringify({ reservations })}\n`);
    else io.stdout.write(reservations.length === 0 ? '(no live reservations)\n' : reservationLines(reservations));
    return 0;
  } finally {
    await client.close();
  }
};
