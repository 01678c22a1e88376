/** `agent-bus forget`: drop stale names from the roster; their mail stays in the database. */
import { openClient } from '../../connect.js';
import { UsageError } from '../args.js';
import type { CommandRunner } from '../spec.js';
import type { ForgetResult } from '../../core/roster-ops.js';
import { quoted } from '../../model/quote.js';
import { BusError } from '../../model/errors.js';

export const run: CommandRunner = async (args, io) => {
  const name = args.positionals[0];
  const group = typeof args.values.group === 'string' ? args.values.group.trim() : undefined;
  if (name !== undefined && group !== undefined) throw new UsageError('forget: give either NAME or --group REPO, not both');
  if (name === undefined && group === undefined) throw new UsageError("forget: missing NAME (or --group REPO). See 'agent-bus forget --help'.");
  if (group === '') throw new UsageError('forget: --group needs a repo name');
  // Over a hub a token forgets only its own names (the hub says so), and never a whole repo.
  const client = openClient(io.env, { cwd: io.cwd, as: null });
  try {
    if (group !== undefined) {
      const removed = await client.forgetRepo(group);
      if (args.values.json) io.stdout.write(`${JSON.stringify({ group, forgotten: removed })}\n`);
      else if (removed.length === 0) throw new BusError(`no agents in a repo named ${quoted(group)} on the roster: nothing was forgotten ('agent-bus agents' lists them)`);
      else io.stdout.write(`forgot ${removed.length} agent(s): ${removed.join(', ')}\n`);
      // Forgetting nobody did nothing, which is never a silent success.
      return removed.length === 0 ? 1 : 0;
    }
    const target = (name as string).trim();
    return report(target, await client.forget(target), Boolean(args.values.json), io.stdout);
  } finally {
    await client.close();
  }
};

function report(target: string, result: ForgetResult, json: boolean, stdout: { write(text: string): unknown }): number {
  {
    if (json) {
      stdout.write(`${JSON.stringify({ name: target, forgotten: result.removed, pending_count: result.pending })}\n`);
    } else if (!result.removed) {
      throw new BusError(`no agent named ${quoted(target)} on the roster: nothing was forgotten ('agent-bus agents' lists them)`);
    } else {
      const rest =
        result.pending > 0
          ? `${result.pending} undelivered message(s) remain in the DB; they will be delivered if ${quoted(target)} reconnects.`
          : 'no undelivered messages.';
      stdout.write(`forgot agent ${quoted(target)}. ${rest}\n`);
    }
    return result.removed ? 0 : 1;
  }
}
