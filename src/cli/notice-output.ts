/** How the CLI prints notices and channels. */
import type { ChannelView, NoticeView, PublishResult } from '../core/notice-ops.js';
import { oneLine, pad, printable } from '../render/format.js';
import { untilText } from '../model/when.js';
import type { Style } from '../render/style.js';
import { quoted } from '../model/quote.js';

export function channelLabel(channel: string | null): string {
  return channel === null ? '(global)' : printable(channel);
}

function severityLabel(severity: string, style: Style): string {
  const label = severity.toUpperCase();
  return severity === 'critical' ? style.bold(style.warn(label)) : severity === 'alert' ? style.warn(label) : style.dim(label);
}

export function publishedLine(result: PublishResult, style: Style): string {
  const where = result.channel === null ? 'every session (a global notice)' : `channel ${quoted(result.channel)}`;
  const evicted = result.evicted.length > 0 ? `; the channel cap pushed out ${result.evicted.join(', ')}` : '';
  return `published ${severityLabel(result.severity, style)} notice ${result.notice_id} to ${where}; it ${untilText(result.expires_at)}${evicted}\n`;
}

export function channelTable(channels: ChannelView[]): string {
  if (channels.length === 0) return '(no live notices)\n';
  const width = Math.max(10, ...channels.map((row) => channelLabel(row.channel).length + 2));
  const lines = channels.map(
    (row) =>
      `${pad(channelLabel(row.channel), width)}${row.total} notice${row.total === 1 ? '' : 's'}  ` +
      `(${row.critical} critical, ${row.alert} alert, ${row.info} info)  last one ${untilText(row.last_expiry)}`,
  );
  return `${lines.join('\n')}\n`;
}

export function noticeTable(notices: Array<NoticeView & { delivered_to?: number; acknowledged_by?: number }>, style: Style): string {
  if (notices.length === 0) return '(no live notices)\n';
  const lines = notices.map((notice) => {
    const receipts = notice.delivered_to !== undefined ? style.dim(`  shown once to ${notice.delivered_to}, acknowledged by ${notice.acknowledged_by ?? 0}`) : '';
    const title = notice.title ? `${printable(notice.title)}: ` : '';
    return (
      `${notice.notice_id}  ${pad(channelLabel(notice.channel), 12)} ${pad(severityLabel(notice.severity, style), style.enabled ? 0 : 8)} ` +
      `${style.dim(untilText(notice.expires_at))}  ${title}${oneLine(notice.message)} ${style.dim(`(from ${printable(notice.source)})`)}${receipts}`
    );
  });
  return `${lines.join('\n')}\n`;
}
