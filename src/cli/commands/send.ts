/** `agent-bus send`: mail from the human (or --name) to a name, a repo or everyone; with --wait, until it is delivered or read. */
import { openClient } from '../../connect.js';
import { askedName, readStdin } from '../context.js';
import { displayWidth, oneLine, pad, padStyled, printable, shortIdText } from '../../render/format.js';
import { nobodyReachedNote } from '../../core/addressing.js';
import { makeStyle, type Style } from '../../render/style.js';
import type { SendResult } from '../../core/mail-ops.js';
import type { CommandRunner, CommandIo } from '../spec.js';
import { parseDuration } from '../../model/duration.js';
import { parseWantedState, type MessageStatus } from '../../core/receipts.js';
import { BusError } from '../../model/errors.js';
import type { ReceiptState } from '../../model/receipts.js';
import { copyLine, receiptCounts, tickLabel } from '../../render/receipts.js';
import { UsageError } from '../args.js';
import type { BusClient } from '../../client/bus-client.js';

/** The exit status of a --wait that ran out of time. */
export const WAIT_TIMED_OUT = 4;
const DEFAULT_WAIT = '60s';

interface Wait {
  state: ReceiptState;
  timeoutMs: number;
  timeoutText: string;
}

function recipientLabel(result: SendResult): string {
  if (result.kind === 'broadcast') return `all (${result.recipients.length})`;
  if (result.kind === 'group') return `${result.to} (${result.recipients.length})`;
  return result.to;
}

/** --wait and --timeout, checked before anything is sent. */
function waitOf(values: Record<string, string | boolean | undefined>): Wait | null {
  const { wait, timeout } = values;
  if (wait === undefined) {
    if (timeout !== undefined) throw new UsageError('--timeout says how long --wait waits: give --wait delivered or --wait read too');
    return null;
  }
  if (typeof wait !== 'string') throw new UsageError('--wait takes delivered or read');
  const timeoutText = typeof timeout === 'string' ? timeout : DEFAULT_WAIT;
  try {
    return { state: parseWantedState(wait), timeoutMs: parseDuration(timeoutText), timeoutText };
  } catch (error) {
    // A flag's value that makes no sense is bad usage: nothing is sent.
    throw new UsageError((error as Error).message);
  }
}

export const run: CommandRunner = async (args, io: CommandIo) => {
  const as = askedName(args.values.name, io.env);
  const wait = waitOf(args.values);
  const rawBody = args.positionals[0] ?? '';
  const body = rawBody === '-' ? await readStdin(io.stdin(), 'send: BODY') : rawBody;
  const to = typeof args.values.to === 'string' ? args.values.to : '*';
  const threadId = typeof args.values.thread === 'string' ? args.values.thread : null;
  const json = Boolean(args.values.json);
  // Over a hub the token speaks: --name may only name its agent or one of its sessions.
  const client = openClient(io.env, { cwd: io.cwd, as });
  try {
    const { result, from } = await client.send({ to, body, threadId, urgent: args.values.urgent === true });
    return await report(result, from, body, json, io, wait, client);
  } finally {
    await client.close();
  }
};

async function report(result: SendResult, from: string, body: string, json: boolean, io: CommandIo, wait: Wait | null, client: BusClient): Promise<number> {
  const style = await makeStyle(io.stdout, io.env, json);
  if (!json) {
    if (result.recipients.length === 0) io.stdout.write(`${printable(nobodyReachedNote(result.kind, result.to))}\n`);
    else {
      io.stdout.write(
        `sent ${shortIdText(result.fanout_id ?? result.message_ids[0])}  ${padStyled(style.agent(from), from, 18)} → ${pad(recipientLabel(result), 18)}  ` +
          `${oneLine(body)}  ${style.dim(`(thread ${shortIdText(result.thread_id)})`)}\n`,
      );
    }
  }
  if (wait === null) {
    if (json) io.stdout.write(`${JSON.stringify(result)}\n`);
    return 0;
  }
  const id = result.fanout_id ?? result.message_ids[0];
  if (id === undefined) throw new BusError(`${nobodyReachedNote(result.kind, result.to)}: nothing to wait for`);
  const { status, reached } = await client.awaitReceipts(id, wait.state, wait.timeoutMs, json ? undefined : progress(io, style));
  if (json) io.stdout.write(`${JSON.stringify({ ...result, wait: { state: wait.state, reached, status } })}\n`);
  else if (reached) io.stdout.write(`${tickLabel(wait.state)}: ${receiptCounts(status)}\n`);
  else io.stderr.write(`agent-bus: not ${wait.state} after ${wait.timeoutText} (${receiptCounts(status)}); agent-bus status ${shortIdText(id)} shows where each copy is\n`);
  return reached ? 0 : WAIT_TIMED_OUT;
}

/** What a waiting sender is told at each move: the line of each copy that moved. */
function progress(io: CommandIo, style: Style): (status: MessageStatus) => void {
  const known = new Map<string, string>();
  let first = true;
  return (status) => {
    const width = Math.max(0, ...status.copies.map((copy) => displayWidth(printable(copy.to))));
    // The first move is measured against the send itself: every copy started as sent.
    const moved = status.copies.filter((copy) => (known.get(copy.message_id) ?? (first ? 'sent' : undefined)) !== copy.state);
    first = false;
    for (const copy of status.copies) known.set(copy.message_id, copy.state);
    if (moved.length > 0) io.stdout.write(`${moved.map((copy) => copyLine(copy, width, style)).join('\n')}\n`);
  };
}
