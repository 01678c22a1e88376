/**
 * Pasted text is typed text, never commands. With the terminal's bracketed
 * paste on, a paste comes wrapped in ESC[200~ … ESC[201~. Before readline sees
 * it, its line breaks and tabs become marks (so a pasted block stays one line
 * to edit, and goes out as one multi-line message when Enter is pressed) and
 * its other control characters are dropped (so a pasted ^C, ^D or ^U is not a
 * key).
 */
import { Transform, type TransformCallback } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';

/** U+2424 SYMBOL FOR NEWLINE: how a pasted line break shows while editing. */
export const NEWLINE_MARK = '␤';
/** U+2409 SYMBOL FOR HORIZONTAL TABULATION: a pasted tab (a typed one completes). */
export const TAB_MARK = '␉';
export const BRACKETED_PASTE_ON = '\u001b[?2004h';
export const BRACKETED_PASTE_OFF = '\u001b[?2004l';

const START = '\u001b[200~';
const END = '\u001b[201~';
/** A marker split across reads is waited for this long before what came is taken as keys. */
const SPLIT_WAIT_MS = 50;

interface RawModeStream extends NodeJS.ReadableStream {
  isTTY?: boolean;
  setRawMode?(mode: boolean): unknown;
}

/** What a stretch of pasted text becomes. */
function pastedText(text: string): string {
  return (
    text
      .replace(/\r\n|\r|\n/g, NEWLINE_MARK)
      .replace(/\t/g, TAB_MARK)
      // eslint-disable-next-line no-control-regex
      .replace(/[\u0000-\u001f\u007f-\u009f]/g, '')
  );
}

/** readline's input: the terminal's keys, with pastes made safe. */
export class PasteGuard extends Transform {
  readonly isTTY = true;
  private pasting = false;
  /** The end of the last read when it could be the start of a marker split across reads. */
  private carry = '';
  private carryTimer: NodeJS.Timeout | null = null;
  /** A character's bytes can be split across reads. */
  private readonly decoder = new StringDecoder('utf8');

  constructor(private readonly source: RawModeStream) {
    super();
    source.pipe(this);
  }

  setRawMode(mode: boolean): this {
    this.source.setRawMode?.(mode);
    return this;
  }

  /** Stop reading the terminal, so the process can end. */
  detach(): void {
    this.source.unpipe(this);
    this.source.pause();
    this.releaseCarry();
  }

  override _transform(chunk: Buffer | string, _encoding: BufferEncoding, done: TransformCallback): void {
    if (this.carryTimer) clearTimeout(this.carryTimer);
    this.carryTimer = null;
    const text = this.carry + (typeof chunk === 'string' ? chunk : this.decoder.write(chunk));
    this.carry = '';
    let out = '';
    for (let at = 0; ; ) {
      const marker = this.pasting ? END : START;
      const next = text.indexOf(marker, at);
      let piece = text.slice(at, next < 0 ? text.length : next);
      if (next < 0) {
        // The read may have ended inside a marker: keep that part a moment for the next read.
        const split = partialMarker(piece);
        this.carry = piece.slice(piece.length - split);
        piece = piece.slice(0, piece.length - split);
      }
      out += this.pasting ? pastedText(piece) : piece;
      if (next < 0) break;
      this.pasting = !this.pasting;
      at = next + marker.length;
    }
    if (this.carry !== '') {
      // No more came: it was a key (Escape, Alt-[) after all.
      this.carryTimer = setTimeout(() => this.releaseCarry(), SPLIT_WAIT_MS);
      this.carryTimer.unref();
    }
    done(null, out === '' ? undefined : Buffer.from(out));
  }

  override _flush(done: TransformCallback): void {
    if (this.carryTimer) clearTimeout(this.carryTimer);
    const rest = this.carry + this.decoder.end();
    this.carry = '';
    done(null, rest === '' ? undefined : Buffer.from(this.pasting ? pastedText(rest) : rest));
  }

  private releaseCarry(): void {
    if (this.carryTimer) clearTimeout(this.carryTimer);
    this.carryTimer = null;
    if (this.carry === '') return;
    const held = this.pasting ? pastedText(this.carry) : this.carry;
    this.carry = '';
    if (held !== '') this.push(Buffer.from(held));
  }
}

/** How many characters at the end of `text` could begin a paste marker. */
function partialMarker(text: string): number {
  for (let length = Math.min(START.length - 1, text.length); length >= 1; length--) {
    const tail = text.slice(text.length - length);
    if (START.startsWith(tail) || END.startsWith(tail)) return length;
  }
  return 0;
}

/** The message a line stands for: pasted line breaks and tabs back as they were. */
export function restoreMarks(line: string): string {
  return line.split(NEWLINE_MARK).join('\n').split(TAB_MARK).join('\t');
}
