/** What `channel publish` and `notice` share: read the message, publish it with the flags given, report it. */
import type { NoticeDesk } from '../client/bus-client.js';
import { parseSeverity } from '../core/notices.js';
import { UsageError } from './args.js';
import { readStdin } from './context.js';
import { publishedLine } from './notice-output.js';
import { makeStyle } from '../render/style.js';
import type { CommandIo, ParsedArgs } from './spec.js';

function text(value: string | boolean | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** `raw` is the MESSAGE argument (`-` reads standard input); `what` names the command in errors. */
export async function publishFromArgs(notices: NoticeDesk, channel: string | null, raw: string, args: ParsedArgs, io: CommandIo, what: string): Promise<number> {
  // Given but blank is a slip on the command line, not a request for the default.
  for (const [name, flag] of [['severity', '-s'], ['ttl', '-t']] as const) {
    const value = args.values[name];
    if (typeof value === 'string' && value.trim() === '') throw new UsageError(`${what}: ${flag} is empty; give a value or leave the option out`);
  }
  // An unknown severity is bad usage, like any value outside an option's choices.
  let severity: string | undefined;
  try {
    severity = args.values.severity === undefined ? undefined : parseSeverity(text(args.values.severity));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const message = raw === '-' ? await readStdin(io.stdin(), `${what}: MESSAGE`) : raw;
  const result = await notices.publish({
    channel,
    message,
    severity,
    ttl: text(args.values.ttl),
    source: text(args.values.source),
    title: text(args.values.title),
    priority: text(args.values.priority),
  });
  if (args.values.json) io.stdout.write(`${JSON.stringify(result)}\n`);
  else io.stdout.write(publishedLine(result, await makeStyle(io.stdout, io.env)));
  return 0;
}
