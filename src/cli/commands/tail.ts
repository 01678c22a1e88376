/** `agent-bus tail`: the audit log's last rows, and with -f every new row as it is written. */
import { statSync } from 'node:fs';
import { isChainRow } from '../../audit/chain.js';
import { followLines } from '../../audit/follow.js';
import { parseAuditLine, tailAudit } from '../../audit/log.js';
import type { AuditRow } from '../../audit/record.js';
import { busPaths } from '../../core/paths.js';
import type { SendsFollower } from '../../core/follow-sends.js';
import { eachChange } from '../../core/store-changes.js';
import { openBus } from '../../runtime.js';
import { ReaderGone } from '../output.js';
import { hubAccess } from '../../remote/settings.js';
import { callHubOp } from '../../remote/tools.js';
import { positiveInt } from '../context.js';
import { clockTime, oneLine, pad, padStyled, printable, shortThread, terminalWidth, wrap } from '../../render/format.js';
import { makeStyle, type Style } from '../../render/style.js';
import type { CommandRunner } from '../spec.js';

export function renderAuditRow(row: AuditRow, style: Style, full: boolean, width: number): string {
  const from = typeof row.from === 'string' ? row.from : '';
  const to = typeof row.to === 'string' ? row.to : '';
  const preview = typeof row.body_preview === 'string' ? row.body_preview : '';
  const status = typeof row.wake_status === 'string' ? ` (${printable(row.wake_status)})` : '';
  const head =
    `${style.dim(clockTime(String(row.ts ?? '')))}  ${pad(printable(String(row.op ?? '?')), 8)}` +
    `${padStyled(style.agent(from), from, 18)} → ${padStyled(style.agent(to), to, 18)}`;
  const thread = style.dim(`[${shortThread(row.thread_id)}]`);
  if (full) return `${head}  ${thread}${status}\n${wrap(preview, width)}`;
  return `${head}  ${oneLine(preview)}${status}  ${thread}`;
}

export const run: CommandRunner = async (args, io) => {
  const limit = positiveInt(args.values.limit, 'limit', 50);
  const json = Boolean(args.values.json);
  const full = Boolean(args.values.full);
  const path = busPaths(io.env).audit;
  const style = await makeStyle(io.stdout, io.env, json);
  const width = terminalWidth(io.stdout);
  const print = (row: AuditRow): void => {
    io.stdout.write(`${json ? JSON.stringify(row) : renderAuditRow(row, style, full, width)}\n`);
  };
  const access = hubAccess(io.env);
  if (access !== null) {
    // The hub's audit log, not this machine's; followed, every send its bus stores from any machine.
    for (const row of await callHubOp<AuditRow[]>(access, 'audit.tail', { limit })) print(row);
    if (!args.values.follow) return 0;
    const { followOverHub } = await import('../../remote/follow.js');
    return followOverHub(access, print, (line) => io.stderr.write(`${line}\n`));
  }
  let startOffset = 0;
  try {
    startOffset = statSync(path).size;
  } catch {
    startOffset = 0;
  }
  for (const row of tailAudit(path, limit, startOffset)) print(row);
  if (!args.values.follow) return 0;
  return follow(path, startOffset, print, io.env, (line) => io.stderr.write(`${line}\n`));
};

/** How often the store is asked again when no change was signalled (skipped positions, a missed hint). */
const POLL_MS = 2_000;
/** How many sends' ids are remembered to print each once, whichever way it came. */
const REMEMBERED_SENDS = 10_000;

/**
 * Every new row of this machine's audit log as it is written, and every send the bus stores,
 * from any process on any machine, as its change feed signals it: a send made here comes
 * both ways and is printed once.
 */
function follow(path: string, fromOffset: number, print: (row: AuditRow) => void, env: NodeJS.ProcessEnv, warn: (line: string) => void): Promise<number> {
  const printed = new Set<string>();
  const printOnce = (row: AuditRow): void => {
    if (row.op === 'send' && typeof row.message_id === 'string') {
      if (printed.has(row.message_id)) return;
      printed.add(row.message_id);
      if (printed.size > REMEMBERED_SENDS) printed.delete(printed.values().next().value as string);
    }
    print(row);
  };
  const bus = openBus(env);
  const feed = bus.changes();
  let stopped = false;
  let storeWarned = false;
  return new Promise<number>((resolve, reject) => {
    let failed: unknown = null;
    const fail = (error: unknown): void => {
      // Most likely the reader went away; the dispatcher decides what that means.
      failed ??= error;
      stop();
    };
    const audit = followLines(
      path,
      (line) => {
        const row = parseAuditLine(line);
        if (!row || isChainRow(row)) return;
        try {
          printOnce(row);
        } catch (error) {
          fail(error);
        }
      },
      { fromOffset },
    );
    let follower: SendsFollower | null = null;
    const sends = eachChange({ feed, pollMs: POLL_MS, stopped: () => stopped }, async () => {
      try {
        follower ??= await bus.followSends();
        for (const message of await follower.next()) printOnce(bus.sendRow(message));
        storeWarned = false;
      } catch (error) {
        if (stopped) return undefined;
        if (error instanceof ReaderGone) {
          fail(error);
          return undefined;
        }
        if (!storeWarned) warn(`agent-bus: tail: cannot read the bus (${oneLine((error as Error).message ?? String(error))}); following this machine's audit log meanwhile`);
        storeWarned = true;
      }
      return undefined;
    });
    function stop(): void {
      if (stopped) return;
      stopped = true;
      audit.close();
      feed.interrupt();
      void sends
        .catch(() => undefined)
        .then(async () => {
          await feed.close().catch(() => undefined);
          await bus.close().catch(() => undefined);
          if (failed !== null) reject(failed);
          else resolve(0);
        });
    }
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}
