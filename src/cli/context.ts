/** What CLI commands share: who is speaking, parsing numeric flags, standard input. */
import { UsageError } from './args.js';
import { quoted } from '../model/quote.js';

export { askedName, DEFAULT_HUMAN, speakerName, speakerRegistrations } from '../client/speaker.js';

/** A count option: a whole number of at least 1; more than `max` is taken as `max` (as the MCP tools do). */
export function positiveInt(value: string | boolean | undefined, flag: string, fallback: number, max = 10_000): number {
  if (value === undefined || typeof value === 'boolean') return fallback;
  if (!/^\d+$/.test(value.trim()) || Number.parseInt(value, 10) < 1) {
    throw new UsageError(`--${flag} must be a whole number of at least 1, got ${quoted(value)}`);
  }
  return Math.min(max, Number.parseInt(value, 10));
}

/** The whole of standard input, for a body given as `-`; `what` names it in the error when stdin is a terminal. */
export async function readStdin(stdin: NodeJS.ReadStream, what: string): Promise<string> {
  if (stdin.isTTY) throw new UsageError(`${what} is - but standard input is a terminal; pipe the text in`);
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}
