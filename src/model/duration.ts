/**
 * Durations as users type them, one parser for every command, tool and setting that takes one:
 * plain seconds (`90`), a number with a unit (`30s`, `5m`, `12h`, `90d`, `2w`), or units combined
 * from the largest down (`1h30m`, `2d12h`, `1m30s`).
 */
import { InvalidInputError } from './errors.js';
import { quoted } from './quote.js';

const UNIT_SECONDS = { w: 604_800, d: 86_400, h: 3600, m: 60, s: 1 } as const;
type Unit = keyof typeof UNIT_SECONDS;
const UNITS = Object.keys(UNIT_SECONDS) as Unit[];

/** The forms a duration takes, for the messages that refuse one. */
export const DURATION_FORMS = 'seconds (90), or numbers with s, m, h, d or w, largest first (30s, 5m, 12h, 90d, 1h30m)';

/** The longest duration anything takes: ten years. */
const LONGEST_SECONDS = 10 * 365 * 86_400;

/** The seconds `raw` says, or a reason it says none. */
function secondsOf(raw: string): number | string {
  const text = raw.trim().toLowerCase();
  if (/^\d+$/.test(text)) return Number(text);
  const parts = [...text.matchAll(/(\d+)\s*([a-z]+)\s*/g)];
  if (parts.length === 0 || parts.map((part) => part[0]).join('') !== text.replace(/^\s+/, '')) return 'not a duration';
  let seconds = 0;
  let previous = -1;
  for (const [, count, unit] of parts) {
    const rank = UNITS.indexOf(unit as Unit);
    if (rank < 0) return `${quoted(unit)} is no unit`;
    if (rank <= previous) return 'each unit once, largest first';
    previous = rank;
    seconds += Number(count) * UNIT_SECONDS[unit as Unit];
  }
  return seconds;
}

/**
 * A duration in milliseconds. `what` names it in the message that refuses it (`--ttl`, a setting);
 * `longestMs` caps it where something takes less than ten years.
 */
export function parseDuration(raw: string, options: { what?: string; longestMs?: number; longestText?: string } = {}): number {
  const label = options.what === undefined ? 'duration' : `${options.what}`;
  const seconds = secondsOf(raw);
  if (typeof seconds === 'string') throw new InvalidInputError(`bad ${label} ${quoted(raw)} (${seconds}): use ${DURATION_FORMS}`);
  if (!Number.isSafeInteger(seconds) || seconds <= 0) throw new InvalidInputError(`bad ${label} ${quoted(raw)}: it must be more than nothing`);
  const longestMs = Math.min(options.longestMs ?? Number.POSITIVE_INFINITY, LONGEST_SECONDS * 1000);
  if (seconds * 1000 > longestMs) throw new InvalidInputError(`bad ${label} ${quoted(raw)}: the longest is ${options.longestText ?? durationText(longestMs)}`);
  return seconds * 1000;
}

/** Whether text reads as a duration (rather than, say, a date). */
export function isDuration(raw: string): boolean {
  return typeof secondsOf(raw) === 'number';
}

/** Milliseconds as a user would write them: `1h`, `5m`, `90s`, `1h30m`, `10d`. */
export function durationText(ms: number): string {
  let seconds = Math.round(ms / 1000);
  if (seconds <= 0) return '0s';
  let text = '';
  for (const unit of ['d', 'h', 'm', 's'] as const) {
    const size = UNIT_SECONDS[unit];
    if (seconds >= size) {
      text += `${Math.floor(seconds / size)}${unit}`;
      seconds %= size;
    }
  }
  return text;
}
