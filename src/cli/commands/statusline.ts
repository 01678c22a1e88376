/** `agent-bus statusline`: one line for Claude Code's statusLine setting. */
import { statusFacts, statusText } from '../../hooks/statusline.js';
import { printable } from '../../render/format.js';
import type { CommandRunner } from '../spec.js';

export const run: CommandRunner = async (args, io) => {
  const client = typeof args.values.client === 'string' ? args.values.client : 'claude';
  const facts = await statusFacts(io.env, io.cwd, client);
  io.stdout.write(args.values.json ? `${JSON.stringify(facts)}\n` : `${printable(statusText(facts))}\n`);
  return 0;
};
