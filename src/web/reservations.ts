/**
 * Reservations: every live one with its holder, repo, paths, mode, since, until and reason, its
 * time left counting down; the person at the bus's own machine releases anyone's, a token its own.
 * First thing on the page, each in a line: who holds what, and for how long yet.
 */
import { ApiError, getJson, postJson } from './api.js';
import { byId, el, show } from './dom.js';
import { moment, remaining } from './time.js';
import { stampMillis } from '../model/when.js';
import type { Reservation } from './types.js';

/** Reservations listed first thing on the page; the rest are in the Reservations panel. */
const HELD_SHOWN = 5;

/** A reservation in a line: who holds which path of which repo, how, and the time it has left. */
function line(reservation: Reservation, now: number): HTMLLIElement {
  return el(
    'li',
    { class: `held ${reservation.mode}`, 'data-reservation': reservation.id },
    el('span', { class: 'who' }, reservation.holder),
    ' holds ',
    el('code', {}, reservation.path),
    ` in ${reservation.repo} `,
    el('span', { class: 'muted' }, `· ${reservation.mode} · `, el('span', { class: 'ttl', 'data-until': reservation.until }, remaining(stampMillis(reservation.until) - now)), ' left'),
  );
}

export class Reservations {
  private reservations: Reservation[] = [];
  /** The server's clock less the browser's, so a countdown is right on a machine whose clock is off. */
  private skew = 0;
  private mayReleaseAny = false;
  private me = '';
  private readonly list = byId('reservation-list');
  /** The same reservations, a line each, among what needs a person. */
  private readonly held = byId('held-list');
  private readonly result = byId('reservation-result');

  constructor() {
    // The countdown: each reservation's time left, and one gone once it has run out.
    window.setInterval(() => this.tick(), 1000);
  }

  /** Who the page speaks as, and whether it may release others' reservations. */
  releasing(me: string, anyone: boolean): void {
    this.me = me;
    this.mayReleaseAny = anyone;
  }

  async load(): Promise<void> {
    const answer = await getJson<{ now: string; reservations: Reservation[] }>('/api/reservations');
    this.skew = stampMillis(answer.now) - Date.now();
    this.reservations = answer.reservations.sort((a, b) => a.repo.localeCompare(b.repo) || a.until.localeCompare(b.until) || a.path.localeCompare(b.path));
    this.render();
  }

  private render(): void {
    const now = Date.now() + this.skew;
    const live = this.reservations.filter((reservation) => stampMillis(reservation.until) > now);
    show(byId('reservations-summary'), live.length === 0 ? '' : `${live.length} live, in ${new Set(live.map((reservation) => reservation.repo)).size} repo(s).`);
    show(byId('held-count'), String(live.length));
    if (live.length === 0) {
      show(this.list, el('li', { class: 'muted' }, 'No live reservations.'));
      show(this.held, el('li', { class: 'muted' }, 'None: no file is reserved.'));
      return;
    }
    show(this.list, ...live.map((reservation) => this.item(reservation, now)));
    const rest = live.length - HELD_SHOWN;
    show(
      this.held,
      ...live.slice(0, HELD_SHOWN).map((reservation) => line(reservation, now)),
      rest > 0 ? el('li', { class: 'muted' }, `and ${rest} more under Reservations below`) : null,
    );
  }

  private item(reservation: Reservation, now: number): HTMLLIElement {
    const mayRelease = this.mayReleaseAny || reservation.holder === this.me;
    const release = mayRelease
      ? el('button', { type: 'button', class: 'small', 'aria-label': `Release ${reservation.holder}'s reservation of ${reservation.path} in ${reservation.repo}` }, 'Release')
      : null;
    release?.addEventListener('click', () => void this.release(reservation, release));
    return el(
      'li',
      { class: `reservation ${reservation.mode}`, 'data-reservation': reservation.id },
      el('div', { class: 'row' }, el('span', { class: 'who holder' }, reservation.holder), el('span', { class: 'badge mode' }, reservation.mode), el('span', { class: 'repo-name muted' }, `in ${reservation.repo}`)),
      el('code', { class: 'path' }, reservation.path),
      reservation.reason ? el('p', { class: 'reason' }, reservation.reason) : null,
      el(
        'div',
        { class: 'row times' },
        el('span', { class: 'muted' }, 'since ', moment(reservation.since, { class: 'since' })),
        el('span', { class: 'muted' }, 'ends ', moment(reservation.until, { class: 'until' })),
        el('span', { class: 'ttl', 'data-until': reservation.until, title: 'time left' }, remaining(stampMillis(reservation.until) - now)),
        release,
      ),
    );
  }

  private tick(): void {
    const now = Date.now() + this.skew;
    let expired = false;
    for (const ttl of [...this.list.querySelectorAll<HTMLElement>('.ttl'), ...this.held.querySelectorAll<HTMLElement>('.ttl')]) {
      const left = stampMillis(ttl.dataset.until ?? '') - now;
      if (left <= 0) expired = true;
      else ttl.textContent = remaining(left);
    }
    if (!expired) return;
    this.render();
    // Read again: the server ends what has run out (an expire row in Activity) and says what is left.
    void this.load().catch(() => undefined);
  }

  private async release(reservation: Reservation, button: HTMLButtonElement): Promise<void> {
    button.disabled = true;
    try {
      const answer = await postJson<{ released: Reservation[] }>('/api/reservations/release', { reservation_id: reservation.id });
      this.result.className = 'ok';
      show(this.result, answer.released.length === 0 ? `${reservation.path} was no longer held.` : `Released ${reservation.holder}'s ${reservation.path} in ${reservation.repo}.`);
    } catch (error) {
      this.result.className = 'error';
      show(this.result, error instanceof ApiError ? error.message : 'The dashboard could not be reached.');
    }
    await this.load().catch(() => undefined);
  }
}
