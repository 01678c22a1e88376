/**
 * Collisions of the last day, first thing on the page: two agents that wrote the same file within
 * the collision window (the pre-tool hook records each as an audit row), newest first.
 */
import { getJson } from './api.js';
import { byId, el, Latest, show } from './dom.js';
import { moment } from './time.js';
import { stampMillis } from '../model/when.js';
import type { AuditRow } from './types.js';

/** How far back a collision is still worth a person's look. */
const WITHIN_MS = 24 * 3_600_000;
/** Rows asked for, and listed. */
const ASKED = 50;
const SHOWN = 5;

export class Collisions {
  private readonly list = byId('collision-list');
  private readonly latest = new Latest();

  async load(): Promise<void> {
    const { current, value } = await this.latest.take(() => getJson<{ rows: AuditRow[] }>('/api/activity', { op: 'collision', limit: ASKED }));
    if (!current) return;
    const since = Date.now() - WITHIN_MS;
    const recent = value.rows.filter((row) => row.op === 'collision' && stampMillis(row.ts) >= since).reverse();
    show(byId('collision-count'), String(recent.length));
    if (recent.length === 0) {
      show(this.list, el('li', { class: 'muted' }, 'None in the last day.'));
      return;
    }
    const rest = recent.length - SHOWN;
    show(this.list, ...recent.slice(0, SHOWN).map((row) => item(row)), rest > 0 ? el('li', { class: 'muted' }, `and ${rest} more in Activity below`) : null);
  }
}

/** A collision in a line: which file of which repo, which two agents, and when. */
function item(row: AuditRow): HTMLLIElement {
  const repo = typeof row.repo === 'string' ? row.repo : '';
  return el(
    'li',
    { class: 'collision' },
    el('code', {}, row.body_preview ?? ''),
    repo ? ` in ${repo}: ` : ': ',
    el('span', { class: 'who' }, row.actor),
    ' and ',
    el('span', { class: 'who' }, row.to),
    ' both wrote it · ',
    moment(row.ts),
  );
}
