/**
 * Timestamps as the bus stores them: UTC, microseconds, `YYYY-MM-DDTHH:MM:SS.ffffffZ`.
 * They sort as text, so within one process they are made strictly increasing:
 * two sends in the same microsecond still read back in the order they were made.
 */
let lastMicros = 0;

/**
 * The wall clock in microseconds. Date.now() keeps it true across a laptop's
 * sleep and clock corrections (a monotonic counter would drift); the
 * sub-millisecond part comes from process.hrtime, and a stamp never repeats
 * or goes backwards within the process.
 */
export function nowMicros(): number {
  let micros = Date.now() * 1000 + Number((process.hrtime.bigint() / 1000n) % 1000n);
  if (micros <= lastMicros) micros = lastMicros + 1;
  lastMicros = micros;
  return micros;
}

const pad2 = (n: number): string => (n < 10 ? `0${n}` : String(n));

/**
 * `YYYY-MM-DDTHH:MM:SS` of a date, in UTC, from its UTC fields: the first toISOString() of a process
 * sets up date formatting, a millisecond or more of every hook's start.
 */
function isoSecond(date: Date): string {
  const day = `${String(date.getUTCFullYear()).padStart(4, '0')}-${pad2(date.getUTCMonth() + 1)}-${pad2(date.getUTCDate())}`;
  return `${day}T${pad2(date.getUTCHours())}:${pad2(date.getUTCMinutes())}:${pad2(date.getUTCSeconds())}`;
}

// Sends come in bursts: the date and time up to the second rarely change between stamps.
let cachedSecond = Number.NaN;
let cachedPrefix = '';

export function formatStamp(micros: number): string {
  const second = Math.floor(micros / 1_000_000);
  if (second !== cachedSecond) {
    cachedSecond = second;
    cachedPrefix = isoSecond(new Date(second * 1000)); // 2026-01-02T03:04:05
  }
  const fraction = String(micros - second * 1_000_000).padStart(6, '0');
  return `${cachedPrefix}.${fraction}Z`;
}

export function nowStamp(): string {
  return formatStamp(nowMicros());
}

/** Milliseconds since the epoch for a stored stamp (microseconds are dropped), or NaN. */
export function stampToMillis(stamp: string): number {
  return Date.parse(stamp.length > 24 ? `${stamp.slice(0, 23)}Z` : stamp);
}

/**
 * Where the core reads the time: the system clock in production; in tests, a clock moved by hand,
 * so time-to-live and ageing are tested by moving it rather than by sleeping or rewriting rows.
 */
export interface Clock {
  /** Microseconds since the epoch; within one clock a reading never repeats or goes backwards. */
  nowMicros(): number;
}

export const systemClock: Clock = { nowMicros };

/** A clock that stands still until moved: each reading is one microsecond after the last. */
export class ManualClock implements Clock {
  private micros: number;

  constructor(start: number = Date.now() * 1000) {
    this.micros = start;
  }

  nowMicros(): number {
    this.micros += 1;
    return this.micros;
  }

  /** Move the clock on by `ms` milliseconds. */
  advance(ms: number): void {
    this.micros += Math.round(ms * 1000);
  }
}

/** The clock's time as the bus stores it. */
export function stampOf(clock: Clock): string {
  return formatStamp(clock.nowMicros());
}
