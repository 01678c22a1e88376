/** Durations as users type them: `90d`, `12h`, `30m`, `2w`, or plain seconds. */
import { InvalidInputError } from './errors.js';
import { quoted } from './quote.js';

/** A duration such as `90d`, `12h`, `30m`, `2w` or plain seconds, in milliseconds. */
export function parseDuration(raw: string): number {
  const match = /^(\d+)\s*([smhdw]?)$/i.exec(raw.trim());
  if (!match) throw new InvalidInputError(`bad duration ${quoted(raw)}: use seconds or a number with s, m, h, d or w (e.g. 12h, 90d)`);
  const unit = (match[2] ?? '').toLowerCase();
  const seconds = Number(match[1]) * ({ m: 60, h: 3600, d: 86_400, w: 604_800 }[unit] ?? 1);
  if (!Number.isSafeInteger(seconds) || seconds <= 0) throw new InvalidInputError(`bad duration ${quoted(raw)}: it must be more than nothing`);
  if (seconds > 10 * 365 * 86_400) throw new InvalidInputError(`bad duration ${quoted(raw)}: the longest is ten years`);
  return seconds * 1000;
}

/** Milliseconds as a user would write them: `1h`, `5m`, `90s`. */
export function durationText(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  return `${ms / 1000}s`;
}
