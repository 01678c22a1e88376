/** `agent-bus inbox`: read (and by default mark read) an agent's unread mail. */
import { openClient } from '../../connect.js';
import { askedName, positiveInt } from '../context.js';
import { oneLine, printable, shortIdText, terminalWidth, wrap } from '../../render/format.js';
import { when } from '../../model/when.js';
import { makeStyle } from '../../render/style.js';
import type { MessageView } from '../../core/views.js';
import type { CommandRunner } from '../spec.js';

function audience(message: MessageView): string {
  if (message.kind === 'broadcast') return ' (everyone)';
  if (message.kind === 'group') return ` (everyone in ${printable(message.addressed_to ?? message.to)})`;
  return '';
}

export const run: CommandRunner = async (args, io) => {
  const as = askedName(args.values.name, io.env);
  const limit = positiveInt(args.values.limit, 'limit', 50);
  // Over a hub the token says whose inbox: --name may only name its agent or one of its sessions.
  const client = openClient(io.env, { cwd: io.cwd, as });
  let read: { reader: string; messages: MessageView[] };
  try {
    read = await client.readInbox({ markRead: !args.values.peek, limit, way: 'inbox' });
  } finally {
    await client.close();
  }
  const { reader, messages } = read;
  {
    if (args.values.json) {
      io.stdout.write(`${JSON.stringify(messages)}\n`);
      return 0;
    }
    if (messages.length === 0) {
      io.stdout.write(`(no messages for ${reader})\n`);
      return 0;
    }
    const style = await makeStyle(io.stdout, io.env);
    const width = terminalWidth(io.stdout);
    const out: string[] = [];
    for (const message of messages) {
      const claimed =
        message.claimed_by !== null && message.claimed_by !== reader ? style.dim(` [already picked up by ${printable(message.claimed_by)}]`) : '';
      const head =
        `${style.dim(when(message.sent_at))}  ${style.agent(message.from)} → ${printable(message.to)}${audience(message)}  ` +
        `${shortIdText(message.message_id)}  ${style.dim(`(thread ${shortIdText(message.thread_id)})`)}${claimed}`;
      if (args.values.short) out.push(`${head}  ${oneLine(message.body)}`);
      else out.push(head, wrap(message.body, width));
    }
    io.stdout.write(`${out.join('\n')}\n`);
    return 0;
  }
};
