/** Text shapes shared by the CLI's listings: clock times, short ids, one-line previews, wrapping. (Times people read: when.ts.) */
import stringWidth from 'string-width';
import { stampToMillis } from '../model/clock.js';
import { shortId } from '../model/short-id.js';

/** Local wall-clock HH:MM:SS of a stored UTC stamp. */
export function clockTime(stamp: string): string {
  const millis = stampToMillis(stamp);
  if (Number.isNaN(millis)) return '--:--:--';
  const date = new Date(millis);
  const two = (value: number): string => String(value).padStart(2, '0');
  return `${two(date.getHours())}:${two(date.getMinutes())}:${two(date.getSeconds())}`;
}

/** An id as listings show it: its short form (model/short-id.ts), which every command takes back. */
export function shortIdText(id: string | null | undefined): string {
  return id ? printable(shortId(id)) : '------------';
}

// Control characters other than tab and newline, including C1: a body could
// otherwise move the cursor, rewrite the screen or set the clipboard. And the
// bidirectional embeddings, overrides and isolates, which can make text read
// differently from what it is.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/** Untrusted text made safe for a terminal: control characters shown as ^X or \uXXXX. */
export function printable(text: string): string {
  return text.replace(CONTROL, (char) => {
    const code = char.charCodeAt(0);
    if (code < 0x20) return `^${String.fromCharCode(code + 64)}`;
    if (code === 0x7f) return '^?';
    return `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/** Untrusted text kept to one line: line breaks become spaces, so it cannot pass for lines of its own. */
export function singleLine(text: string): string {
  return printable(text.replace(/\s*[\r\n]+\s*/g, ' ').trim());
}

/** A body on one line: newlines become spaces, cut to `max` code points with an ellipsis. */
export function oneLine(text: string, max = 72): string {
  const flat = singleLine(text);
  const chars = Array.from(flat);
  return chars.length <= max ? flat : `${chars.slice(0, max - 1).join('')}…`;
}

/** Printable ASCII, a column a character: most names and bodies, counted without string-width. */
const PLAIN_ASCII = /^[\x20-\x7e]*$/;

/** Columns a string takes on a terminal: wide (CJK, emoji) characters take two, combining marks none. */
export function displayWidth(text: string): number {
  return PLAIN_ASCII.test(text) ? text.length : stringWidth(text);
}

/** Pad to a width in terminal columns, so columns stay aligned whatever the names hold. */
export function pad(text: string, width: number): string {
  const length = displayWidth(text);
  return length >= width ? text : text + ' '.repeat(width - length);
}

/** Pad a coloured string by the width of its plain text. */
export function padStyled(styled: string, plainText: string, width: number): string {
  const length = displayWidth(plainText);
  return length >= width ? styled : styled + ' '.repeat(width - length);
}

/** The longest start of `text` that fits `width` columns, with … when cut. */
export function fitWidth(text: string, width: number): string {
  if (displayWidth(text) <= width) return text;
  if (width <= 0) return '';
  let kept = '';
  for (const { segment } of new Intl.Segmenter().segment(text)) {
    if (displayWidth(kept + segment) > width - 1) break;
    kept += segment;
  }
  return `${kept}…`;
}

/** Wrap text to `width` columns with an indent, keeping blank lines and never breaking long words. */
export function wrap(text: string, width: number, indent = '    '): string {
  const room = Math.max(20, width - indent.length);
  const out: string[] = [];
  for (const paragraph of printable(text.replace(/\r\n/g, '\n')).split('\n')) {
    if (paragraph.trim() === '') {
      out.push('');
      continue;
    }
    let line = '';
    for (const word of paragraph.split(/\s+/).filter((part) => part !== '')) {
      if (line === '') line = word;
      else if (Array.from(line).length + 1 + Array.from(word).length <= room) line += ` ${word}`;
      else {
        out.push(indent + line);
        line = word;
      }
    }
    if (line !== '') out.push(indent + line);
  }
  return out.join('\n');
}

export function terminalWidth(stream: { columns?: number }): number {
  return stream.columns && stream.columns > 0 ? stream.columns : 80;
}
