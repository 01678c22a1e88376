/**
 * Activity: the audit log as it happens, filtered by agent, op and thread. Reservation and fleet
 * rows read as sentences (who did what to which path, or to which spawned agent).
 */
import { matchesActivity, type ActivityFilter } from '../core/activity-filter.js';
import { getJson } from './api.js';
import { byId, el, Latest, show, type Child } from './dom.js';
import { spawnWords } from './fleet-words.js';
import { threadRef } from './ids.js';
import { moment } from './time.js';
import type { AuditRow } from './types.js';

const STEP = 100;
/** Rows kept on the page as the feed grows. */
const KEPT = 1_000;

export class Activity {
  private limit = STEP;
  private filter: ActivityFilter = {};
  private readonly list = byId('activity-list');
  private readonly latest = new Latest();
  /** Rows pushed while a load is on its way: kept if the load's answer was read before them. */
  private arrived: AuditRow[] | null = null;

  constructor(private readonly openThread: (id: string) => void) {
    const form = byId<HTMLFormElement>('activity-filter');
    let typing: number | undefined;
    const changed = (): void => {
      window.clearTimeout(typing);
      typing = window.setTimeout(() => {
        const data = new FormData(form);
        this.filter = { agent: String(data.get('agent') ?? ''), op: String(data.get('op') ?? ''), thread: String(data.get('thread') ?? '') };
        this.limit = STEP;
        void this.load();
      }, 200);
    };
    form.addEventListener('input', changed);
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      changed();
    });
    byId('activity-more').addEventListener('click', () => {
      this.limit = Math.min(KEPT, this.limit + STEP);
      void this.load();
    });
  }

  async load(): Promise<void> {
    this.arrived = [];
    const { current, value } = await this.latest.take(() => getJson<{ rows: AuditRow[] }>('/api/activity', { limit: this.limit, ...this.filter }));
    if (!current) return;
    const arrived = this.arrived ?? [];
    this.arrived = null;
    const shown = new Set(value.rows.map(rowKey));
    // Older rows are there to show only when this many came.
    byId('activity-more').hidden = value.rows.length < this.limit;
    show(this.list, ...value.rows.reverse().map((row) => this.item(row)));
    if (value.rows.length === 0 && arrived.length === 0) show(this.list, el('li', { class: 'muted empty' }, isFiltered(this.filter) ? 'Nothing matches.' : 'Nothing has happened on the bus yet.'));
    for (const row of arrived) if (!shown.has(rowKey(row))) this.push(row);
  }

  /** A row the live feed brought: shown at the top when it matches the filter. */
  push(row: AuditRow): void {
    if (!matchesActivity(row, this.filter)) return;
    this.arrived?.push(row);
    this.list.querySelector(':scope > li.empty')?.remove();
    this.list.prepend(this.item(row));
    while (this.list.childElementCount > KEPT) this.list.lastElementChild?.remove();
  }

  private item(row: AuditRow): HTMLLIElement {
    const spawn = spawnWords(row);
    if (spawn !== null) {
      return el(
        'li',
        { class: `row op-spawn spawn-${String(row.event).replace(/[^a-z-]/g, '')}` },
        moment(row.ts),
        el('span', { class: 'op' }, row.op),
        el('span', { class: 'who' }, spawn.who),
        el('span', { class: 'what' }, ' ', ...spawn.what),
        spawn.prompt ? el('span', { class: 'preview' }, spawn.prompt) : null,
      );
    }
    const reservation = reservationWords(row);
    if (reservation !== null) {
      return el('li', { class: `row op-${row.op}` }, moment(row.ts), el('span', { class: 'op' }, row.op), el('span', { class: 'who' }, reservation.who), el('span', { class: 'what' }, ' ', ...reservation.what));
    }
    const to = row.addressed_to ?? row.to;
    const thread = row.thread_id;
    const status = typeof row.wake_status === 'string' ? row.wake_status : typeof row.event === 'string' ? row.event : null;
    return el(
      'li',
      { class: `row op-${row.op}` },
      moment(row.ts),
      el('span', { class: 'op' }, row.op),
      el('span', { class: 'who' }, row.from || row.actor, to ? ` → ${to}` : ''),
      status ? el('span', { class: 'muted' }, ` ${status}`) : null,
      row.body_preview ? el('span', { class: 'preview' }, row.body_preview) : null,
      thread ? threadLink(thread, this.openThread) : null,
    );
  }
}

function isFiltered(filter: ActivityFilter): boolean {
  return Object.values(filter).some((value) => typeof value === 'string' && value !== '');
}

function field(row: AuditRow, key: string): string {
  const value = row[key];
  return typeof value === 'string' ? value : '';
}

/**
 * A reservation's row in words: who, and what happened to which path of which repo. Rows of
 * `reserve`, `release` and `expire` name the holder (from), the repo (to) and the path (the preview);
 * `deny` and `collision` the writer (actor), the other agent (to) and the file (the preview).
 */
function reservationWords(row: AuditRow): { who: string; what: Child[] } | null {
  const path = row.body_preview ?? '';
  const repo = field(row, 'repo');
  switch (row.op) {
    case 'reserve': {
      const reason = field(row, 'reason');
      const until = field(row, 'expires_at');
      return { who: row.from, what: [`reserved ${path} in ${row.to} (${field(row, 'mode') || 'exclusive'}`, ...(until ? [', ends ', moment(until)] : []), `)${reason ? `: ${reason}` : ''}`] };
    }
    case 'release':
      return { who: row.actor, what: [row.actor === row.from ? `released ${path} in ${row.to}` : `released ${row.from}'s ${path} in ${row.to}`] };
    case 'expire':
      return { who: row.from, what: [`no longer holds ${path} in ${row.to}: expired or its session ended`] };
    case 'deny': {
      const reserved = field(row, 'reserved');
      const until = field(row, 'until');
      return { who: row.actor, what: [`was refused a write of ${path}${repo ? ` in ${repo}` : ''}: ${row.to} holds ${reserved || path}`, ...(until ? [' (ends ', moment(until), ')'] : [])] };
    }
    case 'collision': {
      const otherAt = field(row, 'other_at');
      return { who: row.actor, what: [`wrote ${path}${repo ? ` in ${repo}` : ''}, which ${row.to} also wrote`, ...(otherAt ? [' ', moment(otherAt)] : [])] };
    }
    default:
      return null;
  }
}

/** What tells two audit rows apart (a chained log numbers every row). */
function rowKey(row: AuditRow): string {
  return typeof row.seq === 'number' ? `#${row.seq}` : `${row.ts} ${row.op} ${row.message_id ?? ''} ${row.actor}`;
}

function threadLink(thread: string, open: (id: string) => void): HTMLButtonElement {
  const button = el('button', { type: 'button', class: 'link', 'aria-label': `open thread ${threadRef(thread)}` }, `[${threadRef(thread)}]`);
  button.addEventListener('click', () => open(thread));
  return button;
}
