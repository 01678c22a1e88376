/**
 * The fleet: every agent the bus started (the latest run of each name), who it is, on which
 * machine, its client, how it stands (queued, running and for how long, or how it ended), its task,
 * whether it runs with --yolo, and its prompt; a Log button follows its output and a Stop button
 * ends it. A form spawns one. Read again whenever the bus moves; the uptimes tick on the page.
 * On the hub the fleet is only listed: spawning, stopping and logs are the agent's machine's, except for
 * the agents runners run, which a token of the spawn scope stops and reads there.
 */
import { ApiError, getJson, postJson } from './api.js';
import { byId, el, rebuild, show } from './dom.js';
import { FleetLog } from './fleet-log.js';
import { exitWords } from './fleet-words.js';
import { shortId } from './ids.js';
import { moment, remaining } from './time.js';
import { stampMillis } from '../model/when.js';
import type { FleetAgent, FleetPage } from './types.js';

const TICK_MS = 1_000;

/** How it stands, in a word: a stop asked for and not yet done reads as stopping. */
function stateWord(agent: FleetAgent): string {
  if (agent.state === 'running' && agent.stop_requested_at !== null) return 'stopping';
  return agent.state;
}

export class Fleet {
  private page: FleetPage | null = null;
  /** The server's clock less the browser's, so an uptime is right on a machine whose clock is off. */
  private skew = 0;
  private mayAct = false;
  private mayControlRunners = false;
  private readonly list = byId('fleet-list');
  private readonly result = byId('fleet-result');
  private readonly log = new FleetLog();

  constructor() {
    byId<HTMLFormElement>('fleet-form').addEventListener('submit', (event) => {
      event.preventDefault();
      void this.spawn();
    });
    window.setInterval(() => this.tick(), TICK_MS);
  }

  /**
   * Whether the one signed in may spawn, stop and read logs here (on the bus's own machine), or only look
   * (the hub); on the hub, a token of the spawn scope stops and reads the agents that runners run.
   */
  acting(maySpawn: boolean, mayControlRunners: boolean): void {
    this.mayAct = maySpawn;
    this.mayControlRunners = mayControlRunners;
    byId('fleet-spawn').hidden = !maySpawn;
    byId('fleet-hub-note').hidden = maySpawn;
  }

  async load(): Promise<void> {
    const page = await getJson<FleetPage>('/api/fleet');
    this.skew = stampMillis(page.now) - Date.now();
    this.page = page;
    this.render();
  }

  private render(): void {
    const agents = this.page?.agents ?? [];
    const count = (state: string): number => agents.filter((agent) => agent.state === state).length;
    const ended = count('exited') + (this.page?.ended_more ?? 0);
    show(byId('fleet-summary'), agents.length === 0 ? '' : `${count('running')} running, ${count('queued')} queued, ${ended} ended.`);
    show(
      byId('fleet-folders'),
      ...(this.page?.repos ?? []).map((repo) => el('option', { value: repo.folder }, repo.repo)),
    );
    rebuild(this.list, () => {
      if (agents.length === 0) {
        show(this.list, el('li', { class: 'muted empty' }, 'No agent started by the bus yet. Start one with Spawn an agent below, or ', el('code', { class: 'command' }, 'agent-bus spawn claude --prompt "…"'), ' in a repo.'));
        return;
      }
      const more = this.page?.ended_more ?? 0;
      show(this.list, ...agents.map((agent) => this.item(agent)), more > 0 ? el('li', { class: 'muted' }, `and ${more} more that ended earlier ('agent-bus agents' lists them)`) : null);
    });
  }

  private item(agent: FleetAgent): HTMLLIElement {
    const now = Date.now() + this.skew;
    const word = stateWord(agent);
    const running = agent.state === 'running' && agent.started_at !== null;
    const ran = agent.started_at !== null && agent.ended_at !== null ? stampMillis(agent.ended_at) - stampMillis(agent.started_at) : null;
    const actions = this.mayAct || (this.mayControlRunners && agent.runner !== null) ? [this.logButton(agent), agent.state === 'exited' ? null : this.stopButton(agent)] : [];
    return el(
      'li',
      { class: `spawn ${agent.state}`, 'data-spawn': agent.spawn_id, 'data-name': agent.name },
      el(
        'div',
        { class: 'row' },
        el('span', { class: 'who name' }, agent.name),
        el('span', { class: 'badge client' }, agent.client),
        el('span', { class: `state ${word}` }, word),
        running ? el('span', { class: 'uptime', 'data-since': agent.started_at ?? '', title: 'how long it has run' }, `up ${remaining(now - stampMillis(agent.started_at ?? ''))}`) : null,
        agent.yolo ? el('span', { class: 'badge yolo', title: 'started with --yolo: it asks no permission' }, '--yolo') : null,
        agent.supervisor_gone === true ? el('span', { class: 'badge server-gone', title: 'its exit will not be recorded by its supervisor: Stop ends it' }, 'supervisor gone') : null,
      ),
      agent.state === 'exited'
        ? el(
            'p',
            { class: `exit ${agent.exit_category ?? ''}` },
            exitWords({ code: agent.exit_code, signal: agent.exit_signal, category: agent.exit_category }),
            ran === null ? '' : ` after ${remaining(ran)}`,
            agent.ended_at === null ? '' : ', ',
            agent.ended_at === null ? null : moment(agent.ended_at),
            agent.exit_note === null ? '' : `: ${agent.exit_note}`,
          )
        : null,
      el(
        'p',
        { class: 'muted where' },
        `on ${agent.machine}`,
        agent.pid === null ? '' : ` · pid ${agent.pid}`,
        ` · spawned by ${agent.spawned_by} `,
        moment(agent.created_at),
        agent.restart === null ? '' : ` · restarts ${agent.restarts}/${agent.max_restarts}`,
      ),
      agent.task === null ? null : el('p', { class: 'task' }, `task ${shortId(agent.task)}`, agent.task_title === null ? '' : `: ${agent.task_title}`),
      el('p', { class: 'prompt' }, agent.prompt),
      actions.length === 0 ? null : el('div', { class: 'row actions' }, ...actions),
    );
  }

