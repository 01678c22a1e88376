/** Threads: the list, newest first and paged; a thread whole, oldest first, with each recipient's receipt. */
import { getJson } from './api.js';
import { byId, el, Latest, rebuild, show } from './dom.js';
import { shortId, threadRef } from './ids.js';
import { moment } from './time.js';
import { copyWhen, sendState, tick } from './receipts.js';
import type { ThreadSend, ThreadSummary } from './types.js';

const PAGE = 25;
/** Pages read again when the bus moves; older ones stay as they were read. */
const PAGES_KEPT_LIVE = 8;

interface Page {
  threads: ThreadSummary[];
  next: number | null;
}

export class Threads {
  /** Where each loaded page after the first started (its `before`). */
  private cursors: number[] = [];
  private next: number | null = null;
  private open: string | null = null;
  private replyTo = '';
  private readonly list = byId('thread-list');
  private readonly latestList = new Latest();
  private readonly latestThread = new Latest();

  constructor(private readonly replyIn: (threadId: string, to: string) => void) {
    byId('threads-more').addEventListener('click', () => void this.more());
    byId('thread-back').addEventListener('click', () => this.close());
    byId('thread-reply').addEventListener('click', () => {
      if (this.open !== null) this.replyIn(this.open, this.replyTo);
    });
  }

  /** The loaded pages again (the first few), and the open thread. */
  async load(): Promise<void> {
    const { current, value: pages } = await this.latestList.take(async () => {
      const read: Page[] = [await getJson<Page>('/api/threads', { limit: PAGE })];
      for (const before of this.cursors.slice(0, PAGES_KEPT_LIVE - 1)) read.push(await getJson<Page>('/api/threads', { before, limit: PAGE }));
      return read;
    });
    if (!current) return;
    const older = [...this.list.querySelectorAll('li')].slice(pages.reduce((sum, page) => sum + page.threads.length, 0));
    rebuild(this.list, () => show(this.list, ...pages.flatMap((page) => this.items(page.threads)), ...(this.cursors.length >= PAGES_KEPT_LIVE ? older : [])));
    if (pages[0]?.threads.length === 0) show(this.list, el('li', { class: 'muted' }, 'No mail yet. Write to an agent under Compose, or with ', el('code', { class: 'command' }, 'agent-bus send "hello" --to NAME'), '.'));
    if (this.cursors.length < PAGES_KEPT_LIVE) this.setNext(pages.at(-1)?.next ?? null);
    if (this.open !== null) await this.show(this.open, false);
  }

  private async more(): Promise<void> {
    if (this.next === null) return;
    const before = this.next;
    const page = await getJson<Page>('/api/threads', { before, limit: PAGE });
    this.cursors.push(before);
    this.list.append(...this.items(page.threads));
    this.setNext(page.next);
  }

  private setNext(next: number | null): void {
    this.next = next;
    byId<HTMLButtonElement>('threads-more').hidden = next === null;
  }

  private items(threads: ThreadSummary[]): HTMLLIElement[] {
    return threads.map((thread) => {
      const button = el(
        'button',
        { type: 'button', class: 'thread', 'data-thread': thread.threadId, 'data-key': thread.threadId },
        el('span', { class: 'who' }, `${thread.last.from} → ${thread.last.to}`),
        el('span', { class: 'muted' }, ` ${thread.sends} message${thread.sends === 1 ? '' : 's'} · `, moment(thread.lastSentAt)),
        thread.unread > 0 ? el('span', { class: 'badge' }, `${thread.unread} unread`) : null,
        el('span', { class: 'preview' }, thread.last.preview),
      );
      button.addEventListener('click', () => void this.show(thread.threadId));
      return el('li', {}, button);
    });
  }

  /** Show a thread; `focus` moves the keyboard to it (not when the bus's changes redraw it). */
  async show(threadId: string, focus = true): Promise<void> {
    this.open = threadId;
    const { current, value } = await this.latestThread.take(() => getJson<{ sends: ThreadSend[]; truncated: boolean }>('/api/thread', { id: threadId }));
    // Another thread was opened meanwhile, or this one was closed.
    if (!current || this.open !== threadId) return;
    const first = value.sends[0];
    this.replyTo = first === undefined ? '' : first.from;
    show(byId('thread-title'), `Thread ${threadRef(threadId)}`, first ? ` · started by ${first.from}` : '');
    show(
      byId('thread-sends'),
      ...value.sends.map((send) => sendItem(send)),
      value.truncated ? el('li', { class: 'muted' }, 'The thread goes on: its first messages are shown (agent-bus tail or the MCP tools read it all).') : null,
    );
    byId('thread-list-view').hidden = true;
    byId('thread-view').hidden = false;
    if (focus) byId('thread-title').focus();
  }

  close(): void {
    const was = this.open;
    this.open = null;
    byId('thread-view').hidden = true;
    byId('thread-list-view').hidden = false;
    [...this.list.querySelectorAll<HTMLElement>('button.thread')].find((button) => button.dataset.thread === was)?.focus();
  }
}

function sendItem(send: ThreadSend): HTMLLIElement {
  const more = send.copyCount - send.copies.length;
  const counts = send.copyCount === 1 ? '' : ` (${send.deliveredCount} of ${send.copyCount} delivered, ${send.readCount} read)`;
  return el(
    'li',
    { class: 'send' },
    el(
      'p',
      { class: 'head' },
      el('strong', {}, send.from),
      ` → ${send.to}`,
      ' ',
      moment(send.sentAt, { class: 'muted' }),
      send.copies.length === 1 && send.copyCount === 1 ? el('span', { class: 'muted id' }, ` ${shortId(send.copies[0]?.messageId)}`) : null,
      ' ',
      send.urgent ? el('span', { class: 'urgent', title: "shown at the recipient's next tool call" }, 'urgent') : null,
      send.urgent ? ' ' : null,
      tick(sendState(send), `${sendState(send)}${counts}`),
    ),
    el('p', { class: 'body' }, send.body),
    send.claimedBy !== null ? el('p', { class: 'claim' }, `claimed by ${send.claimedBy}`) : null,
    el(
      'ul',
      { class: 'copies', 'aria-label': 'receipt per recipient' },
      ...send.copies.map((copy) => el('li', { 'data-to': copy.to }, tick(copy.state, `${copy.to}: `, ...copyWhen(copy)))),
      more > 0 ? el('li', {}, `and ${more} more recipients`) : null,
    ),
  );
}
