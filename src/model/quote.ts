/**
 * User input as a message quotes it: whatever was given (a 100 KB argument, a
 * line break, a terminal escape), an error stays one short line. At most
 * QUOTE_LIMIT characters are kept, then '…'; control and bidirectional
 * characters are shown as escapes, so nothing in the input can pass for text
 * of the message's own.
 */
export const QUOTE_LIMIT = 200;

// eslint-disable-next-line no-control-regex
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

export function quoted(given: unknown): string {
  const input = typeof given === 'string' ? given : String(given);
  // Each code point is at most two UTF-16 units: past twice the limit there are more than the limit.
  const head = [...input.slice(0, QUOTE_LIMIT * 2)];
  const kept = head.length > QUOTE_LIMIT || input.length > QUOTE_LIMIT * 2 ? `${head.slice(0, QUOTE_LIMIT).join('')}…` : input;
  return `'${kept.replace(UNPRINTABLE, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`)}'`;
}

/** The most an error message may be: what quotes it keeps short, and this keeps any other text in bounds. */
export const MESSAGE_LIMIT = 1_000;

/** An error's message as one line of at most MESSAGE_LIMIT characters. */
export function errorLine(message: string): string {
  const line = message.replace(/\s*[\r\n]+\s*/g, ' ');
  return line.length > MESSAGE_LIMIT ? `${line.slice(0, MESSAGE_LIMIT)}…` : line;
}
