/** Notices: live ones by channel and severity, their TTL counting down; publish and clear. */
import { ApiError, getJson, postJson } from './api.js';
import { byId, el, show } from './dom.js';
import { remaining } from './time.js';
import { stampMillis } from '../model/when.js';
import type { Notice } from './types.js';

const SEVERITY_ORDER = { critical: 0, alert: 1, info: 2 } as const;

export class Notices {
  private notices: Notice[] = [];
  /** The server's clock less the browser's, so a countdown is right on a machine whose clock is off. */
  private skew = 0;
  private mayClear = false;
  private readonly list = byId('notice-list');

  constructor() {
    byId<HTMLFormElement>('notice-form').addEventListener('submit', (event) => {
      event.preventDefault();
      void this.publish(event.target as HTMLFormElement);
    });
    // The countdown: each notice's remaining time, and a notice gone once its TTL has run out.
    window.setInterval(() => this.tick(), 1000);
  }

  set clearing(allowed: boolean) {
    this.mayClear = allowed;
  }

  async load(): Promise<void> {
    const answer = await getJson<{ now: string; notices: Notice[] }>('/api/notices');
    this.skew = stampMillis(answer.now) - Date.now();
    this.notices = answer.notices.sort((a, b) => (a.channel ?? '').localeCompare(b.channel ?? '') || SEVERITY_ORDER[a.severity] - SEVERITY_ORDER[b.severity] || a.created_at.localeCompare(b.created_at));
    this.render();
  }

  private render(): void {
    const now = Date.now() + this.skew;
    const live = this.notices.filter((notice) => stampMillis(notice.expires_at) > now);
    if (live.length === 0) {
      show(this.list, el('li', { class: 'muted' }, 'No live notices.'));
      return;
    }
    show(
      this.list,
      ...live.map((notice) => {
        const clear = this.mayClear ? el('button', { type: 'button', class: 'small', 'aria-label': `Clear the ${notice.severity} notice on ${notice.channel ?? 'everyone'}: ${notice.message.slice(0, 60)}` }, 'Clear') : null;
        clear?.addEventListener('click', () => void this.clear(notice.notice_id));
        return el(
          'li',
          { class: `notice ${notice.severity}`, 'data-notice': notice.notice_id },
          el('span', { class: `severity ${notice.severity}` }, notice.severity),
          el('span', { class: 'channel' }, notice.channel ?? 'everyone'),
          el('span', { class: 'ttl', 'data-expires': notice.expires_at }, remaining(stampMillis(notice.expires_at) - now)),
          el('p', { class: 'body' }, notice.title ? `${notice.title}: ${notice.message}` : notice.message),
          el('span', { class: 'muted' }, `from ${notice.source} · shown to ${notice.delivered_to}, acknowledged by ${notice.acknowledged_by}`),
          clear,
        );
      }),
    );
  }

  private tick(): void {
    const now = Date.now() + this.skew;
    let expired = false;
    for (const ttl of this.list.querySelectorAll<HTMLElement>('.ttl')) {
      const left = stampMillis(ttl.dataset.expires ?? '') - now;
      if (left <= 0) expired = true;
      else ttl.textContent = remaining(left);
    }
    if (expired) this.render();
  }

  private async publish(form: HTMLFormElement): Promise<void> {
    const data = new FormData(form);
    const result = byId('notice-result');
    try {
      await postJson('/api/notices', { channel: String(data.get('channel') ?? '').trim() || null, severity: data.get('severity'), ttl: String(data.get('ttl') ?? '').trim() || null, message: data.get('message') });
      result.className = 'ok';
      show(result, 'Published.');
      byId<HTMLTextAreaElement>('notice-message').value = '';
      await this.load();
    } catch (error) {
      result.className = 'error';
      show(result, error instanceof ApiError ? error.message : 'The dashboard could not be reached.');
    }
  }

  private async clear(noticeId: string): Promise<void> {
    try {
      await postJson('/api/notices/clear', { notice_id: noticeId });
      await this.load();
    } catch (error) {
      const result = byId('notice-result');
      result.className = 'error';
      show(result, error instanceof ApiError ? error.message : 'The dashboard could not be reached.');
    }
  }
}
