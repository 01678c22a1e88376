/** `agent-bus search`: mail found by its words, newest first, the matching words in bold on a terminal. */
import { openClient } from '../../connect.js';
import { positiveInt } from '../context.js';
import { printable, shortIdText } from '../../render/format.js';
import { when } from '../../model/when.js';
import { makeStyle } from '../../render/style.js';
import { DEFAULT_SEARCH_LIMIT, type SearchHit } from '../../core/search.js';
import type { CommandRunner, CommandIo } from '../spec.js';
import { UsageError } from '../args.js';
import { parseName } from '../../core/names.js';

const text = (value: string | boolean | undefined): string | null => (typeof value === 'string' && value.trim() !== '' ? value : null);

export const run: CommandRunner = async (args, io: CommandIo) => {
  const query = args.positionals.join(' ');
  if (query.trim() === '') throw new UsageError('search: say what to look for');
  const name = text(args.values.name);
  if (name !== null) parseName(name);
  const limit = positiveInt(args.values.limit, 'limit', DEFAULT_SEARCH_LIMIT, 500);
  // Here the CLI finds all mail, or with --name what that name may read; over a hub what the token's agent may read.
  const client = openClient(io.env, { cwd: io.cwd, as: name });
  try {
    const hits = await client.search({
      query,
      from: text(args.values.from),
      to: text(args.values.to),
      thread: text(args.values.thread),
      since: text(args.values.since),
      limit,
    });
    return await report(hits, Boolean(args.values.json), io);
  } finally {
    await client.close();
  }
};

async function report(hits: SearchHit[], json: boolean, io: CommandIo): Promise<number> {
  if (json) {
    io.stdout.write(`${JSON.stringify(hits)}\n`);
    return 0;
  }
  if (hits.length === 0) {
    io.stdout.write('no mail matches\n');
    return 0;
  }
  const style = await makeStyle(io.stdout, io.env);
  for (const hit of hits) {
    const shown = hit.snippet.map((part) => (part.match ? style.bold(printable(part.text)) : printable(part.text))).join('');
    io.stdout.write(`${style.dim(when(hit.sent_at))}  ${style.agent(hit.from)} → ${printable(hit.to)}  ${shortIdText(hit.message_id)}  ${style.dim(`(thread ${shortIdText(hit.thread_id)})`)}\n    ${shown}\n`);
  }
  return 0;
}
