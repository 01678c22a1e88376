/**
 * Tasks: a board with a column per state, read again whenever the bus moves; a task opened shows its
 * facts and its history (the audit log's task rows), and may be reassigned or cancelled; a form makes one.
 * The tasks still waiting (open, blocked, taken) are listed first thing on the page too; an empty
 * board says how to add a task. On the bus's own machine the form may also run the task: an agent of
 * the chosen client spawned to hold it, as `task add … --run CLIENT` does.
 */
import { ApiError, getJson, postJson } from './api.js';
import { byId, el, show, type Child } from './dom.js';
import { shortId, taskRef } from './ids.js';
import { moment } from './time.js';
import type { AuditRow, Task } from './types.js';

const COLUMNS = ['blocked', 'open', 'taken', 'done', 'failed', 'cancelled'] as const;
/** The states of a task not closed yet, in the order the waiting list shows them: nobody has it, it waits for others, someone has it. */
const WAITING = ['open', 'blocked', 'taken'] as const;
/** Waiting tasks listed first thing on the page; the rest are on the board. */
const WAITING_SHOWN = 5;

export class Tasks {
  private tasks: Task[] = [];
  private open: string | null = null;
  private readonly board = byId('task-board');
  private readonly view = byId('task-view');
  private readonly result = byId('task-result');

  constructor() {
    byId<HTMLFormElement>('task-form').addEventListener('submit', (event) => {
      event.preventDefault();
      void this.create();
    });
    byId<HTMLFormElement>('task-reassign-form').addEventListener('submit', (event) => {
      event.preventDefault();
      void this.act('/api/tasks/reassign', { to: byId<HTMLInputElement>('task-reassign-to').value.trim() }, 'Reassigned');
    });
    byId('task-cancel').addEventListener('click', () => void this.act('/api/tasks/cancel', {}, 'Cancelled'));
    byId('task-back').addEventListener('click', () => this.close());
  }

  async load(): Promise<void> {
    const answer = await getJson<{ tasks: Task[] }>('/api/tasks');
    this.tasks = answer.tasks;
    this.render();
    if (this.open !== null) await this.show(this.open, false);
  }

  private render(): void {
    const waiting = this.tasks.filter((task) => (WAITING as readonly string[]).includes(task.state));
    this.renderWaiting(waiting);
    show(
      byId('tasks-summary'),
      ...(this.tasks.length === 0
        ? ['No tasks yet. Hand one to an agent with ', el('code', { class: 'command' }, 'agent-bus task add "what to do" --to NAME'), ', or with New task below.']
        : [`${waiting.length} not closed, of ${this.tasks.length}.`]),
    );
    show(
      this.board,
      ...COLUMNS.map((state) => {
        const inColumn = this.tasks.filter((task) => task.state === state);
        return el(
          'section',
          { class: `column ${state}`, 'data-state': state, 'aria-label': `${state}: ${inColumn.length}` },
          el('h3', {}, state, el('span', { class: 'badge' }, String(inColumn.length))),
          el('ul', { class: 'list' }, ...inColumn.map((task) => this.card(task))),
        );
      }),
    );
  }

  private card(task: Task): HTMLLIElement {
    const open = el('button', { type: 'button', class: 'task', 'data-task': task.id }, task.title);
    open.addEventListener('click', () => void this.show(task.id, true));
    return el('li', { 'data-task': task.id }, open, el('p', { class: 'muted' }, task.holder === null ? `for ${task.to}` : `held by ${task.holder}`, ' · ', moment(task.updated_at), ' · ', el('span', { class: 'id' }, taskRef(task))));
  }

  /** The tasks not closed, longest waiting first by state: what someone may have to act on. */
  private renderWaiting(waiting: Task[]): void {
    const ordered = WAITING.flatMap((state) => waiting.filter((task) => task.state === state).sort((a, b) => a.updated_at.localeCompare(b.updated_at)));
    show(byId('waiting-count'), String(waiting.length));
    const list = byId('waiting-list');
    if (ordered.length === 0) {
      show(list, el('li', { class: 'muted' }, this.tasks.length === 0 ? 'No tasks yet.' : 'None: every task is closed.'));
      return;
    }
    const rest = ordered.length - WAITING_SHOWN;
    show(
      list,
      ...ordered.slice(0, WAITING_SHOWN).map((task) => {
        const open = el('button', { type: 'button', class: 'link task', 'data-task': task.id }, task.title);
        open.addEventListener('click', () => void this.show(task.id, true));
        const who = task.state === 'taken' ? `taken by ${task.holder ?? '?'}` : `${task.state}, for ${task.to}`;
        return el('li', { class: `waiting ${task.state}`, 'data-task': task.id }, open, el('span', { class: 'muted' }, `${who} · `, moment(task.updated_at), ' · ', el('span', { class: 'id' }, taskRef(task))));
      }),
      rest > 0 ? el('li', { class: 'muted' }, `and ${rest} more on the board below`) : null,
    );
  }

