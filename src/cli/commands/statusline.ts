/** `agent-bus statusline`: one line for Claude Code's statusLine setting. */
import { BusError, isStoreUnavailable } from '../../model/errors.js';
import { openClient } from '../../connect.js';
import { statusFacts, statusText } from '../statusline.js';
import { printable } from '../../render/format.js';
import type { CommandRunner } from '../spec.js';

export const run: CommandRunner = async (args, io) => {
  const clientId = typeof args.values.client === 'string' ? args.values.client : 'claude';
  const client = openClient(io.env, { cwd: io.cwd, as: null });
  const overHub = client.location.kind === 'hub';
  try {
    const facts = await statusFacts(client, io.env, io.cwd, clientId);
    io.stdout.write(args.values.json ? `${JSON.stringify(facts)}\n` : `${printable(statusText(facts))}\n`);
  } catch (error) {
    if (!isStoreUnavailable(error) && !(overHub && error instanceof BusError)) throw error;
    // The status bar says so in a word; the reason goes to stderr.
    io.stderr.write(`agent-bus statusline: ${(error as Error).message}\n`);
    io.stdout.write(args.values.json ? `${JSON.stringify({ error: (error as Error).message })}\n` : `bus (${overHub ? 'hub' : 'store'} unreachable)\n`);
  } finally {
    await client.close().catch(() => undefined);
  }
  return 0;
};
