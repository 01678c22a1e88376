/**
 * What the audit log's hash chain and its machine-wide lock cost a send: the same sends, in one
 * run, through the product's log and through a plain appender that writes the same rows with no
 * chain and no lock (what the log did before it was chained). Each round runs both back to back,
 * in alternating order; the median of the rounds' ratios is what the chain leaves of the plain
 * log's throughput.
 */
import { closeSync, constants, openSync, writeSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { AuditLog } from '../src/audit/log.js';
import { serialiseRows, type AuditRow } from '../src/audit/record.js';
import { Bus } from '../src/core/bus.js';
import { livenessFrom } from '../src/core/liveness.js';
import { registrationsFor } from '../src/core/roster.js';
import { busSettings } from '../src/core/settings.js';
import { openAuditLog, openStoreAt } from '../src/runtime.js';
import { systemProcessTable } from '../src/adapters/procs.js';
import { median, round, type Workspace } from './util.js';

/** The rows as they were written before the chain: one whole-line write per tick on an O_APPEND descriptor. */
class PlainAuditLog extends AuditLog {
  private queued: AuditRow[] = [];
  private plainFd: number | null = null;

  override append(rows: readonly AuditRow[]): void {
    if (rows.length === 0) return;
    if (this.queued.length === 0) queueMicrotask(() => this.flush());
    this.queued.push(...rows);
  }

  override flush(): void {
    if (this.queued.length === 0) return;
    const data = Buffer.from(serialiseRows(this.queued), 'utf8');
    this.queued = [];
    this.plainFd ??= openSync(this.path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT, 0o600);
    let offset = 0;
    while (offset < data.length) offset += writeSync(this.plainFd, data, offset, data.length - offset);
  }

  override close(): void {
    this.flush();
    if (this.plainFd !== null) closeSync(this.plainFd);
    this.plainFd = null;
  }
}

export async function auditChainCost(ws: Workspace, body: string): Promise<{ value: number; shown: string; details: Record<string, unknown> }> {
  const SENDS = 20_000;
  const SENDERS = 32;
  const SEQUENTIAL = 3_000;
  const ROUNDS = 5;
  const location = await ws.bus('audit-chain');
  const buses = {
    chained: new Bus(openStoreAt(location.db, location.env), openAuditLog(`${location.audit}.chained`, location.env), busSettings(location.env), { liveness: () => livenessFrom(systemProcessTable()) }),
    plain: new Bus(openStoreAt(location.db, location.env), new PlainAuditLog(`${location.audit}.plain`), busSettings(location.env), { liveness: () => livenessFrom(systemProcessTable()) }),
  };
  const concurrent: Record<keyof typeof buses, number[]> = { chained: [], plain: [] };
  const sequential: Record<keyof typeof buses, number[]> = { chained: [], plain: [] };
  try {
    for (const bus of Object.values(buses)) await bus.roster.register(registrationsFor('bench/alpha', '/home/dev/src/bench', true).concat(registrationsFor('bench/beta', '/home/dev/src/bench', true)));
    const request = { from: 'bench/alpha', to: 'bench/beta', body };
    for (const bus of Object.values(buses)) for (let index = 0; index < 2_000; index++) await bus.mail.send(request);
    for (let round = 0; round < ROUNDS; round++) {
      for (const kind of round % 2 === 0 ? (['chained', 'plain'] as const) : (['plain', 'chained'] as const)) {
        const bus = buses[kind];
        const start = performance.now();
        await Promise.all(
          Array.from({ length: SENDERS }, async () => {
            for (let index = 0; index < SENDS / SENDERS; index++) await bus.mail.send(request);
          }),
        );
        concurrent[kind].push(SENDS / ((performance.now() - start) / 1000));
        const one = performance.now();
        for (let index = 0; index < SEQUENTIAL; index++) await bus.mail.send(request);
        sequential[kind].push(SEQUENTIAL / ((performance.now() - one) / 1000));
      }
    }
  } finally {
    for (const bus of Object.values(buses)) await bus.close();
  }
  // Paired: each round measures both, back to back, so a noisy moment of the machine falls on both.
  const ratio = median(concurrent.chained.map((value, index) => value / (concurrent.plain[index] as number)));
  const sequentialRatio = median(sequential.chained.map((value, index) => value / (sequential.plain[index] as number)));
  return {
    value: round(ratio, 3),
    shown: `${round(ratio, 3)}× (${Math.round(median(concurrent.chained)).toLocaleString('en-US')} vs ${Math.round(median(concurrent.plain)).toLocaleString('en-US')} sends/s)`,
    details: {
      rounds: ROUNDS,
      sendsPerRound: SENDS,
      concurrentSenders: SENDERS,
      chainedSendsPerSecond: Math.round(median(concurrent.chained)),
      plainSendsPerSecond: Math.round(median(concurrent.plain)),
      // One caller awaiting each send: every send is its own write under the lock.
      sequentialRatio: round(sequentialRatio, 3),
      chainedSequentialPerSecond: Math.round(median(sequential.chained)),
      plainSequentialPerSecond: Math.round(median(sequential.plain)),
    },
  };
}
