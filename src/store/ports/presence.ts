/** Presence: what the hooks last said of each name's turn (working, idle, waiting), and since when. */
import type { PresenceRecord } from '../../model/records.js';
import type { AttemptsOf } from './attempts.js';

/** A caller waiting to be told (by mail) that a name has reached a state. */
export interface PresenceWatch {
  watcher: string;
  name: string;
  state: string;
  createdAt: string;
}

export interface PresencePort {
  /** Keep a watch (once: the same watch again changes nothing). */
  addPresenceWatch(watch: PresenceWatch): Promise<void>;
  /** Every watch kept. */
  presenceWatches(): Promise<PresenceWatch[]>;
  /** Remove a watch; whether it was there (of processes racing to fire it, one removes it). */
  removePresenceWatch(watch: Omit<PresenceWatch, 'createdAt'>): Promise<boolean>;
  /** Note a name's state at `now`, unless it is in that state already (its `since` stays); whether it changed. */
  notePresence(record: PresenceRecord): Promise<boolean>;
  /** Every name's last noted state. */
  presence(): Promise<PresenceRecord[]>;
  /** One name's last noted state, or null. */
  presenceOf(name: string): Promise<PresenceRecord | null>;
  /** The names last noted in `state` (few: a pre-tool hook asks at every call whether any waits on a person). */
  namesIn(state: PresenceRecord['state']): Promise<string[]>;
}

export const PRESENCE_ATTEMPTS = {
  // Run again, it finds the state noted and changes nothing.
  notePresence: 'retryable',
  presence: 'retryable',
  presenceOf: 'retryable',
  namesIn: 'retryable',
  addPresenceWatch: 'retryable',
  presenceWatches: 'retryable',
  // Run again, it finds the watch gone and says so: the watch fires once.
  removePresenceWatch: 'once',
} as const satisfies AttemptsOf<PresencePort>;
