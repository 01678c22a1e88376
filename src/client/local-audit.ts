/**
 * This machine's audit log, as `tail` reads it: its last rows, then every new row as it is written,
 * and every send the bus stores, from any process on any machine, as the store's change feed
 * signals it. A send made here comes both ways and is printed once.
 */
import { statSync } from 'node:fs';
import { isChainRow } from '../audit/chain.js';
import { followLines } from '../audit/follow.js';
import { parseAuditLine, tailAudit } from '../audit/log.js';
import type { AuditRow } from '../audit/record.js';
import type { Bus } from '../core/bus.js';
import type { SendsFollower } from '../core/follow-sends.js';
import { eachChange } from '../core/store-changes.js';
import { oneLine } from '../render/format.js';
import type { MessageRecord } from '../model/records.js';
import type { AuditDesk } from './bus-client.js';

/** How often the store is asked again when no change was signalled (skipped positions, a missed hint). */
const POLL_MS = 2_000;
/** How many sends' ids are remembered to print each once, whichever way it came. */
const REMEMBERED_SENDS = 10_000;

export class LocalAudit implements AuditDesk {
  /** Where the last `tail` ended: `follow` goes on from there. */
  private offset = 0;

  /** `bus`: opened only when followed (a tail of the log alone reads the file). */
  constructor(
    private readonly openBus: () => Bus,
    private readonly path: string,
  ) {}

  async tail(limit: number): Promise<AuditRow[]> {
    try {
      this.offset = statSync(this.path).size;
    } catch {
      this.offset = 0;
    }
    return tailAudit(this.path, limit, this.offset);
  }

  follow(print: (row: AuditRow) => void, warn: (line: string) => void): Promise<number> {
    const bus = this.openBus();
    const printed = new Set<string>();
    const printOnce = (row: AuditRow): void => {
      if (row.op === 'send' && typeof row.message_id === 'string') {
        if (printed.has(row.message_id)) return;
        printed.add(row.message_id);
        if (printed.size > REMEMBERED_SENDS) printed.delete(printed.values().next().value as string);
      }
      print(row);
    };
    const feed = bus.changes();
    let stopped = false;
    let storeWarned = false;
    return new Promise<number>((resolve, reject) => {
      let failed: unknown = null;
      const fail = (error: unknown): void => {
        // Most likely the reader went away; the caller decides what that means.
        failed ??= error;
        stop();
      };
      const audit = followLines(
        this.path,
        (line) => {
          const row = parseAuditLine(line);
          if (!row || isChainRow(row)) return;
          try {
            printOnce(row);
          } catch (error) {
            fail(error);
          }
        },
        { fromOffset: this.offset },
      );
      let follower: SendsFollower | null = null;
      const sends = eachChange({ feed, pollMs: POLL_MS, stopped: () => stopped }, async () => {
        let stored: MessageRecord[];
        try {
          follower ??= await bus.mail.follow();
          stored = await follower.next();
          storeWarned = false;
        } catch (error) {
          if (stopped) return undefined;
          if (!storeWarned) warn(`agent-bus: tail: cannot read the bus (${oneLine((error as Error).message ?? String(error))}); following this machine's audit log meanwhile`);
          storeWarned = true;
          return undefined;
        }
        try {
          for (const message of stored) printOnce(bus.mail.sendRow(message));
        } catch (error) {
          fail(error);
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
            if (failed !== null) reject(failed);
            else resolve(0);
          });
      }
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
  }
}
