/**
 * Pasted text is typed text, never commands. With the terminal's bracketed
 * paste on, a paste comes wrapped in ESC[200~ … ESC[201~; its line breaks are
 * turned into NEWLINE_MARK before readline sees them, so a pasted block stays
 * one line to edit and goes out as one multi-line message when Enter is
 * pressed, instead of each line being run as it arrives.
 */
import { Transform, type TransformCallback } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';

/** U+2424 SYMBOL FOR NEWLINE: how a pasted line break shows while editing. */
export const NEWLINE_MARK = '␤';
export const BRACKETED_PASTE_ON = '\u001b[?2004h';
export const BRACKETED_PASTE_OFF = '\u001b[?2004l';

const START = '\u001b[200~';
const END = '\u001b[201~';

interface RawModeStream extends NodeJS.ReadableStream {
  isTTY?: boolean;
  setRawMode?(mode: boolean): unknown;
}

/** readline's input: the terminal's keys, with pastes made safe. */
export class PasteGuard extends Transform {
  readonly isTTY = true;
  private pasting = false;
  /** The end of the last chunk when it could be the start of a marker split across reads. */
  private carry = '';
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
  }

  override _transform(chunk: Buffer | string, _encoding: BufferEncoding, done: TransformCallback): void {
    const text = this.carry + (typeof chunk === 'string' ? chunk : this.decoder.write(chunk));
    this.carry = '';
    let out = '';
    for (let at = 0; ; ) {
      const marker = this.pasting ? END : START;
      const next = text.indexOf(marker, at);
      let piece = text.slice(at, next < 0 ? text.length : next);
      if (next < 0) {
        // The read may have ended inside a marker: keep that part for the next one.
        const split = partialMarker(piece, this.pasting);
        this.carry = piece.slice(piece.length - split);
        piece = piece.slice(0, piece.length - split);
      }
      out += this.pasting ? piece.replace(/\r\n|\r|\n/g, NEWLINE_MARK) : piece;
      if (next < 0) break;
      this.pasting = !this.pasting;
      at = next + marker.length;
    }
    done(null, out === '' ? undefined : Buffer.from(out));
  }

  override _flush(done: TransformCallback): void {
    const rest = this.carry + this.decoder.end();
    done(null, rest === '' ? undefined : Buffer.from(rest));
  }
}

/**
 * How many characters at the end of `text` begin a paste marker. Outside a
 * paste a lone ESC is not held back: it is a key of its own, and readline
 * times it out by itself.
 */
function partialMarker(text: string, pasting: boolean): number {
  for (let length = Math.min(START.length - 1, text.length); length >= (pasting ? 1 : 2); length--) {
    const tail = text.slice(text.length - length);
    if (START.startsWith(tail) || END.startsWith(tail)) return length;
  }
  return 0;
}

/** The message a line stands for: pasted line breaks back as real ones. */
export function restoreNewlines(line: string): string {
  return line.split(NEWLINE_MARK).join('\n');
}
