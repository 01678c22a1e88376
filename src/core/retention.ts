/**
 * Retention: what `prune` removes, and the automatic prune of
 * AGENT_BUS_RETENTION_DAYS. Read mail goes a whole thread at a time, once every
 * message of the thread is read and older than the cutoff; unread mail never
 * goes. Expired notices go with their receipts, ended sessions once their
 * resume window has passed, spawned agents' records once they ended before the
 * cutoff, and the record of file edits once it is older than the collision window. Every prune that removes something writes a `prune`
 * audit row with its counts and cutoff, which `audit verify` reads to tell
 * pruned mail from lost mail.
 */
import { pruneRow } from '../audit/record.js';
import { formatStamp, type Clock } from '../model/clock.js';
import type { AuditSink } from './audit-sink.js';
import type { MaintenancePort, PruneCounts } from '../store/ports.js';
import type { ReservationsPort } from '../store/ports/reservations.js';
import type { BusSettings } from './settings.js';

/** How soon after start a long-running server first sees whether the automatic prune is due, and how often after. */
const FIRST_LOOK_MS = 5_000;
const LOOK_EVERY_MS = 3_600_000;

/** The automatic prune's task name in the store's maintenance table. */
export const RETENTION_TASK = 'retention';
const DAY_MICROS = 86_400_000_000;

export interface PruneRequest {
  /** Mail older than this many milliseconds goes. */
  olderThanMs: number;
  dryRun: boolean;
  /** Who asked: the audit row's actor. */
  actor: string;
}

export interface PruneReport extends PruneCounts {
  dry_run: boolean;
  older_than: string;
  /** The store's size before and after reclaiming, where the engine needs telling (SQLite). */
  reclaimed: { before: number; after: number } | null;
}

export class Retention {
  constructor(
    private readonly store: MaintenancePort & Pick<ReservationsPort, 'pruneEdits'>,
    private readonly audit: AuditSink,
    private readonly clock: Clock,
    private readonly settings: Pick<BusSettings, 'sessionResumeHours' | 'retentionDays' | 'collisionWindowMs'>,
  ) {}

  async prune(request: PruneRequest): Promise<PruneReport> {
    const micros = this.clock.nowMicros();
    const olderThan = formatStamp(micros - request.olderThanMs * 1000);
    const resumeHours = this.settings.sessionResumeHours;
    const counts = await this.store.prune({
      mailBefore: olderThan,
      now: formatStamp(micros),
      sessionsEndedBefore: formatStamp(micros - Math.round(resumeHours * 3_600_000_000)),
      dryRun: request.dryRun,
    });
    // Edits older than the collision window can make no collision: they go with every prune, uncounted.
    if (!request.dryRun) await this.store.pruneEdits(formatStamp(micros - this.settings.collisionWindowMs * 1000));
    const removed = counts.messages + counts.notices + counts.receipts + counts.sessions + counts.spawns;
    let reclaimed: PruneReport['reclaimed'] = null;
    if (!request.dryRun && removed > 0) {
      this.audit.append([pruneRow(formatStamp(micros), request.actor, olderThan, counts)]);
      this.audit.flush();
      reclaimed = await this.store.reclaimSpace();
    }
    return { ...counts, dry_run: request.dryRun, older_than: olderThan, reclaimed };
  }

  /**
   * The automatic prune, when AGENT_BUS_RETENTION_DAYS is set: at most once a day across every
   * process of the bus (the store decides who takes the day's turn). Null when it is off or not due.
   */
  async pruneIfDue(actor: string, days: number | null = this.settings.retentionDays): Promise<PruneReport | null> {
    if (days === null) return null;
    const micros = this.clock.nowMicros();
    if (!(await this.store.startMaintenanceRun(RETENTION_TASK, formatStamp(micros), formatStamp(micros - DAY_MICROS)))) return null;
    return this.prune({ olderThanMs: days * 86_400_000, dryRun: false, actor });
  }

  /**
   * The automatic prune in a server that lives on (an MCP server, the hub), when the retention days
   * are set: off the hot path, on a timer that never keeps the process alive; the store lets one
   * process a day do it. A failure is reported and tried again at the next look. Returns what stops it.
   */
  keepPruned(actor: string, report: (line: string) => void): () => void {
    const days = this.settings.retentionDays;
    if (days === null) return () => undefined;
    let running = false;
    const look = (): void => {
      if (running) return;
      running = true;
      this.pruneIfDue(actor, days)
        .catch((error: unknown) => report(`agent-bus: the automatic prune failed: ${(error as Error).message}`))
        .finally(() => {
          running = false;
        });
    };
    const first = setTimeout(look, FIRST_LOOK_MS);
    const every = setInterval(look, LOOK_EVERY_MS);
    first.unref();
    every.unref();
    return () => {
      clearTimeout(first);
      clearInterval(every);
    };
  }
}
