/** Presence: what the hooks last said of each name's turn (working, idle, waiting), and since when. */
import type { PresenceRecord } from '../../model/records.js';
import type { AttemptsOf } from './attempts.js';

export interface PresencePort {
  /** Note a name's state at `now`, unless it is in that state already (its `since` stays); whether it changed. */
  notePresence(record: PresenceRecord): Promise<boolean>;
  /** Every name's last noted state. */
  presence(): Promise<PresenceRecord[]>;
}

export const PRESENCE_ATTEMPTS = {
  // Run again, it finds the state noted and changes nothing.
  notePresence: 'retryable',
  presence: 'retryable',
} as const satisfies AttemptsOf<PresencePort>;
