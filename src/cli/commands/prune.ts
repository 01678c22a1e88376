/** `agent-bus prune`: old read mail, expired notices and ended sessions out of the store. */
import { parseDuration } from '../../model/duration.js';
import type { PruneReport } from '../../core/retention.js';
import { retentionDaysOf } from '../../adapters/dot-env.js';
import { openBus } from '../../runtime.js';
import { UsageError } from '../args.js';
import type { CommandRunner } from '../spec.js';
import { speakerName } from '../context.js';
import { when } from '../../model/when.js';
import { busPaths } from '../../adapters/paths.js';
import { removeLogsNotIn } from '../../fleet/logs.js';

export const run: CommandRunner = async (args, io) => {
  if (args.positionals.length > 0) throw new UsageError(`prune: unexpected argument; give the age with --older-than. See 'agent-bus prune --help'.`);
  const given = args.values['older-than'];
  const days = retentionDaysOf(io.env);
  if (typeof given !== 'string' && days === null) throw new UsageError("prune: say how old read mail must be to go, e.g. --older-than 90d (or set AGENT_BUS_RETENTION_DAYS). See 'agent-bus prune --help'.");
  const olderThanMs = typeof given === 'string' ? parseDuration(given) : (days as number) * 86_400_000;
  const dryRun = Boolean(args.values['dry-run']);
  const bus = openBus(io.env);
  try {
    const report = await bus.retention.prune({ olderThanMs, dryRun, actor: speakerName(undefined, io.env) });
    // The logs of spawned agents this machine ran whose records went.
    const logs = dryRun || report.spawns === 0 ? 0 : removeLogsNotIn(busPaths(io.env).folder, (await bus.fleet.list()).map((spawn) => spawn.logPath));
    io.stdout.write(args.values.json ? `${JSON.stringify({ ...report, logs_removed: logs })}\n` : `${describe(report)}${logs > 0 ? `; ${plural(logs, 'log')} of them removed` : ''}\n`);
    return 0;
  } finally {
    await bus.close();
  }
};

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;
}

function megabytes(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

function describe(report: PruneReport): string {
  const what =
    `${plural(report.messages, 'message')} in ${plural(report.threads, 'thread')}, ` +
    `${plural(report.notices, 'expired notice')} and ${plural(report.receipts, 'receipt')}, ${plural(report.sessions, 'ended session')}, ` +
    `${plural(report.spawns, 'ended spawned agent')}`;
  const cutoff = `read mail from before ${when(report.older_than)}`;
  const head = report.dry_run ? `would remove ${what} (${cutoff}); nothing was removed` : `removed ${what} (${cutoff})`;
  const space = report.reclaimed === null ? '' : `; the database went from ${megabytes(report.reclaimed.before)} to ${megabytes(report.reclaimed.after)}`;
  return `${head}${space}`;
}
