/**
 * Integrations: each one in or out (never a secret; a receiver's URL masked) with how its deliveries
 * stand, the deliveries that came in, and the events out with their attempts; a failed one retried.
 */
import { ApiError, getJson, postJson } from './api.js';
import { byId, el, show } from './dom.js';
import { moment } from './time.js';
import type { AuditRow, Integration, OutboxEvent } from './types.js';

interface IntegrationsAnswer {
  integrations: Integration[];
  in: AuditRow[];
  out: OutboxEvent[];
}

export class Integrations {
  private readonly result = byId('integration-result');

  async load(): Promise<void> {
    const answer = await getJson<IntegrationsAnswer>('/api/integrations');
    show(
      byId('integration-list'),
      ...(answer.integrations.length === 0
        ? [el('li', { class: 'muted' }, 'No integrations: agent-bus integration add sets one up.')]
        : answer.integrations.map((row) => this.integration(row))),
    );
    show(
      byId('integration-in'),
      ...(answer.in.length === 0
        ? [el('li', { class: 'muted' }, 'No deliveries in yet.')]
        : answer.in
            .slice()
            .reverse()
            .map((row) => el('li', {}, moment(row.ts), ' ', el('span', { class: 'name' }, String(row.op === 'integration' ? row.integration : row.actor)), ' ', el('span', { class: 'badge' }, row.op === 'integration' ? String(row.event) : row.op === 'send' ? 'mail' : 'notice'), ' ', el('span', { class: 'muted' }, String(row.body_preview ?? ''))))),
    );
    show(byId('integration-out'), ...(answer.out.length === 0 ? [el('li', { class: 'muted' }, 'No events out yet.')] : answer.out.map((event) => this.event(event))));
  }

  private integration(row: Integration): HTMLLIElement {
    const what = row.direction === 'out' ? `on ${row.on ?? ''}${row.channel === null ? '' : ` #${row.channel}`} → ${row.url ?? ''}` : `→ ${row.channel === null ? row.to : `#${row.channel}`} at ${row.path ?? ''}`;
    const standing = row.direction === 'out' ? `${row.delivered} delivered, ${row.queued} queued, ${row.failed} failed` : '';
    return el(
      'li',
      { class: `integration ${row.direction}`, 'data-integration': row.name },
      el('div', { class: 'row' }, el('span', { class: 'name' }, row.name), el('span', { class: 'badge' }, `${row.kind} (${row.direction})`), row.failed > 0 ? el('span', { class: 'badge failed' }, `${row.failed} failed`) : null),
      el('code', {}, what),
      standing === '' ? null : el('p', { class: 'muted standing' }, standing),
    );
  }

  private event(event: OutboxEvent): HTMLLIElement {
    const retry = event.state === 'failed' ? el('button', { type: 'button', class: 'small', 'aria-label': `Retry ${event.integration}'s ${event.event} event ${event.event_id}` }, 'Retry') : null;
    retry?.addEventListener('click', () => void this.retry(event, retry));
    const when = event.state === 'queued' ? event.next_at : event.finished_at;
    return el(
      'li',
      { class: `outbox ${event.state}`, 'data-event': event.event_id },
      el('div', { class: 'row' }, el('span', { class: 'name' }, event.integration), el('span', { class: 'badge state' }, event.state), el('span', { class: 'muted' }, `${event.event}, ${event.attempts} attempt${event.attempts === 1 ? '' : 's'}${event.last_status === null ? '' : `, status ${event.last_status}`}`)),
      event.state !== 'delivered' && event.last_error !== null ? el('p', { class: 'error-text' }, event.last_error) : null,
      el('div', { class: 'row times' }, when === null ? null : moment(when), retry),
    );
  }

  private async retry(event: OutboxEvent, button: HTMLButtonElement): Promise<void> {
    button.disabled = true;
    try {
      await postJson('/api/integrations/retry', { event_id: event.event_id });
      this.result.className = 'ok';
      show(this.result, `Queued ${event.integration}'s ${event.event} event again.`);
    } catch (error) {
      this.result.className = 'error';
      show(this.result, error instanceof ApiError ? error.message : 'The dashboard could not be reached.');
    }
    await this.load().catch(() => undefined);
  }
}
