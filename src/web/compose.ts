/**
 * Compose: mail from the signed-in human, with completion of names, repos and `*`, validated as
 * the CLI does. The last message sent shows its receipt, ticked on as the bus moves.
 */
import { ApiError, getJson, postJson } from './api.js';
import { byId, el, Latest, show } from './dom.js';
import { tick } from './receipts.js';
import type { MessageStatus } from './types.js';

interface Sent {
  to: string;
  kind: string;
  recipients: string[];
  message_ids: string[];
  fanout_id: string | null;
  thread_id: string | null;
}

export class Compose {
  private readonly to = byId<HTMLInputElement>('compose-to');
  private readonly body = byId<HTMLTextAreaElement>('compose-body');
  private readonly thread = byId<HTMLInputElement>('compose-thread');
  private readonly urgent = byId<HTMLInputElement>('compose-urgent');
  private readonly result = byId('compose-result');
  /** The last send (its fan-out's id, else its message's) and what the page said of it. */
  private lastSent: { id: string; said: string } | null = null;
  private readonly latestStatus = new Latest();

  constructor(private readonly sent: () => void) {
    let typing: number | undefined;
    this.to.addEventListener('input', () => {
      window.clearTimeout(typing);
      typing = window.setTimeout(() => void this.complete(), 120);
    });
    this.to.addEventListener('focus', () => void this.complete());
    byId<HTMLFormElement>('compose-form').addEventListener('submit', (event) => {
      event.preventDefault();
      void this.send();
    });
  }

  private readonly latest = new Latest();

  private async complete(): Promise<void> {
    const { current, value } = await this.latest.take(() => getJson<{ names: string[] }>('/api/names', { q: this.to.value }));
    if (current) show(byId('compose-names'), ...value.names.map((name) => el('option', { value: name })));
  }

  /** Reply in a thread: its id in the form, its starter as the recipient. */
  replyIn(threadId: string, to: string): void {
    this.thread.value = threadId;
    if (to !== '') this.to.value = to;
    this.body.focus();
  }

  private async send(): Promise<void> {
    this.result.className = '';
    show(this.result, 'Sending…');
    try {
      const sent = await postJson<Sent>('/api/send', { to: this.to.value.trim(), body: this.body.value, thread_id: this.thread.value.trim() || null, urgent: this.urgent.checked });
      const said = sent.recipients.length === 0 ? `Nobody else is in ${sent.to}: nothing was sent.` : `Sent to ${sent.recipients.length === 1 ? sent.recipients[0] : `${sent.to} (${sent.recipients.length})`}.`;
      const id = sent.fanout_id ?? sent.message_ids[0];
      this.lastSent = id === undefined ? null : { id, said };
      show(this.result, said, ' ', id === undefined ? null : tick('sent'));
      this.result.className = 'ok';
      this.body.value = '';
      this.urgent.checked = false;
      this.sent();
    } catch (error) {
      this.result.className = 'error';
      this.lastSent = null;
      show(this.result, error instanceof ApiError ? error.message : 'The dashboard could not be reached; nothing was sent.');
    }
  }

  /** The last send's receipt read again (the bus moved): sent ✓, delivered ✓✓, read. */
  async refresh(): Promise<void> {
    const last = this.lastSent;
    if (last === null) return;
    const { current, value } = await this.latestStatus.take(() => getJson<MessageStatus>('/api/status', { id: last.id }));
    if (!current || this.lastSent !== last) return;
    const counts = value.recipients === 1 ? '' : ` (${value.delivered} of ${value.recipients} delivered, ${value.read} read)`;
    show(this.result, last.said, ' ', tick(value.state, `${value.state}${counts}`));
  }
}
