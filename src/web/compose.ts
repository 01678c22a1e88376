/** Compose: mail from the signed-in human, with completion of names, repos and `*`, validated as the CLI does. */
import { ApiError, getJson, postJson } from './api.js';
import { byId, el, Latest, show } from './dom.js';

interface Sent {
  to: string;
  kind: string;
  recipients: string[];
  thread_id: string | null;
}

export class Compose {
  private readonly to = byId<HTMLInputElement>('compose-to');
  private readonly body = byId<HTMLTextAreaElement>('compose-body');
  private readonly thread = byId<HTMLInputElement>('compose-thread');
  private readonly result = byId('compose-result');

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
      const sent = await postJson<Sent>('/api/send', { to: this.to.value.trim(), body: this.body.value, thread_id: this.thread.value.trim() || null });
      show(this.result, sent.recipients.length === 0 ? `Nobody else is in ${sent.to}: nothing was sent.` : `Sent to ${sent.recipients.length === 1 ? sent.recipients[0] : `${sent.to} (${sent.recipients.length})`}.`);
      this.result.className = 'ok';
      this.body.value = '';
      this.sent();
    } catch (error) {
      this.result.className = 'error';
      show(this.result, error instanceof ApiError ? error.message : 'The dashboard could not be reached; nothing was sent.');
    }
  }
}
