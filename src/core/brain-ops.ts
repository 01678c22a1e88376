/** What the brain adapter keeps in the store: its channel's state, the markers written back, each session's tool calls. */
import { stampOf, type Clock } from '../model/clock.js';
import type { BrainState } from '../model/records.js';
import type { BrainPort, SessionsPort } from '../store/ports.js';

export class BrainRecords {
  constructor(
    private readonly store: BrainPort & Pick<SessionsPort, 'tick'>,
    private readonly clock: Clock,
  ) {}

  state(channel: string): Promise<BrainState | null> {
    return this.store.brainState(channel);
  }

  /** A fetch that did not reconcile (the source was unavailable): the channel is untouched. */
  recordState(state: BrainState): Promise<void> {
    return this.store.recordBrainState(state);
  }

  /** Record a marker as written back, once: false when any process recorded it before. */
  recordMarker(key: string, session: string): Promise<boolean> {
    return this.store.recordMarker(key, session, stampOf(this.clock));
  }

  /** Count one tool call of a session; the new count. */
  countToolCall(session: string): Promise<number> {
    return this.store.tick(session, 'tool_calls', stampOf(this.clock));
  }
}
