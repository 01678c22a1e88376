/**
 * A spawned agent's log on the page: its last lines, read again every second while the agent runs
 * (a log grows with no change to the store, so no event says it did) and once more after it has
 * ended (its supervisor writes the exit's line just after it records the exit). One log is
 * followed at a time; the lines are text, never HTML.
 */
import { ApiError, getJson } from './api.js';
import { byId, show } from './dom.js';
import type { FleetAgent } from './types.js';

const READ_EVERY_MS = 1_000;
const LINES = 50;

interface LogAnswer {
  spawn_id: string;
  name: string;
  state: FleetAgent['state'];
  lines: string[];
}

export class FleetLog {
  private following: string | null = null;
  private timer: number | undefined;
  private readonly panel = byId('fleet-log');
  private readonly lines = byId('fleet-log-lines');

  constructor() {
    byId('fleet-log-close').addEventListener('click', () => this.close());
  }

  /** Show this agent's log, and keep it current while the agent runs. */
  follow(agent: Pick<FleetAgent, 'spawn_id' | 'name'>): void {
    window.clearTimeout(this.timer);
    this.following = agent.spawn_id;
    this.panel.hidden = false;
    this.panel.dataset.spawn = agent.spawn_id;
    show(byId('fleet-log-title'), `Log of ${agent.name}`);
    show(byId('fleet-log-state'), 'reading…');
    show(this.lines, '');
    void this.read(agent.spawn_id, false);
  }

  /** Whose log is shown, if any. */
  get spawnId(): string | null {
    return this.following;
  }

  private async read(spawnId: string, endedBefore: boolean): Promise<void> {
    if (this.following !== spawnId) return;
    let answer: LogAnswer;
    try {
      answer = await getJson<LogAnswer>('/api/fleet/log', { spawn_id: spawnId, lines: LINES });
    } catch (error) {
      if (this.following !== spawnId) return;
      show(byId('fleet-log-state'), error instanceof ApiError ? error.message : 'The dashboard could not be reached.');
      byId('fleet-log-state').className = 'error';
      return;
    }
    if (this.following !== spawnId) return;
    // Kept at its end while the reader is there; left where they scrolled to otherwise.
    const atEnd = this.lines.scrollTop + this.lines.clientHeight >= this.lines.scrollHeight - 4;
    show(this.lines, answer.lines.length === 0 ? '(nothing written yet)' : answer.lines.join('\n'));
    if (atEnd) this.lines.scrollTop = this.lines.scrollHeight;
    const ended = answer.state === 'exited';
    const state = byId('fleet-log-state');
    state.className = 'muted';
    show(state, ended ? `Its last ${LINES} lines; it has ended.` : `Its last ${LINES} lines, read again every second while it ${answer.state === 'queued' ? 'waits for a slot' : 'runs'}.`);
    this.lines.dataset.state = answer.state;
    if (!endedBefore) this.timer = window.setTimeout(() => void this.read(spawnId, ended), READ_EVERY_MS);
  }

  close(): void {
    window.clearTimeout(this.timer);
    const was = this.following;
    this.following = null;
    this.panel.hidden = true;
    document.querySelector<HTMLElement>(`#fleet-list button.log[data-spawn="${was ?? ''}"]`)?.focus();
  }
}
