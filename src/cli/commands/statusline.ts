/** `agent-bus statusline`: one line for Claude Code's statusLine setting. */
import { BusError, isStoreUnavailable } from '../../model/errors.js';
import { hubAccess } from '../../remote/settings.js';
import { statusFacts, statusText } from '../../hooks/statusline.js';
import { printable } from '../../render/format.js';
import type { CommandRunner } from '../spec.js';

export const run: CommandRunner = async (args, io) => {
  const client = typeof args.values.client === 'string' ? args.values.client : 'claude';
  try {
    const facts = await statusFacts(io.env, io.cwd, client);
    io.stdout.write(args.values.json ? `${JSON.stringify(facts)}\n` : `${printable(statusText(facts))}\n`);
  } catch (error) {
    const overHub = hubAccess(io.env) !== null;
    if (!isStoreUnavailable(error) && !(overHub && error instanceof BusError)) throw error;
    // The status bar says so in a word; the reason goes to stderr.
    io.stderr.write(`agent-bus statusline: ${(error as Error).message}\n`);
    io.stdout.write(args.values.json ? `${JSON.stringify({ error: (error as Error).message })}\n` : `bus (${overHub ? 'hub' : 'store'} unreachable)\n`);
  }
  return 0;
};
