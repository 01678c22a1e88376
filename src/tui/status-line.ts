/**
 * The chat's bottom line: identity and target, always on the terminal's last
 * row. That row is left out of the scroll region, so mail printed above the
 * prompt scrolls past it. readline erases to the end of the screen each time
 * it redraws the input, so the line is painted again right after every erase:
 * readline writes through `output`, which forwards to the terminal and adds
 * the repaint behind each erase it sees.
 */
import { Writable } from 'node:stream';
import { displayWidth, fitWidth } from '../render/format.js';

export interface Terminal extends NodeJS.WritableStream {
  columns?: number;
  rows?: number;
  isTTY?: boolean;
  on(event: 'resize', listener: () => void): this;
  removeListener(event: 'resize', listener: () => void): this;
}

const ESC = '\u001b';
const SAVE = `${ESC}7`;
const RESTORE = `${ESC}8`;
/** Erase below (readline's redraw) or erase all (/clear) both take the bottom row with them. */
const ERASES = [`${ESC}[0J`, `${ESC}[J`, `${ESC}[2J`];
/** Fewer rows than this leaves no room for a line of its own. */
const MIN_ROWS = 4;

/** A readline output that keeps a status line on the terminal's last row. */
export class StatusLine extends Writable {
  private rows = 0;
  /** Stopped as a job: the terminal is someone else's until `resume`. */
  private suspended = false;
  private readonly onResize = (): void => {
    if (this.suspended) return; // The size is read again at `resume`.
    this.reserve();
    this.emit('resize');
  };

  /** `render(columns)` gives the line's text for a terminal that wide; it must fit. */
  constructor(private readonly terminal: Terminal, private readonly render: (columns: number) => string) {
    super({ decodeStrings: false });
    terminal.on('resize', this.onResize);
    this.reserve();
  }

  get columns(): number | undefined {
    return this.terminal.columns;
  }

  get isTTY(): boolean {
    return true;
  }

  /** Whether the terminal has room for the line (it is tall enough and says how tall). */
  get active(): boolean {
    return this.rows >= MIN_ROWS;
  }

  override _write(chunk: string | Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    const text = String(chunk);
    this.terminal.write(this.active && ERASES.some((erase) => text.includes(erase)) ? text + this.painting() : text);
    done();
  }

  /** Paint the line now (after a change to what it shows). */
  paint(): void {
    if (this.active) this.terminal.write(this.painting());
  }

  /** Give the terminal back its whole height and erase the line, for good. */
  dispose(): void {
    this.terminal.removeListener('resize', this.onResize);
    this.suspend();
  }

  /** Give the terminal back its whole height and erase the line, until `resume` (a stopped job). */
  suspend(): void {
    this.suspended = true;
    if (!this.active) return;
    this.terminal.write(`${SAVE}${ESC}[r${RESTORE}${SAVE}${ESC}[${this.rows};1H${ESC}[2K${RESTORE}`);
    this.rows = 0;
  }

  resume(): void {
    if (!this.suspended) return;
    this.suspended = false;
    this.reserve();
  }

  /**
   * Scroll region = every row but the last. A newline first, then back up: if
   * the cursor sat on the last row the screen scrolls one line to make room,
   * and otherwise the cursor ends where it was. Setting the region homes the
   * cursor, hence the save and restore around it.
   */
  private reserve(): void {
    const wasActive = this.active;
    this.rows = this.terminal.rows ?? 0;
    if (!this.active) {
      if (wasActive) this.terminal.write(`${SAVE}${ESC}[r${RESTORE}`);
      return;
    }
    this.terminal.write(`\n${SAVE}${ESC}[1;${this.rows - 1}r${RESTORE}${ESC}[1A${this.painting()}`);
  }

  private painting(): string {
    return `${SAVE}${ESC}[${this.rows};1H${ESC}[2K${this.render(this.terminal.columns ?? 80)}${RESTORE}`;
  }
}

/**
 * `alex → *   /help · /quit`, right-aligned, never as wide as the terminal
 * (writing the last column of the last row can scroll some terminals). The
 * hint goes first when room is short, then the identity is cut. Widths are in
 * terminal columns: a wide character takes two.
 */
export function statusText(identity: string, columns: number): { text: string; hint: string; padding: number } {
  const room = Math.max(0, columns - 1);
  const hint = '   /help · /quit';
  const width = displayWidth(identity);
  if (width + displayWidth(hint) <= room) return { text: identity, hint, padding: room - width - displayWidth(hint) };
  const text = fitWidth(identity, room);
  return { text, hint: '', padding: room - displayWidth(text) };
}
