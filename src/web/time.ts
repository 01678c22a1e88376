/**
 * Times on the page, in the language every listing of agent-bus speaks (model/when.ts): a moment
 * is "3 min ago" or "in 2 h" within a day and its local date and time beyond, never a raw stamp.
 * A moment is a <time> element holding its stamp, so the page keeps its words current as it lives.
 * Countdowns (a notice's or a reservation's time left) are durations, said as such.
 */
import { localDateTime, stampMillis, when } from '../model/when.js';
import { el } from './dom.js';

/** How often the page says its moments again: "just now" becomes "5 s ago", then "1 min ago". */
const REFRESH_MS = 1_000;

/** A moment: its words ("3 min ago"), its local date and time on hover, its stamp in `datetime`. */
export function moment(stamp: string, attributes: Record<string, string> = {}): HTMLTimeElement {
  const millis = stampMillis(stamp);
  return el('time', { ...attributes, datetime: stamp, 'data-when': '', title: Number.isFinite(millis) ? localDateTime(millis) : null }, when(stamp));
}

/** Say every moment on the page again, now and every second after: only the words that changed are touched. */
export function keepMomentsCurrent(): void {
  const refresh = (): void => {
    if (document.hidden) return;
    const now = Date.now();
    for (const node of document.querySelectorAll<HTMLTimeElement>('time[data-when]')) {
      const words = when(node.dateTime, now);
      if (node.textContent !== words) node.textContent = words;
    }
  };
  window.setInterval(refresh, REFRESH_MS);
  document.addEventListener('visibilitychange', refresh);
}

/** A time left as a countdown: 1h 02m, 4m 05s, 9s. */
export function remaining(ms: number): string {
  const seconds = Math.max(0, Math.ceil(ms / 1000));
  const hours = Math.floor(seconds / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  const rest = seconds % 60;
  if (hours > 0) return `${hours}h ${String(minutes).padStart(2, '0')}m`;
  if (minutes > 0) return `${minutes}m ${String(rest).padStart(2, '0')}s`;
  return `${rest}s`;
}
