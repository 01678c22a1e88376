/** Where an agent's turn stands, for people: `working 3m  task 0193a1b2: port the parser`. */
import { oneLine, relativeAge } from './format.js';
import type { PresenceState } from '../model/records.js';

export interface Standing {
  state: PresenceState | 'running';
  state_since: string | null;
  task: { id: string; title: string } | null;
}

/** The state and how long it has held, then the task in hand; '' for a state no one knows (never guessed). */
export function standingText(standing: Standing, now: number, gap = '  '): string {
  if (standing.state === 'unknown') return '';
  const since = standing.state_since === null ? '' : ` ${relativeAge(standing.state_since, now).replace(/ ago$/, '')}`;
  const task = standing.task === null ? '' : `${gap}task ${standing.task.id.slice(0, 8)}: ${oneLine(standing.task.title, 40)}`;
  return `${standing.state}${since}${task}`;
}
