/** `agent-bus forget`: drop stale names from the roster; their mail stays in the database. */
import { openBus } from '../../runtime.js';
import { UsageError } from '../args.js';
import type { CommandRunner } from '../spec.js';
import { BusError } from '../../model/errors.js';
import type { ForgetResult } from '../../core/bus.js';
import { hubAccess } from '../../remote/settings.js';
import { callHubOp } from '../../remote/tools.js';
import { quoted } from '../../model/quote.js';

export const run: CommandRunner = async (args, io) => {
  const name = args.positionals[0];
  const group = typeof args.values.group === 'string' ? args.values.group.trim() : undefined;
  if (name !== undefined && group !== undefined) throw new UsageError('forget: give either NAME or --group REPO, not both');
  if (name === undefined && group === undefined) throw new UsageError("forget: missing NAME (or --group REPO). See 'agent-bus forget --help'.");
  const access = hubAccess(io.env);
  if (access !== null) {
    if (group !== undefined) throw new BusError("forget --group: over the hub a token forgets only its own names; forget a repo on the hub's own machine");
    const target = (name as string).trim();
    return report(target, await callHubOp<ForgetResult>(access, 'roster.forget', { name: target }), Boolean(args.values.json), io.stdout);
  }
  const bus = openBus(io.env);
  try {
    if (group !== undefined) {
      if (group === '') throw new UsageError('forget: --group needs a repo name');
      const removed = await bus.forgetGroup(group);
      if (args.values.json) io.stdout.write(`${JSON.stringify({ group, forgotten: removed })}\n`);
      else if (removed.length === 0) io.stdout.write(`(no agents in a repo named ${quoted(group)} on the roster)\n`);
      else io.stdout.write(`forgot ${removed.length} agent(s): ${removed.join(', ')}\n`);
      return 0;
    }
    const target = (name as string).trim();
    return report(target, await bus.forget(target), Boolean(args.values.json), io.stdout);
  } finally {
    await bus.close();
  }
};

function report(target: string, result: ForgetResult, json: boolean, stdout: { write(text: string): unknown }): number {
  {
    if (json) {
      stdout.write(`${JSON.stringify({ name: target, forgotten: result.removed, pending_count: result.pending })}\n`);
    } else if (!result.removed) {
      stdout.write(`(no agent named ${quoted(target)} on the roster)\n`);
    } else {
      const rest =
        result.pending > 0
          ? `${result.pending} undelivered message(s) remain in the DB; they will be delivered if ${quoted(target)} reconnects.`
          : 'no undelivered messages.';
      stdout.write(`forgot agent ${quoted(target)}. ${rest}\n`);
    }
    return 0;
  }
}
