/**
 * What the chat prints: send rows in aligned columns, arrivals, notices. A
 * body's later lines are indented under its first, so no body can pass for a
 * line of its own (a forged arrival or a `[chat]` reply).
 */
import { clockTime, displayWidth, oneLine, padStyled, printable, shortIdText, singleLine } from '../render/format.js';
import type { Style } from '../render/style.js';
import type { NoticeView } from '../core/notice-ops.js';
import type { MessageView } from '../core/views.js';

const CONTINUATION = '    ';

/** A body for the screen: control characters made visible, later lines indented. */
export function indentedBody(body: string): string {
  return printable(body.replace(/\r\n?/g, '\n')).split('\n').join(`\n${CONTINUATION}`);
}

/** One send as the bus stored it: a fan-out's rows (one per recipient) are one send. */
export interface SendRow {
  first: MessageView;
  recipients: number;
}

/** Group a fan-out's rows, which share their sender, address, thread and time. */
export function groupSends(messages: MessageView[]): SendRow[] {
  const rows: SendRow[] = [];
  for (const message of messages) {
    const last = rows.at(-1);
    const sameSend =
      last !== undefined &&
      message.kind !== 'direct' &&
      last.first.kind === message.kind &&
      last.first.from === message.from &&
      last.first.addressed_to === message.addressed_to &&
      last.first.thread_id === message.thread_id &&
      last.first.sent_at === message.sent_at;
    if (sameSend) last.recipients++;
    else rows.push({ first: message, recipients: 1 });
  }
  return rows;
}

function target(row: SendRow): string {
  const { first } = row;
  if (first.kind === 'direct') return first.to;
  return `${first.addressed_to === '*' ? 'all' : (first.addressed_to ?? first.to)} (${row.recipients})`;
}

/**
 * Sends in aligned columns, as in the spec's "recent activity". `full` keeps
 * whole bodies (a thread being read again); otherwise each is cut to a line.
 */
export function sendLines(rows: SendRow[], style: Style, full = false): string {
  const widest = (pick: (row: SendRow) => string): number => Math.max(0, ...rows.map((row) => displayWidth(printable(pick(row)))));
  const fromWidth = widest((row) => row.first.from);
  const toWidth = widest(target);
  return rows
    .map((row) => {
      const { first } = row;
      const from = padStyled(style.agent(first.from), printable(first.from), fromWidth);
      const to = padStyled(first.kind === 'direct' ? style.agent(first.to) : printable(target(row)), printable(target(row)), toWidth);
      const body = full ? indentedBody(first.body) : oneLine(first.body);
      return `  ${style.dim(clockTime(first.sent_at))}  ${from} → ${to}  ${body} ${style.dim(`[${shortIdText(first.thread_id)}]`)}`;
    })
    .join('\n');
}

/** `<alpha → human> [c7a3b2f0] body` */
export function arrivalLine(message: MessageView, reader: string, style: Style): string {
  return `<${style.agent(message.from)} → ${style.agent(reader)}> ${style.dim(`[${shortIdText(message.thread_id)}]`)} ${indentedBody(message.body)}`;
}

/** `[CRITICAL] #deploy from operator: Title — body` */
export function noticeLine(notice: NoticeView, style: Style): string {
  const label = notice.severity === 'critical' ? style.bold(style.warn('[CRITICAL]')) : style.warn('[ALERT]');
  const where = notice.channel === null ? 'global' : `#${singleLine(notice.channel)}`;
  const title = notice.title ? `${style.bold(singleLine(notice.title))} — ` : '';
  return `${label} ${where} from ${singleLine(notice.source)}: ${title}${indentedBody(notice.message)}`;
}
