/** `agent-bus notice`: a global notice, shown to every session whatever it subscribes to. */
import { openBus } from '../../runtime.js';
import { readStdin } from '../context.js';
import { publishedLine } from '../notice-output.js';
import { makeStyle } from '../style.js';
import type { CommandRunner } from '../spec.js';

export const run: CommandRunner = async (args, io) => {
  const raw = args.positionals[0] ?? '';
  const message = raw === '-' ? await readStdin(io.stdin(), 'notice: MESSAGE') : raw;
  const text = (value: string | boolean | undefined): string | undefined => (typeof value === 'string' ? value : undefined);
  const bus = openBus(io.env);
  try {
    const result = await bus.notices.publish({
      channel: null,
      message,
      severity: text(args.values.severity),
      ttl: text(args.values.ttl),
      source: text(args.values.source),
      title: text(args.values.title),
    });
    if (args.values.json) io.stdout.write(`${JSON.stringify(result)}\n`);
    else io.stdout.write(publishedLine(result, await makeStyle(io.stdout, io.env)));
    return 0;
  } finally {
    await bus.close();
  }
};
