/** Times as people read them: stored stamps are UTC, shown in the browser's own zone. */
export function millisOf(stamp: string): number {
  // Stamps carry microseconds; Date reads milliseconds.
  return Date.parse(stamp.length > 23 ? `${stamp.slice(0, 23)}Z` : stamp.endsWith('Z') ? stamp : `${stamp}Z`);
}

export function clock(stamp: string): string {
  const millis = millisOf(stamp);
  if (Number.isNaN(millis)) return stamp;
  return new Date(millis).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

export function ago(stamp: string, now = Date.now()): string {
  const millis = millisOf(stamp);
  if (Number.isNaN(millis)) return stamp;
  const seconds = Math.max(0, Math.round((now - millis) / 1000));
  if (seconds < 60) return `${seconds}s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m ago`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)}h ago`;
  return `${Math.floor(seconds / 86_400)}d ago`;
}

/** A remaining time as a countdown: 1h 02m, 4m 05s, 9s. */
export function remaining(ms: number): string {
  const seconds = Math.max(0, Math.ceil(ms / 1000));
  const hours = Math.floor(seconds / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  const rest = seconds % 60;
  if (hours > 0) return `${hours}h ${String(minutes).padStart(2, '0')}m`;
  if (minutes > 0) return `${minutes}m ${String(rest).padStart(2, '0')}s`;
  return `${rest}s`;
}

export function shortId(id: string | null | undefined): string {
  return id === null || id === undefined ? '' : id.slice(0, 8);
}
