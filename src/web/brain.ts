/** The brain: its source, last fetch, content hash, entries and warnings; a refresh on demand. */
import { ApiError, getJson, postJson } from './api.js';
import { byId, el, show, type Child } from './dom.js';
import { moment } from './time.js';

interface BrainStatus {
  enabled: boolean;
  enabled_because: string;
  source_type: string;
  source_location: string;
  channel: string;
  entry_count: number;
  live_notices: number;
  content_hash: string | null;
  last_fetch_at: string | null;
  last_ok_at: string | null;
  last_error: string | null;
  warnings: string[];
}

export class Brain {
  constructor() {
    byId('brain-refresh').addEventListener('click', () => void this.refresh());
  }

  async load(): Promise<void> {
    const status = await getJson<BrainStatus>('/api/brain');
    const facts: Array<[string, Child]> = [
      ['Enabled', `${status.enabled ? 'yes' : 'no'} (${status.enabled_because})`],
      ['Source', `${status.source_type}: ${status.source_location}`],
      ['Channel', status.channel],
      ['Entries', `${status.entry_count} (${status.live_notices} live notices)`],
      ['Content hash', status.content_hash === null ? 'none yet' : status.content_hash.slice(0, 16)],
      ['Last fetch', status.last_fetch_at === null ? 'never' : moment(status.last_fetch_at)],
      ['Last good fetch', status.last_ok_at === null ? 'never' : moment(status.last_ok_at)],
    ];
    if (status.last_error) facts.push(['Last error', status.last_error]);
    show(byId('brain-facts'), ...facts.flatMap(([term, value]) => [el('dt', {}, term), el('dd', {}, value)]));
    show(byId('brain-warnings'), ...status.warnings.map((warning) => el('li', { class: 'warning' }, warning)));
  }

  private async refresh(): Promise<void> {
    const result = byId('brain-result');
    show(result, 'Refreshing…');
    try {
      const outcome = await postJson<{ outcome?: string; entries?: number }>('/api/brain/refresh', {});
      result.className = 'ok';
      show(result, `Refreshed${outcome.outcome ? `: ${outcome.outcome}` : ''}.`);
      await this.load();
    } catch (error) {
      result.className = 'error';
      show(result, error instanceof ApiError ? error.message : 'The dashboard could not be reached.');
    }
  }
}
