/** What the brain adapter keeps in the store: its channel's state, the markers written back, each session's tool calls. */
import type { BrainState } from '../model/records.js';
import type { BrainPort, SessionsPort } from '../store/ports.js';

export class BrainRecords {
  constructor(private readonly store: BrainPort & SessionsPort) {}

  state(channel: string): Promise<BrainState | null> {
    return this.store.brainState(channel);
  }

  /** A fetch that did not reconcile (the source was unavailable): the channel is untouched. */
  recordState(state: BrainState): Promise<void> {
    return this.store.recordBrainState(state);
  }

  /** Claim a marker for writing back: false when any process took it before. */
  takeMarker(key: string, session: string, now: string): Promise<boolean> {
    return this.store.recordMarker(key, session, now);
  }

  /** Count one tool call of a session; the new count. */
  countToolCall(session: string, now: string): Promise<number> {
    return this.store.tick(session, 'tool_calls', now);
  }
}
