/**
 * The signed-in person's unread mail, first thing on the page: who wrote, when, and the start of
 * what they wrote, newest first. Opening one shows its thread (which marks the copy delivered, as
 * any thread drawn for its reader does); `agent-bus inbox` reads it.
 */
import { getJson } from './api.js';
import { byId, el, Latest, show } from './dom.js';
import { messageRef } from './ids.js';
import { moment } from './time.js';
import type { Message } from './types.js';

/** Messages listed; the count says how many more there are. */
const SHOWN = 5;
/** The start of a body shown in a line. */
const PREVIEW = 160;

export class MyMail {
  private readonly list = byId('my-mail-list');
  private readonly latest = new Latest();

  constructor(
    name: string,
    private readonly openThread: (threadId: string) => void,
  ) {
    show(byId('my-mail-heading'), `Unread mail to ${name}`);
  }

  async load(): Promise<void> {
    const { current, value } = await this.latest.take(() => getJson<{ name: string; messages: Message[] }>('/api/inbox'));
    if (!current) return;
    const messages = value.messages.slice().sort((a, b) => b.sent_at.localeCompare(a.sent_at));
    show(byId('my-mail-count'), String(messages.length));
    if (messages.length === 0) {
      show(this.list, el('li', { class: 'muted' }, 'None: you have read everything.'));
      return;
    }
    const rest = messages.length - SHOWN;
    show(this.list, ...messages.slice(0, SHOWN).map((message) => this.item(message)), rest > 0 ? el('li', { class: 'muted' }, `and ${rest} more (agent-bus inbox reads them all)`) : null);
  }

  private item(message: Message): HTMLLIElement {
    const firstLine = message.body.trim().split('\n')[0] ?? '';
    const preview = firstLine.length > PREVIEW ? `${firstLine.slice(0, PREVIEW - 1)}…` : firstLine;
    const open = el('button', { type: 'button', class: 'link mail', 'data-thread': message.thread_id, 'aria-label': `open the thread of ${message.from}'s message: ${preview}` }, preview || '(no text)');
    open.addEventListener('click', () => this.openThread(message.thread_id));
    return el(
      'li',
      { class: 'mail-item', 'data-message': message.message_id },
      open,
      el('span', { class: 'muted' }, `from ${message.from}${message.kind === 'direct' ? '' : ` to ${message.addressed_to ?? message.to}`} · `, moment(message.sent_at), ' · ', el('span', { class: 'id' }, messageRef(message))),
      message.urgent ? el('span', { class: 'urgent' }, 'urgent') : null,
    );
  }
}
