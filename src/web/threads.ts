/** Threads: the list, newest first and paged; a thread whole, oldest first, with each recipient's read state. */
import { getJson } from './api.js';
import { byId, el, show } from './dom.js';
import { ago, clock, shortId } from './time.js';
import type { ThreadSend, ThreadSummary } from './types.js';

const PAGE = 25;

export class Threads {
  private shown = new Set<string>();
  private next: number | null = null;
  private loaded = PAGE;
  private open: string | null = null;
  private readonly list = byId('thread-list');

  constructor(private readonly replyIn: (threadId: string, to: string) => void) {
    byId('threads-more').addEventListener('click', () => void this.more());
    byId('thread-back').addEventListener('click', () => this.close());
    byId('thread-reply').addEventListener('click', () => {
      if (this.open !== null) this.replyIn(this.open, this.replyTo);
    });
  }

  private replyTo = '';

  get openThread(): string | null {
    return this.open;
  }

  /** The newest threads again (as many as were loaded), and the open one. */
  async load(): Promise<void> {
    const page = await getJson<{ threads: ThreadSummary[]; next: number | null }>('/api/threads', { limit: Math.max(PAGE, this.loaded) });
    this.shown = new Set();
    show(this.list, ...this.items(page.threads));
    this.next = page.next;
    byId<HTMLButtonElement>('threads-more').hidden = page.next === null;
    if (this.open !== null) await this.show(this.open);
  }

  private async more(): Promise<void> {
    if (this.next === null) return;
    const page = await getJson<{ threads: ThreadSummary[]; next: number | null }>('/api/threads', { before: this.next, limit: PAGE });
    this.list.append(...this.items(page.threads));
    this.loaded += PAGE;
    this.next = page.next;
    byId<HTMLButtonElement>('threads-more').hidden = page.next === null;
  }

  private items(threads: ThreadSummary[]): HTMLLIElement[] {
    const items: HTMLLIElement[] = [];
    for (const thread of threads) {
      // A thread seen on an earlier page has older mail on a later one: each is listed once.
      if (this.shown.has(thread.threadId)) continue;
      this.shown.add(thread.threadId);
      const button = el(
        'button',
        { type: 'button', class: 'thread', 'data-thread': thread.threadId },
        el('span', { class: 'who' }, `${thread.last.from} → ${thread.last.to}`),
        el('span', { class: 'muted' }, ` ${thread.sends} message${thread.sends === 1 ? '' : 's'} · ${ago(thread.lastSentAt)}`),
        thread.unread > 0 ? el('span', { class: 'badge' }, `${thread.unread} unread`) : null,
        el('span', { class: 'preview' }, thread.last.preview),
      );
      button.addEventListener('click', () => void this.show(thread.threadId));
      items.push(el('li', {}, button));
    }
    return items;
  }

  async show(threadId: string): Promise<void> {
    this.open = threadId;
    const { sends } = await getJson<{ sends: ThreadSend[] }>('/api/thread', { id: threadId });
    const first = sends[0];
    this.replyTo = first === undefined ? '' : first.from;
    show(byId('thread-title'), `Thread ${shortId(threadId)}`, first ? ` · started by ${first.from}` : '');
    show(byId('thread-sends'), ...sends.map((send) => sendItem(send)));
    byId('thread-list-view').hidden = true;
    byId('thread-view').hidden = false;
  }

  close(): void {
    this.open = null;
    byId('thread-view').hidden = true;
    byId('thread-list-view').hidden = false;
  }
}

function sendItem(send: ThreadSend): HTMLLIElement {
  const claimed = send.kind === 'group' ? send.copies.find((copy) => copy.claimedBy !== null)?.claimedBy ?? null : null;
  return el(
    'li',
    { class: 'send' },
    el('p', { class: 'head' }, el('strong', {}, send.from), ` → ${send.to}`, el('time', { datetime: send.sentAt, class: 'muted' }, ` ${clock(send.sentAt)}`)),
    el('p', { class: 'body' }, send.body),
    claimed !== null ? el('p', { class: 'claim' }, `claimed by ${claimed}`) : null,
    el(
      'ul',
      { class: 'copies', 'aria-label': 'read state per recipient' },
      ...send.copies.map((copy) =>
        el('li', { class: copy.readAt ? 'read' : copy.deliveredAt ? 'delivered' : 'unread' }, copy.to, ': ', copy.readAt ? `read ${clock(copy.readAt)}` : copy.deliveredAt ? `delivered ${clock(copy.deliveredAt)}` : 'unread'),
      ),
    ),
  );
}
