/** Where an agent's turn stands, for people: `working for 3 min  task 8a9b0c1d2e3f: port the parser`. */
import { oneLine, shortIdText } from './format.js';
import { heldText } from '../model/when.js';
import type { PresenceState } from '../model/records.js';

export interface Standing {
  state: PresenceState | 'running';
  state_since: string | null;
  task: { id: string; title: string } | null;
}

/** The state and how long it has held, then the task in hand; '' for a state no one knows (never guessed). */
export function standingText(standing: Standing, now: number, gap = '  '): string {
  if (standing.state === 'unknown') return '';
  const since = standing.state_since === null ? '' : ` ${heldText(standing.state_since, now)}`;
  const task = standing.task === null ? '' : `${gap}task ${shortIdText(standing.task.id)}: ${oneLine(standing.task.title, 40)}`;
  return `${standing.state}${since}${task}`;
}
