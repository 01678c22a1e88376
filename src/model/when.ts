/**
 * One language for time across the CLI's listings and the dashboard: relative for what is within a
 * day ("3 min ago", "in 2 h"), the local date and time for what is further off ("30 Nov 14:05", with
 * the year when it is not this one's). Raw stored stamps appear only in JSON.
 *
 * Pure, with no Node.js module: the dashboard's page imports it too.
 */

/** Within this distance of now a time is said relative to now. */
const RELATIVE_WITHIN_MS = 24 * 3_600_000;

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/**
 * Milliseconds since the epoch of a stored stamp (`YYYY-MM-DDTHH:MM:SS.ffffffZ`, UTC, microseconds)
 * or any date text Date.parse reads; NaN when it is no time.
 */
export function stampMillis(stamp: string): number {
  // Stamps carry microseconds; Date reads milliseconds. A stamp with no zone is UTC.
  const trimmed = stamp.length > 23 && stamp.endsWith('Z') ? `${stamp.slice(0, 23)}Z` : stamp;
  const zoned = /T\d\d:\d\d(?::\d\d(?:\.\d+)?)?$/.test(trimmed) ? `${trimmed}Z` : trimmed;
  return Date.parse(zoned);
}

/** A distance in time, coarse: "45 s", "3 min", "2 h". */
function span(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < 60) return `${seconds} s`;
  // Rounded, so an hour's reservation made a moment ago expires "in 1 h", not "in 59 min".
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  return `${Math.round(seconds / 3600)} h`;
}

/** The local date and time of a moment: "30 Nov 14:05", or "30 Nov 2025 14:05" in another year than `now`'s. */
export function localDateTime(millis: number, now = Date.now()): string {
  const date = new Date(millis);
  const two = (value: number): string => String(value).padStart(2, '0');
  const year = date.getFullYear() === new Date(now).getFullYear() ? '' : ` ${date.getFullYear()}`;
  return `${date.getDate()} ${MONTHS[date.getMonth()] ?? '?'}${year} ${two(date.getHours())}:${two(date.getMinutes())}`;
}

/** A moment as people read it: "just now", "3 min ago", "in 2 h", or "30 Nov 14:05". */
export function whenText(millis: number, now = Date.now()): string {
  if (!Number.isFinite(millis)) return 'never';
  const distance = millis - now;
  if (Math.abs(distance) >= RELATIVE_WITHIN_MS) return localDateTime(millis, now);
  if (distance <= 0) return -distance < 5000 ? 'just now' : `${span(-distance)} ago`;
  return distance < 1000 ? 'now' : `in ${span(distance)}`;
}

/** A stored stamp as people read it (see whenText); "never" for an empty or unreadable one. */
export function when(stamp: string | null | undefined, now = Date.now()): string {
  return stamp ? whenText(stampMillis(stamp), now) : 'never';
}

/** When something ends, or ended: "expires in 2 h", "expires 9 Dec 08:00", "expired 3 min ago". */
export function untilText(stamp: string | null | undefined, now = Date.now()): string {
  const millis = stamp ? stampMillis(stamp) : Number.NaN;
  if (!Number.isFinite(millis)) return 'no end';
  return `${millis > now ? 'expires' : 'expired'} ${whenText(millis, now)}`;
}

/** How long a state has held: "for 3 min" within a day, "since 30 Nov 14:05" beyond. */
export function heldText(stamp: string | null | undefined, now = Date.now()): string {
  const millis = stamp ? stampMillis(stamp) : Number.NaN;
  if (!Number.isFinite(millis)) return '';
  if (now - millis >= RELATIVE_WITHIN_MS) return `since ${localDateTime(millis, now)}`;
  return now - millis < 5000 ? 'just now' : `for ${span(Math.max(0, now - millis))}`;
}

/** How long something still holds: "for another 59 min"; a day or more off, "until 9 Dec 08:00". */
export function remainingText(stamp: string, now = Date.now()): string {
  const millis = stampMillis(stamp);
  if (!Number.isFinite(millis) || millis <= now) return 'until just now';
  return millis - now >= RELATIVE_WITHIN_MS ? `until ${localDateTime(millis, now)}` : `for another ${span(millis - now)}`;
}