  /** One task's facts and history, in place of the board. */
  private async show(id: string, focus: boolean): Promise<void> {
    const { task, history } = await getJson<{ task: Task; history: AuditRow[] }>(`/api/task?id=${encodeURIComponent(id)}`);
    // A refresh of the open task that answers after the user went back to the board is dropped: it
    // would hide the board again.
    if (!focus && this.open !== id) return;
    this.open = task.id;
    show(byId('task-title'), task.title);
    const facts: Array<[string, Child[]]> = [
      ['State', [task.state]],
      ['For', [task.to]],
      ['Holder', [task.holder ?? '—']],
      ['Made by', [`${task.creator}, `, moment(task.created_at)]],
      ['Id', [el('span', { class: 'id' }, taskRef(task))]],
    ];
    if (task.after !== undefined && task.after.length > 0) facts.push(['After', [task.after.map((id) => shortId(id)).join(', ')]]);
    if (task.result !== null) facts.push([task.state === 'done' ? 'Result' : 'Reason', [task.result]]);
    show(byId('task-facts'), ...facts.flatMap(([term, value]) => [el('dt', {}, term), el('dd', {}, ...value)]));
    show(byId('task-body'), task.body ?? '');
    show(
      byId('task-history'),
      ...history.map((row) => el('li', {}, moment(String(row.ts)), ` ${String(row.event)} by ${row.actor} → ${String(row.state)}${row.holder ? ` (${String(row.holder)})` : ''}`)),
    );
    const closed = task.state === 'done' || task.state === 'failed' || task.state === 'cancelled';
    byId<HTMLFormElement>('task-reassign-form').hidden = closed;
    this.board.hidden = true;
    this.view.hidden = false;
    if (focus) {
      byId('task-title').focus({ preventScroll: true });
      byId('tasks').scrollIntoView({ block: 'start' });
    }
  }

  private close(): void {
    const was = this.open;
    this.open = null;
    this.view.hidden = true;
    this.board.hidden = false;
    this.board.querySelector<HTMLElement>(`button.task[data-task="${was ?? ''}"]`)?.focus();
  }

  /** Whether the form offers to run the task with a client (on the bus's own machine, not the hub). */
  running(maySpawn: boolean): void {
    byId('task-new-run-field').hidden = !maySpawn;
    if (!maySpawn) byId<HTMLSelectElement>('task-new-run').value = '';
  }

  private async create(): Promise<void> {
    const title = byId<HTMLInputElement>('task-new-title');
    const to = byId<HTMLInputElement>('task-new-to');
    const body = byId<HTMLTextAreaElement>('task-new-body');
    const run = byId<HTMLSelectElement>('task-new-run').value;
    const asked = { title: title.value, to: to.value.trim(), body: body.value || null };
    try {
      if (run === '') {
        const made = await postJson<Task>('/api/tasks', asked);
        this.said('ok', `Task ${taskRef(made)} made for ${made.to}.`);
      } else {
        const { task, spawned } = await postJson<{ task: Task; spawned: { name: string } }>('/api/tasks/run', { ...asked, client: run });
        this.said('ok', `Task ${taskRef(task)} made for ${task.to}; ${spawned.name} was spawned to hold it.`);
      }
      title.value = '';
      body.value = '';
    } catch (error) {
      this.said('error', error instanceof ApiError ? error.message : 'The dashboard could not be reached; no task was made.');
    }
    await this.load().catch(() => undefined);
  }

  private async act(path: string, extra: Record<string, unknown>, done: string): Promise<void> {
    if (this.open === null) return;
    try {
      const task = await postJson<Task>(path, { id: this.open, ...extra });
      this.said('ok', `${done}: ${task.title} is ${task.state}${task.state === 'open' ? `, for ${task.to}` : ''}.`);
    } catch (error) {
      this.said('error', error instanceof ApiError ? error.message : 'The dashboard could not be reached.');
    }
    await this.load().catch(() => undefined);
  }

  private said(kind: 'ok' | 'error', text: string): void {
    this.result.className = kind;
    show(this.result, text);
  }
}
