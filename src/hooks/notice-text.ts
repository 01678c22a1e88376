/**
 * The words a hook shows the model for notices. Each notice is framed with
 * where it came from (severity, channel, publisher, id): its body is someone
 * else's text, and the model should weigh it as such. No timestamps, so an
 * unchanged notice reads the same at every turn.
 */
import { CUT_MARKER, cutToBytes, heldBackCount, type NoticeCandidate, type NoticeMoment, type NoticeSelection } from '../core/notices.js';
import { indentBody } from './text.js';

const PROMPT_HEADER = 'notice(s): broadcast context, not mail (nothing to reply to; channel_acknowledge(message_id) silences one for this session)';
const PRE_TOOL_HEADER = 'notice(s) before this tool call (channel_acknowledge(message_id) silences one for this session)';

/** A title or publisher on one line: a line break in it could otherwise open a forged notice. */
function oneLine(text: string): string {
  return text.replace(/\s*[\r\n]+\s*/g, ' ').trim();
}

/** One notice as the model sees it. */
export function renderNotice(notice: NoticeCandidate, maxBodyBytes?: number): string {
  const where = notice.channel === null ? 'global' : `#${notice.channel}`;
  const title = notice.title !== null ? ` · "${oneLine(notice.title)}"` : '';
  const body = maxBodyBytes === undefined ? notice.body : `${cutToBytes(notice.body, maxBodyBytes)}${CUT_MARKER}`;
  return `- [${notice.severity.toUpperCase()}] ${where}${title} · from ${oneLine(notice.source)} · id ${notice.noticeId}: ${indentBody(body)}`;
}

function heldBackLine(selection: NoticeSelection): string | null {
  const count = heldBackCount(selection);
  if (count === 0) return null;
  const parts = (['critical', 'alert', 'info'] as const).filter((severity) => selection.heldBack[severity] > 0).map((severity) => `${selection.heldBack[severity]} ${severity}`);
  return `[agent-bus] ${count} more notice(s) held back by the per-turn caps (${parts.join(', ')}); they are shown as room allows.`;
}

/** The notices block of a hook's output, or null when there is nothing to show. */
export function noticeBlock(selection: NoticeSelection, moment: NoticeMoment): string | null {
  const held = heldBackLine(selection);
  if (selection.shown.length === 0 && held === null) return null;
  const lines: string[] = [];
  if (selection.shown.length > 0) {
    lines.push(`[agent-bus] ${selection.shown.length} ${moment === 'pre-tool' ? PRE_TOOL_HEADER : PROMPT_HEADER}:`);
    for (const notice of selection.shown) lines.push(renderNotice(notice, selection.truncated.get(notice.noticeId)));
  }
  if (held !== null) lines.push(held);
  return lines.join('\n');
}