  private logButton(agent: FleetAgent): HTMLButtonElement {
    const button = el('button', { type: 'button', class: 'small log', 'data-spawn': agent.spawn_id, 'data-key': `log ${agent.spawn_id}`, 'aria-label': `Show the log of ${agent.name}` }, 'Log');
    button.addEventListener('click', () => this.log.follow(agent));
    return button;
  }

  private stopButton(agent: FleetAgent): HTMLButtonElement {
    const stopping = agent.stop_requested_at !== null;
    const button = el('button', { type: 'button', class: 'small stop', 'data-key': `stop ${agent.spawn_id}`, 'aria-label': `Stop ${agent.name}`, disabled: stopping }, stopping ? 'Stopping…' : 'Stop');
    button.addEventListener('click', () => void this.stop(agent, button));
    return button;
  }

  /** The uptimes, second by second, with no request to the server. */
  private tick(): void {
    const now = Date.now() + this.skew;
    for (const uptime of this.list.querySelectorAll<HTMLElement>('.uptime')) uptime.textContent = `up ${remaining(now - stampMillis(uptime.dataset.since ?? ''))}`;
  }

  private async stop(agent: FleetAgent, button: HTMLButtonElement): Promise<void> {
    button.disabled = true;
    button.textContent = 'Stopping…';
    try {
      const stopped = await postJson<FleetAgent>('/api/fleet/stop', { spawn_id: agent.spawn_id });
      // An agent a runner runs is stopped by its runner, within its heartbeat: the list shows its exit when it comes.
      if (stopped.state !== 'exited') this.said('ok', `Asked the runner on ${stopped.machine} to stop ${stopped.name}.`);
      else this.said('ok', `Stopped ${stopped.name}: ${exitWords({ code: stopped.exit_code, signal: stopped.exit_signal, category: stopped.exit_category })}.`);
    } catch (error) {
      this.said('error', error instanceof ApiError ? error.message : 'The dashboard could not be reached.');
    }
    await this.load().catch(() => undefined);
  }

  private async spawn(): Promise<void> {
    const value = (id: string): string => byId<HTMLInputElement>(id).value;
    const checked = (id: string): boolean => byId<HTMLInputElement>(id).checked;
    const submit = byId<HTMLButtonElement>('fleet-submit');
    submit.disabled = true;
    try {
      const agent = await postJson<FleetAgent>('/api/fleet/spawn', {
        client: value('fleet-client'),
        folder: value('fleet-folder').trim(),
        label: value('fleet-label').trim() || null,
        prompt: value('fleet-prompt'),
        model: value('fleet-model').trim() || null,
        yolo: checked('fleet-yolo'),
        worktree: checked('fleet-worktree'),
      });
      const how =
        agent.state === 'queued'
          ? 'queued: this machine runs as many spawned agents as AGENT_BUS_MAX_SPAWNED allows; it starts when one ends'
          : agent.state === 'exited'
            ? `it has already ended: ${exitWords({ code: agent.exit_code, signal: agent.exit_signal, category: agent.exit_category })}`
            : `started ${agent.client}${agent.pid === null ? '' : ` (pid ${agent.pid})`} in ${agent.folder}${agent.yolo ? ', with --yolo' : ''}`;
      this.said('ok', `${agent.name}: ${how}.`);
      byId<HTMLInputElement>('fleet-label').value = '';
      byId<HTMLTextAreaElement>('fleet-prompt').value = '';
      this.log.follow(agent);
    } catch (error) {
      this.said('error', error instanceof ApiError ? error.message : 'The dashboard could not be reached; nothing was started.');
    } finally {
      submit.disabled = false;
    }
    await this.load().catch(() => undefined);
  }

  private said(kind: 'ok' | 'error', text: string): void {
    this.result.className = kind;
    show(this.result, text);
  }
}
