/**
 * Timestamps as the bus stores them: UTC, microseconds, `YYYY-MM-DDTHH:MM:SS.ffffffZ`.
 * They sort as text, so within one process they are made strictly increasing:
 * two sends in the same microsecond still read back in the order they were made.
 */
// process.hrtime needs no module load (perf_hooks would, on every hook run).
const monotonicMicros = (): number => Number(process.hrtime.bigint() / 1000n);
const originMicros = Date.now() * 1000 - monotonicMicros();
let lastMicros = 0;

export function nowMicros(): number {
  let micros = originMicros + monotonicMicros();
  if (micros <= lastMicros) micros = lastMicros + 1;
  lastMicros = micros;
  return micros;
}

// Sends come in bursts: the date and time up to the second rarely change between stamps.
let cachedSecond = Number.NaN;
let cachedPrefix = '';

export function formatStamp(micros: number): string {
  const second = Math.floor(micros / 1_000_000);
  if (second !== cachedSecond) {
    cachedSecond = second;
    cachedPrefix = new Date(second * 1000).toISOString().slice(0, 19); // 2026-01-02T03:04:05
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
