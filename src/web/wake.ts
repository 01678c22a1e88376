/** Wake: the entries of wake.json and the recent wake rows with their statuses. */
import { getJson } from './api.js';
import { byId, el, show } from './dom.js';
import { moment } from './time.js';
import type { AuditRow } from './types.js';

interface WakeAnswer {
  path: string;
  exists: boolean;
  problem: string | null;
  entries: Record<string, string | false>;
  rows: AuditRow[];
}

export class Wake {
  async load(): Promise<void> {
    const wake = await getJson<WakeAnswer>('/api/wake');
    show(byId('wake-file'), wake.exists ? wake.path : `${wake.path} does not exist: no agent is woken by a command.`, wake.problem ? ` It cannot be used: ${wake.problem}.` : '');
    const entries = Object.entries(wake.entries);
    show(
      byId('wake-entries'),
      ...entries.map(([key, command]) => el('li', {}, el('span', { class: 'name' }, key), ' ', command === false ? el('span', { class: 'muted' }, 'off') : el('code', {}, command))),
    );
    show(
      byId('wake-rows'),
      ...(wake.rows.length === 0
        ? [el('li', { class: 'muted' }, 'No wakes yet.')]
        : wake.rows
            .reverse()
            .map((row) => el('li', {}, moment(row.ts), ` ${row.to} `, el('span', { class: 'badge' }, String(row.wake_status ?? '')), el('span', { class: 'muted' }, ` ${String(row.wake_driver ?? '')}`)))),
    );
  }
}
