/** `agent-bus thread`: a whole conversation, in the order it was sent, by a thread's id or one of its messages'. */
import { openClient } from '../../connect.js';
import { printable, shortIdText, terminalWidth, wrap } from '../../render/format.js';
import { makeStyle } from '../../render/style.js';
import { when } from '../../model/when.js';
import { positiveInt } from '../context.js';
import { UsageError } from '../args.js';
import type { CommandRunner } from '../spec.js';

export const run: CommandRunner = async (args, io) => {
  const id = (args.positionals[0] ?? '').trim();
  if (id === '') throw new UsageError("thread: say which thread: its id as a listing showed it, or one of its messages'. See 'agent-bus thread --help'.");
  const limit = positiveInt(args.values.limit, 'limit', 100);
  const client = openClient(io.env, { cwd: io.cwd, as: null });
  try {
    const messages = await client.thread(id, limit);
    if (args.values.json) {
      io.stdout.write(`${JSON.stringify(messages)}\n`);
      return 0;
    }
    const style = await makeStyle(io.stdout, io.env);
    const width = terminalWidth(io.stdout);
    const out = [style.bold(`thread ${shortIdText(messages[0]?.thread_id)}`)];
    for (const message of messages) {
      out.push('', `${style.dim(when(message.sent_at))}  ${style.agent(message.from)} → ${printable(message.to)}  ${shortIdText(message.message_id)}`, wrap(message.body, width));
    }
    io.stdout.write(`${out.join('\n')}\n`);
    return 0;
  } finally {
    await client.close();
  }
};
