/**
 * Presence: the hooks note where an agent's turn stands (working, idle, waiting); the roster reads it
 * beside each name, with a session's own evidence (ended, gone) first. A caller may ask to be told,
 * once, by urgent mail (which wakes it if idle), when a name reaches a state.
 */
import { InvalidInputError, NotFoundError } from '../model/errors.js';
import { stampOf, type Clock } from '../model/clock.js';
import { quoted } from '../model/quote.js';
import type { PresenceRecord } from '../model/records.js';
import type { PresencePort } from '../store/ports/presence.js';
import type { Mail } from './mail-ops.js';
import { BUS_NAME } from './names.js';
import type { Roster } from './roster-ops.js';

/** The states a caller may wait for. */
export const AWAITED_STATES = ['working', 'idle', 'waiting', 'ended', 'gone'] as const;
export type AwaitedState = (typeof AWAITED_STATES)[number];

export class Presence {
  constructor(
    private readonly store: PresencePort,
    private readonly clock: Clock,
    private readonly roster: Roster,
    private readonly mail: Mail,
  ) {}

  /** Note where a name's turn stands (a hook at its prompt: working; at a stop it lets happen: idle); watches it meets fire. */
  async note(name: string, state: PresenceRecord['state']): Promise<void> {
    if (await this.store.notePresence({ name, state, since: stampOf(this.clock) })) await this.fireWatches();
  }

  /** What the hooks last said of a name's turn, or null. */
  of(name: string): Promise<PresenceRecord | null> {
    return this.store.presenceOf(name);
  }

  /**
   * A session has started: idle, waiting for its first prompt, where nothing says otherwise or its name's
   * last session ended. Not over a turn under way (Claude Code starts a session again at compaction).
   */
  async started(name: string): Promise<void> {
    const noted = await this.store.presenceOf(name);
    if (noted === null || noted.state === 'ended') await this.note(name, 'idle');
  }

  /**
   * A tool call is starting: whoever waited on a person has been answered, and works. Most calls find no
   * one waiting anywhere and pay for that one look only; `reader` (which may read the process table) is
   * asked only when someone waits.
   */
  async toolCalled(reader: () => Promise<string>): Promise<void> {
    const waiting = await this.store.namesIn('waiting');
    if (waiting.length === 0) return;
    const name = await reader();
    if (waiting.includes(name)) await this.note(name, 'working');
  }

  /** Tell `watcher` by mail, once, when `name` is in `state` (at once if it is already). */
  async notifyWhen(watcher: string, name: string, state: string): Promise<{ name: string; state: AwaitedState; now: string; notified: boolean }> {
    if (!(AWAITED_STATES as readonly string[]).includes(state)) throw new InvalidInputError(`state must be one of ${AWAITED_STATES.join(', ')}, not ${quoted(state)}`);
    const agent = (await this.roster.agents()).find((row) => row.name === name);
    if (agent === undefined) throw new NotFoundError(`no agent named ${quoted(name)} is on the bus; list_agents shows who is there`);
    await this.store.addPresenceWatch({ watcher, name, state, createdAt: stampOf(this.clock) });
    const fired = await this.fireWatches();
    return { name, state: state as AwaitedState, now: agent.state, notified: fired.some((watch) => watch.watcher === watcher && watch.name === name && watch.state === state) };
  }

  /**
   * Send the mail of every watch whose name is now in its state (a session address gone from the
   * roster has ended), each once: of processes racing to fire a watch, the one that removes it sends.
   */
  async fireWatches(): Promise<Array<{ watcher: string; name: string; state: string }>> {
    const watches = await this.store.presenceWatches();
    if (watches.length === 0) return [];
    const agents = new Map((await this.roster.agents()).map((agent) => [agent.name, agent]));
    const fired: Array<{ watcher: string; name: string; state: string }> = [];
    for (const watch of watches) {
      const agent = agents.get(watch.name);
      const reached = agent === undefined ? watch.state === 'ended' : agent.state === watch.state;
      if (!reached || !(await this.store.removePresenceWatch(watch))) continue;
      fired.push(watch);
      await this.mail.send({ from: BUS_NAME, to: watch.watcher, urgent: true, body: `[agent-bus] ${watch.name} is ${watch.state} (you asked to be told: notify_when).` }).catch(() => undefined);
    }
    return fired;
  }
}
