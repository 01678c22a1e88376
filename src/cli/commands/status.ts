/** `agent-bus status`: where a message has got to, recipient by recipient (sent ✓, delivered ✓✓, read). */
import { openClient } from '../../connect.js';
import { makeStyle } from '../../render/style.js';
import { statusText } from '../../render/receipts.js';
import type { CommandRunner } from '../spec.js';
import { UsageError } from '../args.js';
import { parseName } from '../../core/names.js';

export const run: CommandRunner = async (args, io) => {
  const id = (args.positionals[0] ?? '').trim();
  if (id === '') throw new UsageError('status: say which message (an id send printed with --json, or the start of one)');
  const name = typeof args.values.name === 'string' ? args.values.name : null;
  if (name !== null) parseName(name);
  // On this machine every message is shown; with --name (and always over a hub) only what that name sent or received.
  const client = openClient(io.env, { cwd: io.cwd, as: name });
  try {
    const status = await client.messageStatus(id);
    if (args.values.json) io.stdout.write(`${JSON.stringify(status)}\n`);
    else io.stdout.write(`${statusText(status, await makeStyle(io.stdout, io.env))}\n`);
    return 0;
  } finally {
    await client.close();
  }
};
