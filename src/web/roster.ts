/**
 * The roster: repos and their names with where each one's turn stands (working, waiting, idle; a
 * session running or ended) and when it was last seen, unread counts; a page of repos at a time.
 * An empty bus says how to put a repo on it.
 */
import { getJson } from './api.js';
import { byId, el, Latest, rebuild, show } from './dom.js';
import { taskRef } from './ids.js';
import { moment } from './time.js';
import type { Agent, RosterPage } from './types.js';

const PAGE = 40;

export class Roster {
  private offset = 0;
  private filter = '';
  private total = 0;
  private readonly latest = new Latest();
  /** Repos opened or closed by hand, kept so across the redraws the bus's changes bring. */
  private readonly opened = new Map<string, boolean>();

  constructor() {
    let typing: number | undefined;
    byId<HTMLInputElement>('roster-filter').addEventListener('input', (event) => {
      window.clearTimeout(typing);
      typing = window.setTimeout(() => {
        this.filter = (event.target as HTMLInputElement).value;
        this.offset = 0;
        void this.load();
      }, 200);
    });
    byId('roster-prev').addEventListener('click', () => {
      this.offset = Math.max(0, this.offset - PAGE);
      void this.load();
    });
    byId('roster-next').addEventListener('click', () => {
      if (this.offset + PAGE < this.total) this.offset += PAGE;
      void this.load();
    });
  }

  async load(): Promise<void> {
    const { current, value: page } = await this.latest.take(() => getJson<RosterPage>('/api/roster', { offset: this.offset, limit: PAGE, filter: this.filter }));
    if (!current) return;
    this.total = page.totalRepos;
    const last = Math.min(page.totalRepos, this.offset + page.repos.length);
    const empty = page.totalAgents === 0 && this.filter === '';
    show(
      byId('roster-summary'),
      page.totalAgents === 0 ? (empty ? 'Nobody is on the bus yet.' : 'No name or topic matches.') : `${page.totalAgents} names in ${page.totalRepos} repos` + (page.totalRepos > PAGE ? ` (repos ${this.offset + 1}–${last})` : ''),
    );
    byId('roster-pager').hidden = page.totalRepos <= PAGE;
    byId<HTMLButtonElement>('roster-prev').disabled = this.offset === 0;
    byId<HTMLButtonElement>('roster-next').disabled = last >= page.totalRepos;
    const list = byId('roster-list');
    if (empty) {
      show(list, nextStep());
      return;
    }
    rebuild(list, () =>
      show(
        list,
        ...page.repos.map((repo) => {
          const details = el(
            'details',
            { class: 'repo', open: this.opened.get(repo.repo) ?? page.repos.length <= 8 },
            el('summary', { 'data-key': repo.repo }, el('strong', {}, repo.repo), el('span', { class: 'muted' }, ` ${repo.agents.length} · ${repo.running} running`), repo.unread > 0 ? el('span', { class: 'badge' }, `${repo.unread} unread`) : null),
            el('ul', { class: 'agents' }, ...repo.agents.map((agent) => agentItem(agent))),
          );
          details.addEventListener('toggle', () => this.opened.set(repo.repo, details.open));
          return details;
        }),
      ),
    );
  }
}

/** What to do on a bus nobody is on yet: wire a repo, and start a client in it. */
function nextStep(): HTMLElement {
  return el(
    'div',
    { class: 'next-step', id: 'roster-next-step' },
    el('p', {}, 'Put a repo on the bus: in the repo, run ', el('code', { class: 'command' }, 'agent-bus init'), ', then start Claude Code (or another client it wired) there.'),
    el('p', { class: 'muted' }, 'Its agents show here, with where each one stands.'),
  );
}

/** Where its turn stands (presence); a session its hooks have said nothing of shows whether it runs. */
function stateOf(agent: Agent): HTMLSpanElement | null {
  if (agent.state !== 'unknown') return el('span', { class: `state ${agent.state}` }, agent.state);
  if (agent.live === null) return null;
  return agent.live ? el('span', { class: 'state running' }, 'running') : el('span', { class: 'state ended' }, 'ended');
}

/** How it is woken when mail comes while it is idle, where a watcher says: its MCP server through the inbox socket, or a watcher process. */
function wakeOf(agent: Agent): HTMLSpanElement | null {
  const { wake } = agent;
  if (wake === null) return null;
  if (wake.way === 'socket-refused') return el('span', { class: 'wake', title: `the inbox socket was given up: ${wake.note ?? 'no reason noted'}` }, 'wake: watcher (socket given up)');
  return el('span', { class: 'wake' }, `wake: ${wake.way === 'queue' ? `${agent.client ?? 'client'} queue` : wake.way}`);
}

/** A name with its presence and unread mail, then, smaller, what else is known of it. */
function agentItem(agent: Agent): HTMLLIElement {
  const details: Array<HTMLElement | null> = [
    agent.state !== 'unknown' && agent.state_since !== null ? el('span', { class: 'since' }, 'since ', moment(agent.state_since)) : null,
    agent.task === null ? null : el('span', { class: 'task-in-hand', title: `task ${taskRef(agent.task)}` }, `task: ${agent.task.title}`),
    wakeOf(agent),
    el('span', { class: 'seen' }, 'seen ', moment(agent.last_seen)),
  ];
  return el(
    'li',
    { class: agent.kind === 'session' ? 'agent session' : 'agent' },
    el('span', { class: 'name' }, agent.name),
    stateOf(agent),
    agent.pending_count > 0 ? el('span', { class: 'badge', title: 'unread mail' }, `${agent.pending_count} unread`) : null,
    agent.server_gone === true
      ? el('span', { class: 'badge server-gone', title: 'its client runs on without its agent-bus server: hooks the server answers reach nothing, so its mail waits; reconnect the server (/mcp in Claude Code) or restart the session' }, 'server gone: hooks unheard')
      : null,
    el('span', { class: 'details muted' }, ...details.filter((detail) => detail !== null).flatMap((detail, index) => (index === 0 ? [detail] : [' · ', detail]))),
    agent.topic ? el('span', { class: 'topic' }, agent.topic) : null,
  );
}
