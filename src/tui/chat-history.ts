/** The chat's line history, kept in `chat_history` next to the database across runs. */
import { appendFileSync, readFileSync, renameSync, writeFileSync } from 'node:fs';

export const HISTORY_LINES = 500;

/** The newest lines of the history file, newest first; a file grown past twice that is cut back to them. */
export function loadHistory(path: string): string[] {
  let lines: string[];
  try {
    lines = readFileSync(path, 'utf8').split('\n').filter(Boolean);
  } catch {
    return [];
  }
  const kept = lines.slice(-HISTORY_LINES);
  if (lines.length > 2 * HISTORY_LINES) {
    try {
      writeFileSync(`${path}.tmp`, `${kept.join('\n')}\n`, { mode: 0o600 });
      renameSync(`${path}.tmp`, path);
    } catch {
      // Kept whole: cutting it back is tidiness, not a need.
    }
  }
  return kept.reverse();
}

/** Add a line (one line: pasted breaks are marks); the error when the file cannot be written. */
export function appendHistory(path: string, line: string): Error | null {
  try {
    appendFileSync(path, `${line}\n`, { mode: 0o600 });
    return null;
  } catch (error) {
    return error as Error;
  }
}
