/** `agent-bus read`: one message in full, by the id a listing showed: who sent it to whom, when, its receipts and its body. */
import { openClient } from '../../connect.js';
import { parseName } from '../../core/names.js';
import { NotFoundError } from '../../model/errors.js';
import { quoted } from '../../model/quote.js';
import { shortIdText, terminalWidth, wrap } from '../../render/format.js';
import { statusText } from '../../render/receipts.js';
import { makeStyle } from '../../render/style.js';
import { UsageError } from '../args.js';
import type { CommandRunner } from '../spec.js';

export const run: CommandRunner = async (args, io) => {
  const id = (args.positionals[0] ?? '').trim();
  if (id === '') throw new UsageError("read: say which message: its id as a listing showed it, or the start of one. See 'agent-bus read --help'.");
  const name = typeof args.values.name === 'string' ? args.values.name : null;
  if (name !== null) parseName(name);
  // As `status`: on this machine every message; with --name (and always over a hub) only what that name sent or received.
  const client = openClient(io.env, { cwd: io.cwd, as: name });
  try {
    const status = await client.messageStatus(id);
    const copies = new Set(status.copies.map((copy) => copy.message_id));
    // The body is the thread's: every copy of a send carries the same one.
    const message = (await client.thread(status.thread_id ?? status.message_id, 1000)).find((row) => copies.has(row.message_id));
    if (message === undefined) throw new NotFoundError(`the body of ${quoted(id)} is no longer on the bus (pruned)`);
    if (args.values.json) {
      io.stdout.write(`${JSON.stringify({ ...message, status })}\n`);
      return 0;
    }
    const style = await makeStyle(io.stdout, io.env);
    io.stdout.write(`${statusText(status, style)}\n\n${wrap(message.body, terminalWidth(io.stdout))}\n`);
    io.stdout.write(style.dim(`\nreply: agent-bus send "…" --to ${message.from} --thread ${shortIdText(status.thread_id)}   (id ${shortIdText(message.message_id)})\n`));
    return 0;
  } finally {
    await client.close();
  }
};
