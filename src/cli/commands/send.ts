/** `agent-bus send`: mail from the human (or --name) to a name, a repo or everyone. */
import { openBus } from '../../runtime.js';
import { readStdin, speakerName, speakerRegistrations } from '../context.js';
import { clockTime, oneLine, pad, padStyled, printable, shortThread } from '../../render/format.js';
import { nobodyReachedNote } from '../../core/addressing.js';
import { makeStyle } from '../../render/style.js';
import type { SendResult } from '../../core/bus.js';
import type { CommandRunner, CommandIo } from '../spec.js';
import { hubAccess } from '../../remote/settings.js';
import { callHubTool } from '../../remote/tools.js';

function recipientLabel(result: SendResult): string {
  if (result.kind === 'broadcast') return `all (${result.recipients.length})`;
  if (result.kind === 'group') return `${result.to} (${result.recipients.length})`;
  return result.to;
}

export const run: CommandRunner = async (args, io: CommandIo) => {
  const from = speakerName(args.values.name, io.env);
  const rawBody = args.positionals[0] ?? '';
  const body = rawBody === '-' ? await readStdin(io.stdin(), 'send: BODY') : rawBody;
  const to = typeof args.values.to === 'string' ? args.values.to : '*';
  const threadId = typeof args.values.thread === 'string' ? args.values.thread : null;
  const access = hubAccess(io.env);
  if (access !== null) {
    // Over the hub the token speaks: --name may only name its agent or one of its sessions.
    const as = typeof args.values.name === 'string' ? from : null;
    const { value, speaker } = await callHubTool<SendResult>(access, 'send_message', { to, body, thread_id: threadId }, as);
    return report(value, speaker, body, Boolean(args.values.json), io);
  }
  const bus = openBus(io.env);
  try {
    const result = await bus.send({ from, to, body, threadId, register: speakerRegistrations(from, io.env, io.cwd) });
    return await report(result, from, body, Boolean(args.values.json), io);
  } finally {
    await bus.close();
  }
};

async function report(result: SendResult, from: string, body: string, json: boolean, io: CommandIo): Promise<number> {
  {
    if (json) {
      io.stdout.write(`${JSON.stringify(result)}\n`);
      return 0;
    }
    if (result.recipients.length === 0) {
      io.stdout.write(`${printable(nobodyReachedNote(result.kind, result.to))}\n`);
      return 0;
    }
    const style = await makeStyle(io.stdout, io.env);
    const label = recipientLabel(result);
    io.stdout.write(
      `${style.dim(clockTime(result.sent_at))}  ${padStyled(style.agent(from), from, 18)} → ${pad(label, 18)}  ` +
        `${oneLine(body)} ${style.dim(`[${shortThread(result.thread_id)}]`)}\n`,
    );
    return 0;
  }
}
